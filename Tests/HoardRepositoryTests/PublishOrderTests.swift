import Foundation
import HoardCatalog
import HoardCore
import HoardStore
import Testing

@testable import HoardRepository

/// The write order of an import's last steps: the catalog rows commit only once the publish has returned, and not at
/// all when it fails.
@Suite("Publish before commit")
struct PublishOrderTests {
    /// A file store whose publish does the real work, then holds on to the end or fails, and notes what the catalog
    /// showed another reader at that moment.
    class WatchedStore: BlobStore, @unchecked Sendable {
        let base: FileBlobStore
        let catalog: Catalog
        let failing: Bool
        private let lock = NSLock()
        private var seen: [[String]] = []

        init(base: FileBlobStore, catalog: Catalog, failing: Bool) {
            self.base = base
            self.catalog = catalog
            self.failing = failing
        }

        /// The pack names the catalog listed at the end of each publish.
        var packsSeenWhilePublishing: [[String]] { lock.withLock { seen } }

        /// A class member, so that the blocking subclass can declare itself one.
        var blockingPublisher: (any BlockingPublisher)? { nil }

        func publish(_ blobs: [StagedBlob]) async throws -> PublishSummary {
            let summary = try await base.publish(blobs)
            // Long enough for a transaction begun with the publish to have written and committed its rows.
            try await Task.sleep(for: .milliseconds(300))
            return try finish(summary)
        }

        /// Notes the packs a reader sees now, then returns `summary` or fails.
        func finish(_ summary: PublishSummary) throws -> PublishSummary {
            let packs = try catalog.packs().map(\.name)
            lock.withLock { seen.append(packs) }
            if failing { throw BlobStoreError(.io, "the test disk refused the publish") }
            return summary
        }

        func makeStagingArea() throws -> StagingArea { try base.makeStagingArea() }
        func info(_ digest: Digest) async throws -> BlobInfo? { try await base.info(digest) }
        func read(_ digest: Digest, range: Range<Int64>?) async throws -> [UInt8]? { try await base.read(digest, range: range) }
        func rehash(_ digest: Digest) async throws -> (digest: Digest, size: Int64)? { try await base.rehash(digest) }
        func touch(_ digest: Digest) async throws { try await base.touch(digest) }
        func delete(_ digest: Digest) async throws { try await base.delete(digest) }
        func allDigests() async throws -> [Digest] { try await base.allDigests() }
        func removeStaleStaging(olderThan age: TimeInterval) async throws -> Int {
            try await base.removeStaleStaging(olderThan: age)
        }
    }

    /// The same, publishing on the caller's thread: the importer then writes the catalog rows during the publish.
    final class WatchedBlockingStore: WatchedStore, BlockingPublisher, @unchecked Sendable {
        private let lock = NSLock()
        private var asyncPublishes = 0

        /// How often the importer used the suspending publish instead (it should not).
        var suspendingPublishes: Int { lock.withLock { asyncPublishes } }

        override var blockingPublisher: (any BlockingPublisher)? { self }

        func publishBlocking(_ blobs: [StagedBlob]) throws -> PublishSummary {
            let summary = try base.publishBlocking(blobs)
            // Long enough for the rows written meanwhile to have been committed, were the commit not held back.
            Thread.sleep(forTimeInterval: 0.3)
            return try finish(summary)
        }

        override func publish(_ blobs: [StagedBlob]) async throws -> PublishSummary {
            lock.withLock { asyncPublishes += 1 }
            return try await super.publish(blobs)
        }
    }

    static func importer(_ test: TestHoard, failing: Bool, blocking: Bool) throws -> (Importer, WatchedStore) {
        let base = try FileBlobStore(root: test.hoard.directory.blobsPath)
        let store = blocking
            ? WatchedBlockingStore(base: base, catalog: test.hoard.catalog, failing: failing)
            : WatchedStore(base: base, catalog: test.hoard.catalog, failing: failing)
        return (Hoard(directory: test.hoard.directory, store: store, catalog: test.hoard.catalog).importer, store)
    }

    @Test(arguments: [false, true])
    func theCatalogCommitsOnlyAfterThePublishReturns(blocking: Bool) async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let (importer, store) = try Self.importer(test, failing: false, blocking: blocking)
        let report = try await importer.importPack(at: Fixtures.pack("dungeon-basics.zip"))
        #expect(report.outcome == .imported)
        // While the publish was finishing, a reader saw no pack; once the import returned, the pack is there. A
        // blocking store publishes twice: the pictures, and the descriptors and manifest staged meanwhile.
        #expect(store.packsSeenWhilePublishing == (blocking ? [[], []] : [[]]))
        #expect(try test.hoard.catalog.packs().map(\.name) == ["dungeon-basics"])
        #expect(try await test.hoard.verify().isHealthy)
        #expect((store as? WatchedBlockingStore)?.suspendingPublishes ?? 0 == 0)
    }

    @Test(arguments: [false, true])
    func aFailedPublishRecordsNothing(blocking: Bool) async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let (importer, store) = try Self.importer(test, failing: true, blocking: blocking)
        let error = await #expect(throws: ImportError.self) {
            try await importer.importPack(at: Fixtures.pack("dungeon-basics.zip"))
        }
        #expect(error?.problems.map(\.code) == [.storageFailure])
        #expect(error?.problems.first?.message.contains("the test disk refused the publish") == true)
        #expect(store.packsSeenWhilePublishing == (blocking ? [[], []] : [[]]))
        #expect(try test.hoard.catalog.packs().isEmpty)
        #expect(try test.hoard.catalog.blobs().isEmpty)
        #expect((store as? WatchedBlockingStore)?.suspendingPublishes ?? 0 == 0)
    }

    @Test func concurrentMapKeepsTheOrderAndRethrowsAfterEveryCall() throws {
        let squares = try concurrentMap(1000) { index in
            // Uneven work, so calls finish out of order.
            if index.isMultiple(of: 7) { usleep(50) }
            return index * index
        }
        #expect(squares == (0..<1000).map { $0 * $0 })

        struct Odd: Error { var index: Int }
        let calls = Calls()
        let error = #expect(throws: Odd.self) {
            _ = try concurrentMap(64) { index in
                calls.add()
                if index == 5 { throw Odd(index: index) }
                return index
            }
        }
        #expect(error?.index == 5)
        #expect(calls.count == 64)
        #expect(try concurrentMap(0) { $0 }.isEmpty)
        #expect(try concurrentMap(1) { $0 + 1 } == [1])
    }

    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var made = 0
        func add() { lock.withLock { made += 1 } }
        var count: Int { lock.withLock { made } }
    }
}
