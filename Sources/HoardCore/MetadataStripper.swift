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

/// Collects the pieces of an edited picture while a format walker decides what to keep.
struct EditBuilder {
    private(set) var pieces: [PictureEdit.Piece] = []
    private(set) var removed: [String] = []
    var hadGPSPosition = false
    /// The orientation of the first EXIF block removed, and where its replacement goes.
    private(set) var orientation: (value: Int, at: Int)?

    /// Keeps a run of the original file.
    mutating func keep(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        if case .original(let last)? = pieces.last, last.upperBound == range.lowerBound {
            pieces[pieces.count - 1] = .original(last.lowerBound..<range.upperBound)
        } else {
            pieces.append(.original(range))
        }
    }

    /// Adds new bytes at the end.
    mutating func insert(_ bytes: [UInt8]) { pieces.append(.inserted(bytes)) }

    /// Notes that something labelled `label` was left out here.
    mutating func drop(_ label: String) {
        if !removed.contains(label) { removed.append(label) }
    }

    /// Notes a removed EXIF block: the first one decides the orientation kept, at the place it was.
    mutating func dropEXIF(_ summary: ExifSummary) {
        drop("EXIF")
        hadGPSPosition = hadGPSPosition || summary.hasGPSPosition
        if orientation == nil { orientation = (summary.orientation, pieces.count) }
    }

    /// Puts `block(orientation)` where the first EXIF block was, when that orientation is not upright.
    mutating func restoreOrientation(_ block: (Int) -> [UInt8]) {
        guard let orientation, orientation.value != 1 else { return }
        pieces.insert(.inserted(block(orientation.value)), at: orientation.at)
    }

    /// The edit, or nil when nothing was removed.
    var edit: PictureEdit? {
        removed.isEmpty ? nil : PictureEdit(pieces: pieces, removed: removed, hadGPSPosition: hadGPSPosition)
    }
}
