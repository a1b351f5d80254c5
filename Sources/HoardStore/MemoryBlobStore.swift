import Foundation
import HoardCore

/// Blobs in memory: the in-memory twin of ``FileBlobStore`` for tests. Staging still uses a temporary folder.
public final class MemoryBlobStore: BlobStore, @unchecked Sendable {
    private let lock = NSLock()
    private var blobs: [Digest: (bytes: [UInt8], modified: Date)] = [:]
    private let stagingRoot: String

    /// An empty store.
    public init() {
        stagingRoot = NSTemporaryDirectory() + "hoard-memory-staging-" + UUID().uuidString.lowercased()
    }

    deinit { try? FileManager.default.removeItem(atPath: stagingRoot) }

    public func makeStagingArea() throws -> StagingArea {
        try StagingArea(directory: "\(stagingRoot)/\(UUID().uuidString.lowercased())")
    }

    public func publish(_ staged: [StagedBlob]) async throws -> PublishSummary {
        var loaded: [(StagedBlob, [UInt8])] = []
        for blob in staged {
            guard let data = FileManager.default.contents(atPath: blob.path) else {
                throw BlobStoreError(.io, "the staged file for \(blob.digest) is gone")
            }
            loaded.append((blob, Array(data)))
        }
        return lock.withLock {
            var summary = PublishSummary()
            for (blob, bytes) in loaded {
                if blobs[blob.digest] == nil {
                    summary.newBlobs.insert(blob.digest)
                    summary.newBytes += blob.size
                    blobs[blob.digest] = (bytes, Date())
                } else {
                    blobs[blob.digest]?.modified = Date()
                }
            }
            return summary
        }
    }

    public func info(_ digest: Digest) async throws -> BlobInfo? {
        lock.withLock { blobs[digest].map { BlobInfo(size: Int64($0.bytes.count), modified: $0.modified) } }
    }

    public func read(_ digest: Digest, range: Range<Int64>?) async throws -> [UInt8]? {
        lock.withLock {
            blobs[digest]?.bytes.clamped(to: range)
        }
    }

    public func rehash(_ digest: Digest) async throws -> (digest: Digest, size: Int64)? {
        guard let bytes = try await read(digest, range: nil) else { return nil }
        return (BlobHasher.digest(of: bytes), Int64(bytes.count))
    }

    public func touch(_ digest: Digest) async throws {
        lock.withLock { blobs[digest]?.modified = Date() }
    }

    public func delete(_ digest: Digest) async throws {
        _ = lock.withLock { blobs.removeValue(forKey: digest) }
    }

    public func allDigests() async throws -> [Digest] {
        lock.withLock { Array(blobs.keys) }
    }

    public func removeStaleStaging(olderThan age: TimeInterval) async throws -> Int { 0 }

    /// Replaces a blob's bytes without checking them: lets tests simulate corruption on disk.
    public func corrupt(_ digest: Digest, with bytes: [UInt8]) {
        lock.withLock { blobs[digest]?.bytes = bytes }
    }

    /// Ages a blob: lets tests step past the garbage collector's grace period.
    public func setModified(_ digest: Digest, to date: Date) {
        lock.withLock { blobs[digest]?.modified = date }
    }
}

extension [UInt8] {
    /// The bytes in `range` (all when nil), the range cut to the bytes there are: what a store's ranged read answers.
    func clamped(to range: Range<Int64>?) -> [UInt8] {
        guard let range else { return self }
        let lower = Int(Swift.min(range.lowerBound, Int64(count)))
        let upper = Int(Swift.min(range.upperBound, Int64(count)))
        return Array(self[lower..<upper])
    }
}
