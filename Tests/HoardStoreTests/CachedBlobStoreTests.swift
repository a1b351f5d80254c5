import BlobStoreConformance
import Foundation
import HoardCore
import Testing

@testable import HoardStore

/// The local cache a replica keeps in front of object storage: verified bytes only, within its budget, least recently
/// used out first, and what it holds survives a restart.
@Suite("Cached blob store")
struct CachedBlobStoreTests {
    /// A memory store that counts whole reads, to tell a cache hit from a fetch.
    final class CountingStore: BlobStore, @unchecked Sendable {
        let base = MemoryBlobStore()
        private let lock = NSLock()
        private var count = 0
        var reads: Int { lock.withLock { count } }

        func makeStagingArea() throws -> StagingArea { try base.makeStagingArea() }
        func publish(_ blobs: [StagedBlob]) async throws -> PublishSummary { try await base.publish(blobs) }
        func info(_ digest: Digest) async throws -> BlobInfo? { try await base.info(digest) }
        func read(_ digest: Digest, range: Range<Int64>?) async throws -> [UInt8]? {
            lock.withLock { count += 1 }
            return try await base.read(digest, range: range)
        }
        func rehash(_ digest: Digest) async throws -> (digest: Digest, size: Int64)? { try await base.rehash(digest) }
        func touch(_ digest: Digest) async throws { try await base.touch(digest) }
        func delete(_ digest: Digest) async throws { try await base.delete(digest) }
        func allDigests() async throws -> [Digest] { try await base.allDigests() }
        func removeStaleStaging(olderThan age: TimeInterval) async throws -> Int { try await base.removeStaleStaging(olderThan: age) }
    }

    static func publish(_ contents: [[UInt8]], into store: any BlobStore) async throws -> [Digest] {
        let area = try store.makeStagingArea()
        defer { area.discard() }
        let staged = try contents.map { try area.stage($0) }
        _ = try await store.publish(staged)
        return staged.map(\.digest)
    }

    @Test func aMissIsFetchedOnceVerifiedAndThenServedFromAFile() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let backing = CountingStore()
        let store = try CachedBlobStore(backing: backing, cacheRoot: root, budget: 1 << 20)
        let bytes = pseudoRandomBytes(count: 50_000, seed: 7)
        let digest = try await Self.publish([bytes], into: store)[0]
        #expect(store.localPath(of: digest) == nil, "published through the cache, not kept by it")
        #expect(try await store.read(digest, range: 10..<20) == Array(bytes[10..<20]))
        #expect(backing.reads == 1)
        let path = try #require(store.localPath(of: digest))
        #expect(FileManager.default.contents(atPath: path) == Data(bytes))
        #expect(try await store.read(digest, range: nil) == bytes)
        #expect(backing.reads == 1, "the second read is the cache's")
        #expect(store.cachedBytes == 50_000)
    }

    @Test func pastItsBudgetTheLeastRecentlyUsedGoFirst() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try CachedBlobStore(backing: MemoryBlobStore(), cacheRoot: root, budget: 100_000)
        let contents = (0..<11).map { pseudoRandomBytes(count: 10_000, seed: UInt64($0)) }
        let digests = try await Self.publish(contents, into: store)
        for digest in digests[0..<10] { _ = try await store.read(digest, range: nil) }
        #expect(store.cachedBytes == 100_000)
        _ = store.localPath(of: digests[0])  // the oldest is used again
        _ = try await store.read(digests[10], range: nil)
        // 110,000 bytes: down to 90,000, the least recently used first (the second and third blobs read).
        #expect(store.cachedBytes == 90_000)
        #expect(!store.isCached(digests[1]) && !store.isCached(digests[2]))
        #expect(store.isCached(digests[0]) && store.isCached(digests[10]))
        #expect(Set(try await store.cache.allDigests()) == Set(digests.filter(store.isCached)), "evicted files are removed")
        #expect(try await store.read(digests[1], range: nil) == contents[1], "an evicted blob is fetched again")
    }

    @Test func corruptBytesAreNeitherKeptNorReturnedAndLargeBlobsAreNotCached() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let backing = MemoryBlobStore()
        let store = try CachedBlobStore(backing: backing, cacheRoot: root, budget: 80_000)
        let small = pseudoRandomBytes(count: 1_000, seed: 1), large = pseudoRandomBytes(count: 20_000, seed: 2)
        let digests = try await Self.publish([small, large], into: store)
        backing.corrupt(digests[0], with: Array("not the goblin".utf8))
        await #expect(throws: BlobStoreError.self) { _ = try await store.read(digests[0], range: nil) }
        #expect(!store.isCached(digests[0]) && store.cachedBytes == 0)
        #expect(try await store.read(digests[1], range: 5..<9) == Array(large[5..<9]))
        #expect(!store.isCached(digests[1]), "over an eighth of the budget: read from the backing store each time")
    }

    @Test func whatTheCacheHoldsSurvivesARestartAndADeleteLeavesIt() async throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let backing = CountingStore()
        let contents = (0..<3).map { pseudoRandomBytes(count: 2_000, seed: UInt64(10 + $0)) }
        var digests: [Digest] = []
        do {
            let store = try CachedBlobStore(backing: backing, cacheRoot: root, budget: 1 << 20)
            digests = try await Self.publish(contents, into: store)
            for digest in digests { _ = try await store.read(digest, range: nil) }
        }
        let restarted = try CachedBlobStore(backing: backing, cacheRoot: root, budget: 1 << 20)
        #expect(restarted.cachedBytes == 6_000)
        #expect(try await restarted.read(digests[2], range: nil) == contents[2])
        #expect(backing.reads == 3, "served from the files kept before the restart")
        try await restarted.delete(digests[2])
        #expect(restarted.localPath(of: digests[2]) == nil && restarted.cachedBytes == 4_000)
        #expect(try await restarted.read(digests[2], range: nil) == nil)
    }
}
