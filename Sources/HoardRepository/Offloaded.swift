import Foundation

/// Runs blocking work (libarchive, file I/O) on a thread of its own, so it never holds one of the few threads
/// Swift concurrency and the HTTP server share. Not on `DispatchQueue.global()`: on Linux that is the very pool
/// Swift concurrency runs on (one thread per core), so an import parked there would hold one of them.
func offloaded<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
