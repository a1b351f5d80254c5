import Foundation
import HoardCatalog
import HoardCore
import HoardStore
import Testing

@testable import HoardRepository

/// The one write path (`Hoard.write`): stage, verify, lock, publish, record, in that order, and nothing stored when a
/// check refuses.
@Suite("The write path")
struct WritePathTests {
    static func blob(_ incoming: IncomingBlob) -> BlobRecord {
        BlobRecord(digest: incoming.digest, size: incoming.size, mediaType: "application/octet-stream")
    }

    @Test func theRowIsWrittenOnlyOnceTheBlobIsReadable() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let bytes = Array("a blob for the write path".utf8)
        let readableWhenRecorded = try await test.hoard.write(.bytes(bytes, keepingPrefix: 4)) { incoming in
            #expect(incoming.prefix == Array(bytes.prefix(4)))
            #expect(incoming.digest == BlobHasher.digest(of: bytes) && incoming.size == Int64(bytes.count))
        } record: { incoming in
            let readable = try await test.hoard.read(incoming.digest) == bytes
            let group = try #require(try test.hoard.catalog.createGroup(named: "writers").id)
            try test.hoard.catalog.recordUpload(Self.blob(incoming), groupId: group)
            return readable
        }
        #expect(readableWhenRecorded)
        #expect(try test.hoard.catalog.blobs().map(\.digest) == [BlobHasher.digest(of: bytes)])
        #expect(try await test.hoard.verify().isHealthy)
    }

    @Test func aRefusedBlobStoresNothing() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        struct Refused: Error {}
        var recorded = false
        await #expect(throws: Refused.self) {
            try await test.hoard.write(.bytes(Array("refused".utf8))) { _ in throw Refused() } record: { _ in recorded = true }
        }
        #expect(!recorded)
        #expect(try await test.hoard.store.allDigests().isEmpty)
        #expect(Fixtures.files(under: test.path + "/blobs").allSatisfy { !$0.hasSuffix(".blob") }, "the staging area is gone")
    }

    @Test func aStreamedBodyIsHashedAsItArrivesAndCanBeStoppedMidway() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let pieces = (0..<8).map { n in [UInt8](repeating: UInt8(n), count: 10_000) }
        let digest = try await test.hoard.write(
            .stream(keepingPrefix: 16) { sink in
                for piece in pieces { try piece.withUnsafeBytes { try sink.write($0) } }
            }
        ) { incoming in
            #expect(incoming.prefix == [UInt8](repeating: 0, count: 16))
        } record: { incoming in
            incoming.digest
        }
        #expect(digest == BlobHasher.digest(of: pieces.flatMap { $0 }))
        #expect(try await test.hoard.read(digest, range: 10_000..<10_002) == [1, 1])
        struct TooLong: Error {}
        await #expect(throws: TooLong.self) {
            try await test.hoard.write(.stream(keepingPrefix: 0) { sink in
                try pieces[0].withUnsafeBytes { try sink.write($0) }
                throw TooLong()
            }) { _ in }
        }
        #expect(try await test.hoard.store.allDigests() == [digest])
    }

    @Test func aWriteWaitsForGarbageCollectionsLock() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let order = Order()
        let holding = Task {
            try await test.hoard.directory.withLock(exclusive: true) {
                await order.note("gc holds the lock")
                try await Task.sleep(for: .milliseconds(300))
                await order.note("gc lets go")
            }
        }
        while await order.steps.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        try await test.hoard.write(.bytes(Array("waits".utf8))) { _ in await order.note("published and recording") }
        try await holding.value
        #expect(await order.steps == ["gc holds the lock", "gc lets go", "published and recording"])
    }

    actor Order {
        var steps: [String] = []
        func note(_ step: String) { steps.append(step) }
    }
}
