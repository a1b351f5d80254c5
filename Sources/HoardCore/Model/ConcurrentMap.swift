import Dispatch
import Foundation

/// Calls `transform` with every index in `0..<count`, spread over one thread per core, and returns the results in
/// index order. Every call runs even when one throws; the first error thrown is then rethrown.
///
/// The calling thread works too; the others are threads of their own, never `DispatchQueue.concurrentPerform`: on
/// Linux that runs on the pool Swift concurrency shares with the HTTP server, and many imports at once filled it with
/// file work (the server's own tasks then waited a minute).
public func concurrentMap<T: Sendable>(_ count: Int, _ transform: @escaping @Sendable (Int) throws -> T) throws -> [T] {
    guard count > 1 else { return try (0..<count).map(transform) }
    let slots = Slots<T>(count: count)
    let helpers = min(ProcessInfo.processInfo.activeProcessorCount, count) - 1
    let finished = DispatchGroup()
    for _ in 0..<helpers {
        finished.enter()
        Thread {
            slots.work(transform)
            finished.leave()
        }.start()
    }
    slots.work(transform)
    finished.wait()
    if let error = slots.error { throw error }
    // Every slot is filled when no call threw.
    return slots.results.compactMap { $0 }
}

/// The results of a ``concurrentMap(_:_:)``, each slot written by one call only, the next index to take, and the
/// first error.
private final class Slots<T>: @unchecked Sendable {
    let results: UnsafeMutableBufferPointer<T?>
    private let lock = NSLock()
    private var next = 0
    private var first: (any Error)?

    init(count: Int) {
        results = .allocate(capacity: count)
        results.initialize(repeating: nil)
    }

    deinit {
        results.deinitialize()
        results.deallocate()
    }

    /// Takes indices until none is left.
    func work(_ transform: (Int) throws -> T) {
        while true {
            let index: Int? = lock.withLock {
                guard next < results.count else { return nil }
                defer { next += 1 }
                return next
            }
            guard let index else { return }
            do {
                results[index] = try transform(index)
            } catch {
                lock.withLock { if first == nil { first = error } }
            }
        }
    }

    var error: (any Error)? { lock.withLock { first } }
}
