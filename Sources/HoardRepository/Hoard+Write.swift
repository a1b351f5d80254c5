import Foundation
import HoardCatalog
import HoardCore
import HoardStore

/// The one write path. Every writer (an import, a blob PUT, a picture upload, a map stored for a session or saved, a
/// folded table) ends in ``Hoard/publishAndRecord(_:thenStaging:in:published:record:)``: one blob through
/// ``Hoard/write(_:check:record:)``, which stages and verifies it first, an import's many blobs staged and checked by
/// the importer. The write order of DESIGN.md:
///
/// 1. stage: the bytes go to a staging area of the store, hashed as they are written;
/// 2. verify: the writer's checks (the digest it expected, a quota, a picture's type) may still refuse, and nothing
///    is stored;
/// 3. lock: the data directory's shared lock, so garbage collection cannot run between the next two steps;
/// 4. publish: the store makes the blobs durable and visible;
/// 5. record: the catalog transaction that references them commits, never before the publish has returned;
/// 6. unlock, and discard the staging area.
extension Hoard {
    /// Stages, verifies, publishes and records one blob. `check` may refuse it (throwing) before anything is stored;
    /// `record` runs once it is published, under the shared lock, and what it returns is returned.
    public func write<Recorded: Sendable>(
        _ source: BlobSource, check: (IncomingBlob) throws -> Void = { _ in }, record: (IncomingBlob) async throws -> Recorded
    ) async throws -> Recorded {
        let area = try store.makeStagingArea()
        defer { area.discard() }
        let incoming: IncomingBlob
        switch source {
        case .bytes(let bytes, let keepingPrefix):
            incoming = IncomingBlob(staged: try area.stage(bytes), prefix: Array(bytes.prefix(keepingPrefix)))
        case .stream(let keepingPrefix, let pump):
            let writer = try area.makeWriter(keepingPrefix: keepingPrefix)
            try await pump(BlobSink(writer: writer))
            incoming = IncomingBlob(staged: try writer.finish(), prefix: writer.prefix)
        }
        try check(incoming)
        return try await withoutActuallyEscaping(record) { record in
            try await publishAndRecord([incoming.staged], in: area, record: .afterPublish { try await record(incoming) }).recorded
        }
    }

    /// When the rows are written.
    enum Recording<Recorded> {
        /// Once the publish has returned, in the writer's task.
        case afterPublish(() async throws -> Recorded)
        /// While the publish runs, when the store publishes on the calling thread (else after it), on a thread of its
        /// own: the closure writes the rows and must commit only after calling the barrier it is given, which returns
        /// once every blob is published and throws when a publish failed (the transaction then rolls back).
        case alongsidePublish(@Sendable (_ afterPublish: () throws -> Void) throws -> Recorded)
    }

    /// Steps 3 to 6 for blobs already staged in `area` (an import's pictures) and for those `thenStaging` stages
    /// meanwhile (its descriptors and manifest); `record` writes the rows (``Recording``). `published` is called when
    /// the publish is done and the commit is next.
    ///
    /// With a store whose publish works on the calling thread (``BlockingPublisher``, the local file system) three
    /// threads of their own run at once: one publishes the staged pictures, one writes the rows and then waits,
    /// inside the transaction, for both publishes, and meanwhile the rest is staged and then published on a third.
    /// None is a Swift-concurrency thread: the transaction holds the catalog's writer while it waits, and the
    /// publishes it waits for must not queue behind tasks that wait for that writer. With any other store, or rows
    /// to be written ``Recording/afterPublish(_:)``, the rows are written after the publish.
    func publishAndRecord<Recorded: Sendable>(
        _ ready: [StagedBlob], thenStaging later: @escaping @Sendable () throws -> [StagedBlob] = { [] }, in area: StagingArea,
        published: () -> Void = {}, record: Recording<Recorded>
    ) async throws -> (recorded: Recorded, summary: PublishSummary) {
        try await directory.withLock(exclusive: false) {
            guard let store = store.blockingPublisher, case .alongsidePublish(let record) = record else {
                let staged = try await offloaded(later)
                let summary = try await store.publish(ready + staged)
                // Many staged names (an import's) are removed in the background; one blob's goes with its area.
                if ready.count + staged.count > 1 { area.removeInBackground(ready + staged) }
                published()
                switch record {
                case .afterPublish(let record): return (try await record(), summary)
                case .alongsidePublish(let record): return (try await offloaded { try record({}) }, summary)
                }
            }
            let readyPublished = PublishGate(), laterPublished = PublishGate()
            Thread { readyPublished.open(Result { try store.publishBlocking(ready) }) }.start()
            let recording = Task {
                try await offloaded {
                    try record {
                        _ = try readyPublished.wait()
                        _ = try laterPublished.wait()
                    }
                }
            }
            do {
                let staged: [StagedBlob]
                do {
                    staged = try await offloaded(later)
                } catch {
                    laterPublished.open(.failure(error))
                    throw error
                }
                Thread { laterPublished.open(Result { try store.publishBlocking(staged) }) }.start()
                let first = try await readyPublished.value
                area.removeInBackground(ready)
                let second = try await laterPublished.value
                area.removeInBackground(staged)
                published()
                return (try await recording.value, first.merged(with: second))
            } catch {
                // Both publishes have ended, and the transaction has rolled back, before the staging area may go.
                _ = await readyPublished.result
                _ = await laterPublished.result
                _ = await recording.result
                throw error
            }
        }
    }
}

/// Where a writer's bytes come from.
public enum BlobSource {
    /// Bytes in memory; the first `keepingPrefix` of them are the incoming blob's ``IncomingBlob/prefix``.
    case bytes([UInt8], keepingPrefix: Int = 0)
    /// A body that arrives in pieces: `pump` hands each to the sink as it comes (and may throw to stop, e.g. when the
    /// body passes a limit). The first `keepingPrefix` bytes are kept in memory.
    case stream(keepingPrefix: Int, pump: (BlobSink) async throws -> Void)
}

/// Takes a streamed body's pieces into staging, hashing them.
public struct BlobSink {
    fileprivate let writer: BlobWriter

    /// Appends a piece.
    public func write(_ bytes: UnsafeRawBufferPointer) throws { try writer.write(bytes) }
}

/// A blob staged on its way into the store: hashed, not yet published.
public struct IncomingBlob: Sendable {
    fileprivate let staged: StagedBlob
    /// The first bytes, as many as the source asked to keep: enough to tell a picture's type.
    public let prefix: [UInt8]
    /// The digest of its bytes.
    public var digest: Digest { staged.digest }
    /// Its size in bytes.
    public var size: Int64 { staged.size }
}

/// The result of a publish running on its own thread, awaited by the catalog transaction (blocking) and by the writer
/// (suspending). The first `open` settles it; later ones are ignored.
private final class PublishGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var settled: Result<PublishSummary, any Error>?
    private var waiters: [CheckedContinuation<Result<PublishSummary, any Error>, Never>] = []

    /// Settles the gate; every waiter, present and future, gets `result`.
    func open(_ result: Result<PublishSummary, any Error>) {
        condition.lock()
        guard settled == nil else {
            condition.unlock()
            return
        }
        settled = result
        let waiting = waiters
        waiters = []
        condition.broadcast()
        condition.unlock()
        for waiter in waiting { waiter.resume(returning: result) }
    }

    /// Blocks the calling thread until the gate opens.
    func wait() throws -> PublishSummary {
        condition.lock()
        defer { condition.unlock() }
        while settled == nil { condition.wait() }
        return try settled!.get()
    }

    /// Suspends until the gate opens.
    var result: Result<PublishSummary, any Error> {
        get async {
            await withCheckedContinuation { continuation in
                condition.lock()
                if let settled {
                    condition.unlock()
                    continuation.resume(returning: settled)
                } else {
                    waiters.append(continuation)
                    condition.unlock()
                }
            }
        }
    }

    /// Suspends until the gate opens; throws what the publish threw.
    var value: PublishSummary {
        get async throws { try await result.get() }
    }
}
