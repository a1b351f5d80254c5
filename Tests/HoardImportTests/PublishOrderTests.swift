import Foundation
import HoardCatalog
import HoardCore
import HoardStore
import Testing

@testable import HoardImport

/// The write order of an import's last steps: the catalog rows commit only once the publish has returned, and not at
/// all when it fails.
@Suite("Publish before commit")
struct PublishOrderTests {
    /// A file store whose publish does the real work, then holds on to the end or fails, and notes what the catalog
    /// showed another reader at that moment.
    final class WatchedStore: BlobStore, @unchecked Sendable {
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

        func publish(_ blobs: [StagedBlob]) async throws -> PublishSummary {
            let summary = try await base.publish(blobs)
            // Long enough for a transaction begun with the publish to have written and committed its rows.
            try await Task.sleep(for: .milliseconds(300))
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

    static func importer(_ test: TestHoard, failing: Bool) throws -> (Importer, WatchedStore) {
        let store = WatchedStore(base: try FileBlobStore(root: test.hoard.directory.blobsPath), catalog: test.hoard.catalog, failing: failing)
        return (Importer(store: store, catalog: test.hoard.catalog), store)
    }

    @Test func theCatalogCommitsOnlyAfterThePublishReturns() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let (importer, store) = try Self.importer(test, failing: false)
        let report = try await importer.importPack(at: Fixtures.pack("dungeon-basics.zip"))
        #expect(report.outcome == .imported)
        // While the publish was finishing, a reader saw no pack; once the import returned, the pack is there.
        #expect(store.packsSeenWhilePublishing == [[]])
        #expect(try test.hoard.catalog.packs().map(\.name) == ["dungeon-basics"])
        #expect(try await test.hoard.verify().isHealthy)
    }

    @Test func aFailedPublishRecordsNothing() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let (importer, store) = try Self.importer(test, failing: true)
        let error = await #expect(throws: ImportError.self) {
            try await importer.importPack(at: Fixtures.pack("dungeon-basics.zip"))
        }
        #expect(error?.problems.map(\.code) == [.storageFailure])
        #expect(error?.problems.first?.message.contains("the test disk refused the publish") == true)
        #expect(store.packsSeenWhilePublishing == [[]])
        #expect(try test.hoard.catalog.packs().isEmpty)
        #expect(try test.hoard.catalog.blobs().isEmpty)
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
