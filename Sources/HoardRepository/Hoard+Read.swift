import Foundation
import HoardCore
import HoardStore

/// What the server reads from the store, so that nothing above the Hoard speaks to a store directly.
extension Hoard {
    /// The bytes of a stored blob (all, or `range`), or nil when absent.
    public func read(_ digest: Digest, range: Range<Int64>? = nil) async throws -> [UInt8]? {
        try await store.read(digest, range: range)
    }

    /// The path of the blob's file when the store keeps blobs as files on this machine (the server may then hash it
    /// once and `sendfile` it); nil otherwise.
    public func localPath(of digest: Digest) -> String? {
        store.localPath(of: digest)
    }

    /// Reads a blob's local file through and hashes it: the digest and size its bytes really have; nil when it does
    /// not exist. Blocking: call it from a thread that may block. `label` names the file in errors.
    public static func hashFile(atPath path: String, label: String) throws(StorageError) -> (digest: Digest, size: Int64)? {
        try FileBlobStore.hashFile(atPath: path, label: label)
    }
}

/// A failure of the blob store, as the layers above the Hoard see it (codes in ``BlobStoreFailure``).
public typealias StorageError = BlobStoreError
