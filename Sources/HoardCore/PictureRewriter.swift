/// A picture rewriter, as a plugin: changes a picture's bytes without decoding its pixels (metadata stripping),
/// before the picture is stored. The stored blob, and so its digest, is the rewritten one.
///
/// Rewriters run on every staged picture whose header passed, in registration order, each on the previous one's
/// output. They MUST be pure (no I/O), deterministic (same bytes in, same edit out) and MUST NOT change the
/// picture's type or pixel size.
public protocol PictureRewriter: Sendable {
    /// A unique, stable identifier, e.g. `hoard.strip-metadata`; `pack.json` `plugins` turns it on or off by this id.
    var id: String { get }
    /// Whether it runs for packs whose `pack.json` does not mention it.
    var isEnabledByDefault: Bool { get }
    /// The edit to make to a whole picture file of type `mediaType`, or nil when it has nothing to change.
    /// Throws a `Problem` (without an entry; the caller adds it) when the file breaks its format's rules.
    func rewrite(_ bytes: UnsafeRawBufferPointer, mediaType: MediaType) throws(Problem) -> PictureEdit?
}

/// A new picture file described as pieces of the old one and inserted bytes, so large pictures are never copied
/// in memory.
public struct PictureEdit: Sendable, Hashable {
    /// One run of the new file.
    public enum Piece: Sendable, Hashable {
        /// Bytes of the original file, by offset.
        case original(Range<Int>)
        /// New bytes.
        case inserted([UInt8])
    }

    /// The new file, in order.
    public var pieces: [Piece]
    /// What was removed, in the order found, without repeats (`EXIF`, `XMP`, `IPTC`, `text`), for reports.
    public var removed: [String]
    /// Whether the removed metadata held a GPS position.
    public var hadGPSPosition: Bool

    /// Creates an edit.
    public init(pieces: [Piece], removed: [String], hadGPSPosition: Bool) {
        self.pieces = pieces
        self.removed = removed
        self.hadGPSPosition = hadGPSPosition
    }

    /// The new file's size.
    public var size: Int {
        pieces.reduce(0) { total, piece in
            switch piece {
            case .original(let range): total + range.count
            case .inserted(let bytes): total + bytes.count
            }
        }
    }

    /// The new file, built in memory (tests and small pictures).
    public func apply(to original: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(size)
        for piece in pieces {
            switch piece {
            case .original(let range): result += original[range]
            case .inserted(let bytes): result += bytes
            }
        }
        return result
    }
}

extension PictureRewriter {
    /// Convenience for tests: the edit for a picture held in an array.
    public func rewrite(_ bytes: [UInt8], mediaType: MediaType) throws(Problem) -> PictureEdit? {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(Problem) -> PictureEdit? in try rewrite(buffer, mediaType: mediaType) }
        }
        return try result.get()
    }
}
