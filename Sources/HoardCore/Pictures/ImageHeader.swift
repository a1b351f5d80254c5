/// The picture formats a tablet can draw and the audio formats a browser plays, identified by their bytes.
public enum MediaType: String, Sendable, Codable, CaseIterable {
    /// Portable Network Graphics (APNG too: an animated PNG is a PNG with animation chunks).
    case png = "image/png"
    /// JPEG (JFIF, EXIF and bare JPEG streams).
    case jpeg = "image/jpeg"
    /// WebP, lossy (VP8), lossless (VP8L) or extended (VP8X, animated or not).
    case webp = "image/webp"
    /// GIF (87a and 89a), animated or not.
    case gif = "image/gif"
    /// WebM video (Matroska with the DocType `webm`): animated tokens and maps.
    case webm = "video/webm"
    /// Ogg audio: Vorbis or Opus (``AudioHeader``).
    case ogg = "audio/ogg"
    /// MPEG audio, layer III (or I, II).
    case mp3 = "audio/mpeg"
    /// FLAC.
    case flac = "audio/flac"
    /// WAVE with PCM or float samples.
    case wav = "audio/wav"
    /// MP4 audio (M4A): AAC or ALAC.
    case m4a = "audio/mp4"
    /// WebM with one audio track and no video: Opus or Vorbis (a `.webm` file that is audio is this type).
    case webmAudio = "audio/webm"

    /// File-name extensions (lowercase, no dot) that claim this type: png; jpg, jpeg; webp; gif; webm; ogg, oga, opus;
    /// mp3; flac; wav, wave; m4a, aac; weba.
    public var fileExtensions: [String] {
        switch self {
        case .png: ["png"]
        case .jpeg: ["jpg", "jpeg"]
        case .webp: ["webp"]
        case .gif: ["gif"]
        case .webm: ["webm"]
        case .ogg: ["ogg", "oga", "opus"]
        case .mp3: ["mp3"]
        case .flac: ["flac"]
        case .wav: ["wav", "wave"]
        case .m4a: ["m4a", "aac"]
        case .webmAudio: ["weba"]
        }
    }

    /// Whether it is sound rather than a picture (``AudioHeader`` reads it).
    public var isAudio: Bool {
        switch self {
        case .png, .jpeg, .webp, .gif, .webm: false
        case .ogg, .mp3, .flac, .wav, .m4a, .webmAudio: true
        }
    }

    /// Whether libvips can decode it (a still or animated picture, not WebM video nor audio): generators and web
    /// previews need a still picture.
    public var isStillDecodable: Bool { self != .webm && !isAudio }

    /// The media type a lowercase extension (without the dot) claims, nil if none.
    ///
    /// Matching is exact: callers lowercase the extension first, so "PNG" and ".png" claim nothing.
    public init?(fileExtension: String) {
        guard let type = Self.allCases.first(where: { $0.fileExtensions.contains(fileExtension) }) else { return nil }
        self = type
    }
}

/// What the header of a picture says: its type and its pixel size.
public struct ImageInfo: Sendable, Hashable, Codable {
    /// The format the bytes are in (not the one the file name claims).
    public var mediaType: MediaType
    /// Width in pixels, as the header states it (always > 0).
    public var width: Int
    /// Height in pixels, as the header states it (always > 0).
    public var height: Int
    /// Its frames and duration when it moves (set by ``AnimationReader``; a WebM's from its header); nil for a still.
    public var animation: Animation?

    /// Makes an info from its parts.
    public init(mediaType: MediaType, width: Int, height: Int, animation: Animation? = nil) {
        self.mediaType = mediaType
        self.width = width
        self.height = height
        self.animation = animation
    }
}

/// Why a header could not be read.
public struct ImageHeaderError: Error, Sendable, Hashable {
    /// The kind of failure, stable for machines.
    public var code: Code
    /// What is wrong, in plain words, for people.
    public var message: String

    /// The kinds of failure, as UPPER_SNAKE codes.
    public enum Code: String, Sendable {
        /// The bytes are not a PNG, JPEG or WebP file.
        case notAnImage = "NOT_AN_IMAGE"
        /// The bytes end before the header does (or, for JPEG, before the SOF marker when more bytes exist).
        case truncated = "TRUNCATED_HEADER"
        /// The header is there but breaks the format's rules.
        case malformed = "MALFORMED_HEADER"
    }

    /// Makes an error from its parts.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// A `NOT_AN_IMAGE` error saying `message`.
    static func notAnImage(_ message: String) -> Self { Self(code: .notAnImage, message: message) }
    /// A `TRUNCATED_HEADER` error saying `message`.
    static func truncated(_ message: String) -> Self { Self(code: .truncated, message: message) }
    /// A `MALFORMED_HEADER` error saying `message`.
    static func malformed(_ message: String) -> Self { Self(code: .malformed, message: message) }
}

/// Reads the type and pixel size of PNG, JPEG, WebP, GIF and WebM files from their first bytes.
public enum ImageHeader {
    /// Sniffs the type and reads the pixel size from the first bytes of a file, without decoding pixels.
    ///
    /// `prefix` is the start of the file (callers pass up to 256 KiB); `isComplete` says whether prefix is the whole file.
    /// A file too short to tell what it is throws `truncated`; one that is plainly something else throws `notAnImage`.
    /// No size limits are applied: the result is what the header says.
    public static func read(_ prefix: UnsafeRawBufferPointer, isComplete: Bool) throws(ImageHeaderError) -> ImageInfo {
        let bytes = Bytes(buffer: prefix, isComplete: isComplete)
        if bytes.count == 0 {
            throw isComplete ? .notAnImage("The file is empty") : .truncated("No bytes were given to read a header from")
        }
        switch bytes.compare(pngSignature, at: 0) {
        case .match: return try readPNG(bytes)
        case .tooShort: throw .truncated("The file ends inside the PNG signature")
        case .mismatch:
            if bytes.compare(Array(pngSignature.prefix(4)), at: 0) == .match {
                throw .malformed("PNG signature is damaged (its line-ending bytes were changed, perhaps by a text-mode copy)")
            }
        }
        switch bytes.compare([0xFF, 0xD8], at: 0) {
        case .match: return try readJPEG(bytes)
        case .tooShort: throw .truncated("The file ends inside the JPEG start-of-image marker")
        case .mismatch: break
        }
        switch bytes.compare(Array("RIFF".utf8), at: 0) {
        case .match:
            switch bytes.compare(Array("WEBP".utf8), at: 8) {
            case .match: return try readWebP(bytes)
            case .tooShort: throw .truncated("The file ends inside the RIFF header")
            case .mismatch: throw .notAnImage("The file is a RIFF container but not a WebP image")
            }
        case .tooShort: throw .truncated("The file ends inside the RIFF signature")
        case .mismatch: break
        }
        switch bytes.compare(Array("GIF8".utf8), at: 0) {
        case .match: return try readGIF(bytes)
        case .tooShort: throw .truncated("The file ends inside the GIF signature")
        case .mismatch: break
        }
        switch bytes.compare(webmSignature, at: 0) {
        case .match: return try readWebM(bytes)
        case .tooShort: throw .truncated("The file ends inside the EBML signature")
        case .mismatch: break
        }
        throw .notAnImage("The file does not start with a PNG, JPEG, WebP, GIF or WebM signature")
    }

    /// Convenience for tests: reads the header from an array holding the start of a file.
    public static func read(_ bytes: [UInt8], isComplete: Bool = true) throws(ImageHeaderError) -> ImageInfo {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(ImageHeaderError) -> ImageInfo in try read(buffer, isComplete: isComplete) }
        }
        return try result.get()
    }

    /// The eight bytes every PNG file starts with.
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
}

extension ImageHeader {
    /// A bounds-checked view of the prefix: every read returns nil instead of leaving the buffer.
    struct Bytes {
        /// The bytes handed in by the caller.
        let buffer: UnsafeRawBufferPointer
        /// Whether `buffer` is the whole file.
        let isComplete: Bool

        /// How many bytes there are.
        var count: Int { buffer.count }

        /// How a run of bytes compares with an expected signature.
        enum Comparison { case match, mismatch, tooShort }

        /// The byte at `index`, nil when outside the buffer.
        subscript(index: Int) -> UInt8? {
            index >= 0 && index < buffer.count ? buffer[index] : nil
        }

        /// Whether `length` bytes starting at `offset` all lie inside the buffer.
        func has(_ length: Int, at offset: Int) -> Bool {
            offset >= 0 && length >= 0 && offset <= buffer.count && length <= buffer.count - offset
        }

        /// Compares the bytes at `offset` with `expected`; `tooShort` when all present bytes agree but some are missing.
        func compare(_ expected: [UInt8], at offset: Int) -> Comparison {
            for (index, value) in expected.enumerated() {
                guard let actual = self[offset + index] else { return .tooShort }
                if actual != value { return .mismatch }
            }
            return .match
        }

        /// An unsigned integer of `length` bytes (at most 4) at `offset`, big- or little-endian; nil if not all present.
        func uint(_ length: Int, at offset: Int, bigEndian: Bool) -> UInt32? {
            guard length <= 4, has(length, at: offset) else { return nil }
            var value: UInt32 = 0
            for index in 0..<length {
                let byte = UInt32(buffer[offset + (bigEndian ? index : length - 1 - index)])
                value = value << 8 | byte
            }
            return value
        }

        /// A big-endian 16-bit value at `offset`.
        func be16(at offset: Int) -> Int? { uint(2, at: offset, bigEndian: true).map(Int.init) }
        /// A big-endian 32-bit value at `offset`.
        func be32(at offset: Int) -> UInt32? { uint(4, at: offset, bigEndian: true) }
        /// A little-endian 16-bit value at `offset`.
        func le16(at offset: Int) -> Int? { uint(2, at: offset, bigEndian: false).map(Int.init) }
        /// A little-endian 24-bit value at `offset`.
        func le24(at offset: Int) -> Int? { uint(3, at: offset, bigEndian: false).map(Int.init) }
        /// A little-endian 32-bit value at `offset`.
        func le32(at offset: Int) -> UInt32? { uint(4, at: offset, bigEndian: false) }
        /// A big-endian value of up to 8 bytes at `offset`; nil if not all present.
        func be64(_ length: Int, at offset: Int) -> UInt64? {
            guard length <= 8, has(length, at: offset) else { return nil }
            var value: UInt64 = 0
            for index in 0..<length { value = value << 8 | UInt64(buffer[offset + index]) }
            return value
        }

        /// Four bytes at `offset` shown as text when printable (a chunk name), else as hex.
        func fourCC(at offset: Int) -> String {
            guard has(4, at: offset) else { return "?" }
            let chars = (0..<4).map { buffer[offset + $0] }
            if chars.allSatisfy({ (0x20...0x7E).contains($0) }) {
                return String(decoding: chars, as: UTF8.self)
            }
            return chars.map { hex($0) }.joined(separator: " ")
        }
    }

    /// A byte as two uppercase hex digits.
    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// The CRC-32 (ISO 3309, as used by PNG and zip) lookup table.
    static let crcTable: [UInt32] = (0..<256).map { (index: UInt32) -> UInt32 in
        var crc = index
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1
        }
        return crc
    }

    /// The CRC-32 of `length` bytes at `offset` of `bytes`; nil if they are not all present.
    static func crc32(_ bytes: Bytes, from offset: Int, length: Int) -> UInt32? {
        guard bytes.has(length, at: offset) else { return nil }
        var crc: UInt32 = 0xFFFF_FFFF
        for index in offset..<offset + length {
            crc = crcTable[Int((crc ^ UInt32(bytes.buffer[index])) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// The CRC-32 of a byte array (used by tests to build valid chunks).
    static func crc32(_ data: [UInt8]) -> UInt32 {
        data.withUnsafeBytes { buffer in
            crc32(Bytes(buffer: buffer, isComplete: true), from: 0, length: buffer.count) ?? 0
        }
    }
}
