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
