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

/// Stores the bytes as they came (for tests and for servers that must keep uploads byte for byte).
public struct UnchangedUpload: UploadSanitizer {
    /// Creates the pass-through sanitizer.
    public init() {}

    public func sanitize(_ bytes: [UInt8], mediaType: MediaType) async throws -> [UInt8] { bytes }
}

/// The default: a picture rewriter — the metadata stripper (`hoard.strip-metadata`) unless told otherwise —
/// applied to every upload, so a player's photo loses its EXIF, GPS position, XMP and text chunks before it is
/// hashed. A picture whose metadata lies about its own layout is refused with 422 and the rewriter's problem.
public struct RewrittenUpload: UploadSanitizer {
    /// The rewriter applied.
    public let rewriter: any PictureRewriter

    /// Applies `rewriter` to every upload.
    public init(rewriter: any PictureRewriter = MetadataStripper()) {
        self.rewriter = rewriter
    }

    public func sanitize(_ bytes: [UInt8], mediaType: MediaType) async throws -> [UInt8] {
        do {
            return try rewriter.rewrite(bytes, mediaType: mediaType)?.apply(to: bytes) ?? bytes
        } catch {
            throw APIError(error.code.rawValue, .unprocessableContent, "the picture cannot be cleaned: \(error.message)", problems: [error])
        }
    }
}
