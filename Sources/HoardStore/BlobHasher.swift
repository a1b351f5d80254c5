import Crypto
import HoardCore

/// SHA-256 over bytes fed in pieces: the one place Hoard computes a digest.
public struct BlobHasher: Sendable {
    private var sha = SHA256()

    /// A hasher with nothing fed yet.
    public init() {}

    /// Feeds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        sha.update(bufferPointer: bytes)
    }

    /// The digest of everything fed.
    public func finalize() -> HoardCore.Digest {
        sha.finalize().withUnsafeBytes { raw in
            func word(_ index: Int) -> UInt64 { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
            return HoardCore.Digest(words: (word(0), word(1), word(2), word(3)))
        }
    }

    /// The digest of bytes held in memory.
    public static func digest(of bytes: [UInt8]) -> HoardCore.Digest {
        var hasher = BlobHasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}
