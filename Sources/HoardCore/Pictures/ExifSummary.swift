/// What metadata stripping needs from an EXIF block (a TIFF structure): the orientation and whether it holds a
/// GPS position. Also builds the smallest EXIF block that keeps an orientation.
public struct ExifSummary: Sendable, Hashable {
    /// The orientation tag (0x0112): 1 (upright) to 8; 1 when absent or out of range.
    public var orientation: Int
    /// Whether IFD0 points at a GPS IFD (tag 0x8825) that has at least one entry.
    public var hasGPSPosition: Bool

    /// The TIFF tag of the orientation.
    static let orientationTag = 0x0112
    /// The TIFF tag of the pointer to the GPS IFD.
    static let gpsPointerTag = 0x8825

    /// Reads the TIFF structure at the start of `tiff` (byte order mark `II` or `MM`, 42, IFD0 offset).
    ///
    /// Throws a message when the block lies about its own layout: no TIFF header, or IFD0 running past the block's
    /// end. A GPS pointer that leads outside the block still counts as a GPS position (it was written as one).
    public static func read(_ tiff: UnsafeRawBufferPointer) throws(ProblemMessage) -> ExifSummary {
        let bytes = ImageHeader.Bytes(buffer: tiff, isComplete: true)
        let bigEndian: Bool
        switch (bytes[0], bytes[1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: throw ProblemMessage("its EXIF block has no TIFF byte-order mark")
        }
        func u16(_ offset: Int) -> Int? { bytes.uint(2, at: offset, bigEndian: bigEndian).map(Int.init) }
        func u32(_ offset: Int) -> Int? { bytes.uint(4, at: offset, bigEndian: bigEndian).map(Int.init) }
        guard u16(2) == 42, let ifd0 = u32(4) else { throw ProblemMessage("its EXIF block has a damaged TIFF header") }
        guard let count = u16(ifd0), bytes.has(count * 12, at: ifd0 + 2) else {
            throw ProblemMessage("its EXIF block says its first directory lies at byte \(ifd0) with more entries than the \(tiff.count) bytes hold")
        }
        var summary = ExifSummary(orientation: 1, hasGPSPosition: false)
        for index in 0..<count {
            let entry = ifd0 + 2 + index * 12
            switch u16(entry) {
            case orientationTag:
                if let value = u16(entry + 8), (1...8).contains(value) { summary.orientation = value }
            case gpsPointerTag:
                let target = u32(entry + 8) ?? 0
                summary.hasGPSPosition = u16(target).map { $0 > 0 } ?? true
            default:
                break
            }
        }
        return summary
    }

    /// Convenience for tests: reads an EXIF block held in an array.
    public static func read(_ tiff: [UInt8]) throws(ProblemMessage) -> ExifSummary {
        let result = tiff.withUnsafeBytes { buffer in
            Result { () throws(ProblemMessage) -> ExifSummary in try read(buffer) }
        }
        return try result.get()
    }

    /// The smallest TIFF structure holding only an orientation: big-endian, one IFD with one SHORT entry. 26 bytes,
    /// always the same for the same orientation.
    public static func minimalTIFF(orientation: Int) -> [UInt8] {
        let value = UInt8(clamping: orientation)
        return [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08]  // MM, 42, IFD0 at 8
            + [0x00, 0x01]  // one entry
            + [0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, value, 0x00, 0x00]  // 0x0112 SHORT ×1 = value
            + [0x00, 0x00, 0x00, 0x00]  // no next IFD
    }
}
