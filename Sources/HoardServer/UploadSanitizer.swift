import HoardCore

/// The hook where participants' and members' pictures are cleaned before they are stored: every
/// `POST /v1/uploads` body passes through the configured sanitizer after its type is checked and before it is
/// hashed, so the digest returned is the digest of the cleaned bytes.
///
/// Metadata stripping (EXIF, GPS, XMP, text chunks) is built as a processor plugin; it plugs in here by conforming
/// and being set as ``ServerConfiguration/uploadSanitizer``. Implementations MUST return a picture of the same
/// media type, MUST be safe to call concurrently and SHOULD throw an ``APIError`` (e.g. 422) for bytes they refuse.
public protocol UploadSanitizer: Sendable {
    /// The bytes to store for an uploaded picture of `mediaType`.
    func sanitize(_ bytes: [UInt8], mediaType: MediaType) async throws -> [UInt8]
}

/// Today's default: stores the bytes as they came. Replace it with the metadata-stripping processor.
public struct UnchangedUpload: UploadSanitizer {
    /// Creates the pass-through sanitizer.
    public init() {}

    public func sanitize(_ bytes: [UInt8], mediaType: MediaType) async throws -> [UInt8] { bytes }
}
