import Crypto
import Foundation
import HoardCore

/// SHA-256 the way the server computes digests, incrementally or at once.
struct BlobHashing {
    private var hasher = SHA256()
    /// Bytes hashed so far.
    private(set) var count: Int64 = 0

    mutating func update(_ bytes: some DataProtocol) {
        for region in bytes.regions { region.withUnsafeBytes { hasher.update(bufferPointer: $0) } }
        count += Int64(bytes.count)
    }

    func finalize() -> HoardCore.Digest {
        // SHA-256 always gives 32 bytes, so the initializer cannot fail.
        HoardCore.Digest(bytes: Array(hasher.finalize()))!
    }

    /// The digest of bytes in memory.
    static func digest(of bytes: some DataProtocol) -> HoardCore.Digest {
        var hashing = BlobHashing()
        hashing.update(bytes)
        return hashing.finalize()
    }

    /// Hashes a file from its start in 1 MiB reads; returns the digest and the size.
    static func digest(ofFileAt url: URL) throws -> (digest: HoardCore.Digest, size: Int64) {
        var hashing = BlobHashing()
        try hashing.update(fileAt: url)
        return (hashing.finalize(), hashing.count)
    }

    /// Feeds a whole file into the hash.
    mutating func update(fileAt url: URL) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { update(chunk) }
    }
}
