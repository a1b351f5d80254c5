import Dispatch
import Foundation

/// Calls `transform` with every index in `0..<count`, spread over every core, and returns the results in index order.
/// Every call runs even when one throws; the first error thrown is then rethrown.
func concurrentMap<T: Sendable>(_ count: Int, _ transform: @Sendable (Int) throws -> T) throws -> [T] {
    guard count > 1 else { return try (0..<count).map(transform) }
    let slots = Slots<T>(count: count)
    DispatchQueue.concurrentPerform(iterations: count) { index in
        do {
            slots.results[index] = try transform(index)
        } catch {
            slots.keep(error)
        }
    }
    if let error = slots.error { throw error }
    // Every slot is filled when no call threw.
    return slots.results.compactMap { $0 }
}

/// The results of a ``concurrentMap(_:_:)``, each slot written by one call only, and its first error.
private final class Slots<T>: @unchecked Sendable {
    let results: UnsafeMutableBufferPointer<T?>
    private let lock = NSLock()
    private var first: (any Error)?

    init(count: Int) {
        results = .allocate(capacity: count)
        results.initialize(repeating: nil)
    }

    deinit {
        results.deinitialize()
        results.deallocate()
    }

    func keep(_ error: any Error) {
        lock.withLock { if first == nil { first = error } }
    }

    var error: (any Error)? { lock.withLock { first } }
}
