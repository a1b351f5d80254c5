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
        var words: [UInt8] = []
        words.reserveCapacity(32)
        words.append(contentsOf: sha.finalize())
        guard let digest = HoardCore.Digest(bytes: words) else { preconditionFailure("SHA-256 yields 32 bytes") }
        return digest
    }

    /// The digest of bytes held in memory.
    public static func digest(of bytes: [UInt8]) -> HoardCore.Digest {
        var hasher = BlobHasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}
