/// A blob a session's map references that is not an asset (a plain uploaded picture), as a manifest lists it: the
/// server encodes it, the client library decodes it.
public struct ManifestBlob: Sendable, Hashable, Codable {
    /// Its digest.
    public var digest: Digest
    /// Its size in bytes.
    public var size: Int64
    /// Its media type.
    public var mediaType: String

    /// A blob entry.
    public init(digest: Digest, size: Int64, mediaType: String) {
        self.digest = digest
        self.size = size
        self.mediaType = mediaType
    }
}
