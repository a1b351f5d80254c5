/// How a moving picture moves: its frame count and total duration, as its file declares them.
public struct Animation: Sendable, Hashable, Codable {
    /// Frames in the file; nil when Hoard does not count them (WebM video).
    public var frames: Int?
    /// Total duration in milliseconds (the sum of the frames' delays; a WebM's Info duration); nil when not declared.
    public var durationMs: Int?

    /// Makes an animation from its parts.
    public init(frames: Int?, durationMs: Int?) {
        self.frames = frames
        self.durationMs = durationMs
    }
}

/// Counts the frames of animated GIF, APNG and animated WebP files by walking their blocks or chunks, without
/// decoding a pixel. Every frame must lie inside the picture; a block or chunk that runs past the file, or an APNG
/// whose frame count differs from what its `acTL` declares, is `malformed`.
public enum AnimationReader {
    /// Whether the file needs ``read(_:mediaType:)`` to know whether it moves, from its first bytes and header: every
    /// GIF; a PNG whose `acTL` chunk comes before its first `IDAT` (or whose prefix ends before one); a WebP whose
    /// VP8X header sets the animation flag. JPEG, WebM and plain PNG and WebP need nothing more.
    public static func needsScan(_ prefix: [UInt8], _ info: ImageInfo) -> Bool {
        switch info.mediaType {
        case .gif: return true
        case .webp: return prefix.count > 20 && prefix[12..<16].elementsEqual("VP8X".utf8) && prefix[20] & 0x02 != 0
        case .png:
            var offset = 8
            while offset + 8 <= prefix.count {
                let length = prefix[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                let type = prefix[offset + 4..<offset + 8]
                if type.elementsEqual("acTL".utf8) { return true }
                if type.elementsEqual("IDAT".utf8) { return false }
                offset += 12 + length
            }
            return true
        case .jpeg, .webm, .ogg, .mp3, .flac, .wav, .m4a, .webmAudio: return false
        }
    }

    /// The animation of a whole file, nil when it has a single frame. `width` and `height` are its header's.
    public static func read(_ buffer: UnsafeRawBufferPointer, _ info: ImageInfo) throws(ImageHeaderError) -> Animation? {
        let bytes = ImageHeader.Bytes(buffer: buffer, isComplete: true)
        let frames: [(delayMs: Int, fits: Bool)]
        switch info.mediaType {
        case .gif: frames = try gifFrames(bytes, info)
        case .png: frames = try apngFrames(bytes, info)
        case .webp: frames = try webpFrames(bytes, info)
        case .jpeg, .webm, .ogg, .mp3, .flac, .wav, .m4a, .webmAudio: return nil
        }
        if let outside = frames.firstIndex(where: { !$0.fits }) {
            throw .malformed("\(info.mediaType.rawValue) frame \(outside + 1) lies outside the \(info.width)×\(info.height) picture")
        }
        guard frames.count > 1 else { return nil }
        return Animation(frames: frames.count, durationMs: frames.reduce(0) { min($0 + $1.delayMs, Int(Int32.max)) })
    }

    /// GIF: extension and image blocks after the header and global colour table; a frame per image descriptor, its
    /// delay from the graphic control extension before it (hundredths of a second).
    static func gifFrames(_ bytes: ImageHeader.Bytes, _ info: ImageInfo) throws(ImageHeaderError) -> [(delayMs: Int, fits: Bool)] {
        guard let flags = bytes[10] else { throw .malformed("GIF ends inside its header") }
        var offset = 13 + (flags & 0x80 != 0 ? 3 << (Int(flags & 0x07) + 1) : 0)
        var frames: [(delayMs: Int, fits: Bool)] = []
        var delay = 0
        /// Skips data sub-blocks (a length byte, then that many bytes) up to the zero-length terminator.
        func skipSubBlocks() throws(ImageHeaderError) {
            while true {
                guard let length = bytes[offset] else { throw .malformed("GIF ends inside a data block at byte \(offset)") }
                offset += 1 + Int(length)
                if length == 0 { return }
            }
        }
        while true {
            guard let introducer = bytes[offset] else {
                guard !frames.isEmpty else { throw .malformed("GIF has no image") }
                return frames  // many writers leave the trailer out
            }
            switch introducer {
            case 0x3B:
                guard !frames.isEmpty else { throw .malformed("GIF has no image") }
                return frames
            case 0x21:
                guard let label = bytes[offset + 1] else { throw .malformed("GIF ends inside an extension") }
                if label == 0xF9, bytes[offset + 2] == 4, let hundredths = bytes.le16(at: offset + 4) { delay = hundredths * 10 }
                offset += 2
                try skipSubBlocks()
            case 0x2C:
                guard let left = bytes.le16(at: offset + 1), let top = bytes.le16(at: offset + 3), let width = bytes.le16(at: offset + 5),
                      let height = bytes.le16(at: offset + 7), let packed = bytes[offset + 9], bytes.has(1, at: offset + 10)
                else { throw .malformed("GIF ends inside an image descriptor") }
                frames.append((delay, left + width <= info.width && top + height <= info.height))
                delay = 0
                offset += 10 + (packed & 0x80 != 0 ? 3 << (Int(packed & 0x07) + 1) : 0) + 1  // local colour table, LZW code size
                try skipSubBlocks()
            default:
                throw .malformed("GIF has an unknown block 0x\(ImageHeader.hex(introducer)) at byte \(offset)")
            }
        }
    }

    /// APNG: chunks up to IEND; a frame per `fcTL` (delay numerator ÷ denominator seconds; a denominator of 0
    /// means 100). The `acTL` frame count must match. A PNG without `acTL` is one frame.
    static func apngFrames(_ bytes: ImageHeader.Bytes, _ info: ImageInfo) throws(ImageHeaderError) -> [(delayMs: Int, fits: Bool)] {
        var offset = 8
        var declared: UInt32?
        var frames: [(delayMs: Int, fits: Bool)] = []
        while let length = bytes.be32(at: offset), bytes.has(4, at: offset + 4) {
            let type = bytes.fourCC(at: offset + 4)
            let data = offset + 8
            guard Int(length) <= bytes.count - data - 4 else { throw .malformed("PNG chunk \(type) at byte \(offset) runs past the end of the file") }
            switch type {
            case "acTL":
                guard length == 8, let count = bytes.be32(at: data) else { throw .malformed("APNG acTL chunk is not 8 bytes") }
                declared = count
            case "fcTL" where declared != nil:
                guard length == 26, let width = bytes.be32(at: data + 4), let height = bytes.be32(at: data + 8),
                      let x = bytes.be32(at: data + 12), let y = bytes.be32(at: data + 16), let numerator = bytes.be16(at: data + 20),
                      let denominator = bytes.be16(at: data + 22)
                else { throw .malformed("APNG fcTL chunk is not 26 bytes") }
                let fits = UInt64(x) + UInt64(width) <= UInt64(info.width) && UInt64(y) + UInt64(height) <= UInt64(info.height)
                frames.append((numerator * 1000 / (denominator == 0 ? 100 : denominator), fits && width > 0 && height > 0))
            case "IEND":
                guard let declared else { return [] }
                guard declared == frames.count else {
                    throw .malformed("APNG acTL declares \(declared) frames but the file has \(frames.count)")
                }
                return frames
            default:
                break
            }
            offset = data + Int(length) + 4
        }
        guard declared == nil else { throw .malformed("APNG ends before its IEND chunk") }
        return []
    }

    /// Animated WebP: chunks after the VP8X header; a frame per `ANMF` (X and Y in 2-pixel units, width − 1 and
    /// height − 1, duration in milliseconds, 24 bits each, little-endian).
    static func webpFrames(_ bytes: ImageHeader.Bytes, _ info: ImageInfo) throws(ImageHeaderError) -> [(delayMs: Int, fits: Bool)] {
        var offset = 12
        var frames: [(delayMs: Int, fits: Bool)] = []
        while offset < bytes.count {
            guard let size = bytes.le32(at: offset + 4) else { throw .malformed("WebP ends inside a chunk header at byte \(offset)") }
            let type = bytes.fourCC(at: offset)
            let data = offset + 8
            guard Int(size) <= bytes.count - data else { throw .malformed("WebP chunk \(type) at byte \(offset) runs past the end of the file") }
            if type == "ANMF" {
                guard size >= 16, let x = bytes.le24(at: data), let y = bytes.le24(at: data + 3), let width = bytes.le24(at: data + 6),
                      let height = bytes.le24(at: data + 9), let duration = bytes.le24(at: data + 12)
                else { throw .malformed("WebP ANMF chunk is shorter than its 16-byte header") }
                frames.append((duration, x * 2 + width + 1 <= info.width && y * 2 + height + 1 <= info.height))
            }
            offset = data + Int(size) + Int(size & 1)
        }
        return frames
    }
}
