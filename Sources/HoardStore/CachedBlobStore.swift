import Foundation
import HoardCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A remote store (S3) with a bounded local cache of verified blobs, which is what lets a replica over object storage
/// answer hot blobs from its own disk, through the server's file fast path, as a replica on local files does.
///
/// - The backing store is the truth: publish, info, rehash, touch, delete and listing go to it.
/// - A read that misses fetches the whole blob in one request, checks that it hashes to its digest, and keeps it as a
///   file in the cache folder (a ``FileBlobStore``, so a file appears whole or not at all) when it is at most
///   ``largestCached`` bytes. A range of a larger blob is read from the backing store each time. Bytes that do not hash
///   to their name are never kept or returned: the read fails with `BlobStoreFailure.corrupt`.
/// - ``localPath(of:)`` answers for cached blobs only; each read or path asked for makes the blob recently used.
/// - Past ``budget`` bytes, the least recently used blobs are removed down to nine tenths of it. A file being served
///   when it is removed stays readable through its open descriptor.
/// - The cache survives restarts: its files are counted at start, oldest modification first.
public final class CachedBlobStore: BlobStore, @unchecked Sendable {
    /// The store that holds every blob.
    public let backing: any BlobStore
    /// The cache folder's store.
    public let cache: FileBlobStore
    /// How many bytes the cache may hold.
    public let budget: Int64
    /// Blobs larger than this are not cached (an eighth of the budget).
    public var largestCached: Int64 { budget / 8 }

    private let lock = NSLock()
    /// Cached blobs: size and the tick of their last use.
    private var entries: [Digest: (size: Int64, used: UInt64)] = [:]
    private var clock: UInt64 = 0
    private var bytes: Int64 = 0

    /// A cache of at most `budget` bytes in `cacheRoot` in front of `backing`.
    public init(backing: any BlobStore, cacheRoot: String, budget: Int64) throws {
        self.backing = backing
        self.cache = try FileBlobStore(root: cacheRoot)
        self.budget = budget
        var found: [(digest: Digest, size: Int64, modified: Date)] = []
        for digest in try cache.listDigests() {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: cache.path(of: digest)),
                  let size = (attributes[.size] as? NSNumber)?.int64Value, let modified = attributes[.modificationDate] as? Date
            else { continue }
            found.append((digest, size, modified))
        }
        for entry in found.sorted(by: { $0.modified < $1.modified }) {
            clock += 1
            entries[entry.digest] = (entry.size, clock)
            bytes += entry.size
        }
    }

    /// Bytes the cache holds now.
    public var cachedBytes: Int64 { lock.withLock { bytes } }

    /// Whether a blob is in the cache.
    public func isCached(_ digest: Digest) -> Bool { lock.withLock { entries[digest] != nil } }

    public func makeStagingArea() throws -> StagingArea { try backing.makeStagingArea() }

    public func publish(_ blobs: [StagedBlob]) async throws -> PublishSummary { try await backing.publish(blobs) }

    public func info(_ digest: Digest) async throws -> BlobInfo? { try await backing.info(digest) }

    public func read(_ digest: Digest, range: Range<Int64>?) async throws -> [UInt8]? {
        if markUsed(digest), let bytes = try await cache.read(digest, range: range) { return bytes }
        if range != nil {
            guard let info = try await backing.info(digest) else { return nil }
            if info.size > largestCached { return try await backing.read(digest, range: range) }
        }
        guard let whole = try await backing.read(digest, range: nil) else { return nil }
        guard BlobHasher.digest(of: whole) == digest else {
            throw BlobStoreError(.corrupt, "the backing store's bytes for \(digest) do not hash to it; run hoard verify")
        }
        if Int64(whole.count) <= largestCached { try keep(whole) }
        return whole.clamped(to: range)
    }

    public func rehash(_ digest: Digest) async throws -> (digest: Digest, size: Int64)? { try await backing.rehash(digest) }

    public func touch(_ digest: Digest) async throws { try await backing.touch(digest) }

    public func delete(_ digest: Digest) async throws {
        try await backing.delete(digest)
        try await forget(digest)
    }

    public func allDigests() async throws -> [Digest] { try await backing.allDigests() }

    public func removeStaleStaging(olderThan age: TimeInterval) async throws -> Int {
        try await backing.removeStaleStaging(olderThan: age)
    }

    /// The cached file, when the blob is cached.
    public func localPath(of digest: Digest) -> String? {
        markUsed(digest) ? cache.path(of: digest) : nil
    }

    /// Marks a cached blob as just used; false when it is not cached.
    private func markUsed(_ digest: Digest) -> Bool {
        lock.withLock {
            guard entries[digest] != nil else { return false }
            clock += 1
            entries[digest]?.used = clock
            return true
        }
    }

    /// Puts verified bytes in the cache, then evicts past the budget.
    private func keep(_ whole: [UInt8]) throws {
        let area = try cache.makeStagingArea()
        defer { area.discard() }
        let staged = try area.stage(whole)
        _ = try cache.publishBlocking([staged])
        let evicted: [Digest] = lock.withLock {
            clock += 1
            if entries[staged.digest] == nil { bytes += staged.size }
            entries[staged.digest] = (staged.size, clock)
            guard bytes > budget else { return [] }
            var gone: [Digest] = []
            for (digest, entry) in entries.sorted(by: { $0.value.used < $1.value.used }) where bytes > budget / 10 * 9 {
                guard digest != staged.digest else { continue }
                entries[digest] = nil
                bytes -= entry.size
                gone.append(digest)
            }
            return gone
        }
        for digest in evicted { unlink(cache.path(of: digest)) }
    }

    private func forget(_ digest: Digest) async throws {
        lock.withLock {
            if let known = entries.removeValue(forKey: digest) { bytes -= known.size }
        }
        try await cache.delete(digest)
    }
}
