import Foundation
import HoardCore

/// A content-addressed blob store backend, as a plugin: bytes in, digest names out, immutable once published.
///
/// Contracts every backend keeps (the conformance suite in the tests checks them):
/// - ``publish(_:)`` is idempotent: publishing a blob that is already present stores nothing and succeeds.
///   When it returns, every published blob is durable and readable; when it throws, none of them may be
///   referenced (some may be present: they are garbage until referenced).
/// - A blob is readable only with exactly the bytes its digest names. Backends never expose partial bytes.
/// - Absence is `nil`, never an error. ``delete(_:)`` of an absent blob succeeds.
/// - Errors are ``BlobStoreError``.
public protocol BlobStore: Sendable {
    /// A fresh local area to stage a batch of new blobs in; discard it when done, published or not.
    func makeStagingArea() throws -> StagingArea
    /// Makes staged blobs durable and visible, all in one batch. Returns which were new.
    func publish(_ blobs: [StagedBlob]) async throws -> PublishSummary
    /// Size and age of a stored blob, or nil when absent.
    func info(_ digest: Digest) async throws -> BlobInfo?
    /// The bytes of a stored blob (all, or `range`), or nil when absent.
    func read(_ digest: Digest, range: Range<Int64>?) async throws -> [UInt8]?
    /// Re-reads a stored blob and hashes it: the digest and size its bytes really have, or nil when absent.
    func rehash(_ digest: Digest) async throws -> (digest: Digest, size: Int64)?
    /// Marks a blob as just used, so garbage collection's grace period protects it; nothing when absent.
    func touch(_ digest: Digest) async throws
    /// Removes a blob; succeeds when it is absent.
    func delete(_ digest: Digest) async throws
    /// Every stored digest, in no particular order.
    func allDigests() async throws -> [Digest]
    /// Removes staging areas older than `age`, left behind by crashed imports. Returns how many.
    func removeStaleStaging(olderThan age: TimeInterval) async throws -> Int
    /// The store as a ``BlockingPublisher`` when its publish does its work on the calling thread (the importer then
    /// publishes while it records); nil for a store whose publish awaits (the default).
    var blockingPublisher: (any BlockingPublisher)? { get }
    /// The path of the blob's file when the store keeps blobs as files on this machine (a server may then hash it
    /// once and `sendfile` it); nil for a store that does not (the default).
    func localPath(of digest: Digest) -> String?
}

extension BlobStore {
    public var blockingPublisher: (any BlockingPublisher)? { nil }
    public func localPath(of digest: Digest) -> String? { nil }
}

/// A store whose publish does its work on the calling thread (the local file system's). The importer then publishes
/// on a thread of its own while the catalog rows are being written, and commits them once the publish has returned:
/// the rows no longer wait for the publish, and the commit still comes after it.
public protocol BlockingPublisher: BlobStore {
    /// ``BlobStore/publish(_:)``, blocking the calling thread until it is done.
    func publishBlocking(_ blobs: [StagedBlob]) throws -> PublishSummary
}

extension BlockingPublisher {
    /// Itself: a store that declares ``BlockingPublisher`` is one.
    public var blockingPublisher: (any BlockingPublisher)? { self }
}

/// What a store knows of one blob without reading it.
public struct BlobInfo: Sendable, Hashable {
    /// Size in bytes.
    public var size: Int64
    /// When it was last published or touched.
    public var modified: Date

    /// Creates an info.
    public init(size: Int64, modified: Date) {
        self.size = size
        self.modified = modified
    }
}

/// What ``BlobStore/publish(_:)`` did.
public struct PublishSummary: Sendable, Hashable {
    /// Blobs stored by this call.
    public var newBlobs: Set<Digest> = []
    /// Bytes stored by this call.
    public var newBytes: Int64 = 0

    /// An empty summary.
    public init() {}

    /// What two publishes did together (a blob one of them stored is never new to the other, so the sums add up).
    public func merged(with other: PublishSummary) -> PublishSummary {
        var both = self
        both.newBlobs.formUnion(other.newBlobs)
        both.newBytes += other.newBytes
        return both
    }
}

/// An error of a blob store: a code, a message that says what to do, and the cause.
public typealias BlobStoreError = CodedError<BlobStoreFailure>

/// What failed in a blob store (``BlobStoreError``'s codes).
public enum BlobStoreFailure: String, Sendable, Hashable {
    /// The disk or the directory could not be written or read.
    case io = "STORAGE_FAILURE"
    /// Stored bytes do not match their digest.
    case corrupt = "CORRUPT_BLOB"
    /// A remote store could not be reached or did not answer in time (a server answers 503).
    case unavailable = "STORAGE_UNAVAILABLE"
    /// The store's configuration is wrong: a malformed location, missing or refused credentials, a bucket not ours.
    case misconfigured = "STORAGE_MISCONFIGURED"
}
