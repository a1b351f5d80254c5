import CHoardSystem
import Foundation

/// Runs blocking work (libarchive, file I/O) on a thread of its own, so it never holds one of the few threads
/// Swift concurrency and the HTTP server share. Not on `DispatchQueue.global()`: on Linux that is the very pool
/// Swift concurrency runs on (one thread per core), so an import parked there would hold one of them.
///
/// With `niceness`, the thread runs at that lower CPU priority (and so do the threads it starts, which inherit it): a
/// server's import yields the processor to its serving.
func offloaded<T: Sendable>(niceness: Int32? = nil, _ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            if let niceness { _ = hoard_lower_thread_priority(niceness) }
            continuation.resume(with: Result { try work() })
        }.start()
    }
}
