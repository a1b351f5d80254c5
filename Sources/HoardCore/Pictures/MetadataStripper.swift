/// Removes EXIF, XMP and IPTC from JPEG, PNG and WebP pictures by cutting their segments or chunks out: no pixel
/// is decoded or re-encoded. The EXIF orientation is kept as a minimal 26-byte EXIF block (nothing is kept when it
/// is 1, upright). Rendering data stays: JFIF, ICC profiles, Adobe APP14, PNG colour, transparency and animation
/// chunks, WebP ICC and animation chunks.
///
/// On by default; a pack turns it off with `"plugins": {"hoard.strip-metadata": false}` in `pack.json`.
public struct MetadataStripper: PictureRewriter {
    /// `hoard.strip-metadata`.
    public let id = "hoard.strip-metadata"
    /// True: every pack is stripped unless it opts out.
    public let isEnabledByDefault = true

    /// Creates the stripper.
    public init() {}

    /// The edit that removes the metadata, nil when there is none. Throws `CORRUPT_METADATA` when a metadata
    /// segment or chunk lies about its length, `UNREADABLE_IMAGE` when another one does.
    public func rewrite(_ buffer: UnsafeRawBufferPointer, mediaType: MediaType) throws(Problem) -> PictureEdit? {
        let bytes = ImageHeader.Bytes(buffer: buffer, isComplete: true)
        switch mediaType {
        case .jpeg: return try Self.stripJPEG(bytes)
        case .png: return try Self.stripPNG(bytes)
        case .webp: return try Self.stripWebP(bytes)
        case .gif, .webm, .ogg, .mp3, .flac, .wav, .m4a, .webmAudio: return nil
        }
    }

    /// Reads an EXIF block's orientation and GPS pointer; a block that lies about its layout is `CORRUPT_METADATA`.
    static func summarize(_ bytes: ImageHeader.Bytes, _ range: Range<Int>, at offset: Int) throws(Problem) -> ExifSummary {
        do {
            return try ExifSummary.read(UnsafeRawBufferPointer(rebasing: bytes.buffer[range]))
        } catch {
            throw Problem(.corruptMetadata, "\(error.description) (EXIF at byte \(offset)); re-save the picture or strip its metadata")
        }
    }

    /// Whether XMP or text metadata names a GPS position.
    static func mentionsGPS(_ bytes: ImageHeader.Bytes, _ range: Range<Int>) -> Bool {
        let needle = Array("GPSLatitude".utf8)
        guard range.count >= needle.count else { return false }
        var index = range.lowerBound
        while index <= range.upperBound - needle.count {
            if bytes.buffer[index] == needle[0], bytes.compare(needle, at: index) == .match { return true }
            index += 1
        }
        return false
    }
}
