import Foundation
import HoardCore

extension BlobHasher {
    /// Hashes a file from its start in 1 MiB reads; returns the digest and the size.
    static func digest(ofFileAt url: URL) throws -> (digest: HoardCore.Digest, size: Int64) {
        var hasher = BlobHasher()
        try hasher.update(fileAt: url)
        return (hasher.finalize(), hasher.count)
    }

    /// Feeds a whole file.
    mutating func update(fileAt url: URL) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { update(chunk) }
    }
}
