import Crypto
import Foundation

/// SHA-256 over bytes fed in pieces: the one place Hoard computes a digest, on the server and in the client.
public struct BlobHasher: Sendable {
    private var sha = SHA256()
    /// Bytes fed so far.
    public private(set) var count: Int64 = 0

    /// A hasher with nothing fed yet.
    public init() {}

    /// Feeds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        sha.update(bufferPointer: bytes)
        count += Int64(bytes.count)
    }

    /// Feeds bytes held in any contiguous or chunked collection (`[UInt8]`, `Data`, a slice).
    public mutating func update(_ bytes: some DataProtocol) {
        for region in bytes.regions { region.withUnsafeBytes { update($0) } }
    }

    /// The digest of everything fed.
    public func finalize() -> Digest {
        sha.finalize().withUnsafeBytes { raw in
            func word(_ index: Int) -> UInt64 { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
            return Digest(words: (word(0), word(1), word(2), word(3)))
        }
    }

    /// The digest of bytes held in memory.
    public static func digest(of bytes: some DataProtocol) -> Digest {
        var hasher = BlobHasher()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
