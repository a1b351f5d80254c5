/// What the header of an audio file says: its format, codec, channels, sample rate and duration.
public struct AudioInfo: Sendable, Hashable, Codable {
    /// The container the bytes are in (not the one the file name claims).
    public var mediaType: MediaType
    /// The codec, as ffprobe names it: `vorbis`, `opus`, `mp3`, `flac`, `pcm_s16le`…, `aac`.
    public var codec: String
    /// Channels (1 mono, 2 stereo…), always > 0.
    public var channels: Int
    /// Samples a second, always > 0.
    public var sampleRate: Int
    /// Duration in milliseconds, always > 0.
    public var durationMs: Int

    /// Makes an info from its parts.
    public init(mediaType: MediaType, codec: String, channels: Int, sampleRate: Int, durationMs: Int) {
        self.mediaType = mediaType
        self.codec = codec
        self.channels = channels
        self.sampleRate = sampleRate
        self.durationMs = durationMs
    }
}

/// Why an audio header could not be read.
public struct AudioHeaderError: Error, Sendable, Hashable {
    /// The kind of failure, stable for machines.
    public var code: Code
    /// What is wrong, in plain words, for people.
    public var message: String

    /// The kinds of failure, as UPPER_SNAKE codes.
    public enum Code: String, Sendable {
        /// The bytes are none of the audio formats Hoard reads.
        case notAudio = "NOT_AUDIO"
        /// The file ends before its header does.
        case truncated = "TRUNCATED_HEADER"
        /// The header is there but breaks the format's rules, or its sizes lie.
        case malformed = "MALFORMED_HEADER"
    }

    /// Makes an error from its parts.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    static func notAudio(_ message: String) -> Self { Self(code: .notAudio, message: message) }
    static func truncated(_ message: String) -> Self { Self(code: .truncated, message: message) }
    static func malformed(_ message: String) -> Self { Self(code: .malformed, message: message) }
}

/// Reads the codec, channels, sample rate and duration of Ogg (Vorbis, Opus), MP3, FLAC, WAV, M4A (AAC, ALAC) and
/// WebM audio files without decoding a sample.
///
/// The reader is bounded: it looks at most at ``maxHeaderBytes`` of headers (ID3 tags, FLAC metadata, an M4A's `moov`
/// box, skipped or walked by their sizes), at ``scanWindow`` bytes when it searches (an MP3's first frame, an Ogg
/// file's last page from its end) and at ``maxElements`` boxes, chunks or blocks. A size that runs past its parent or
/// the file, a field outside its format's range, or a duration the file's bytes cannot hold (fewer than
/// ``minBytesPerSecond``) is `malformed`: a lying header is refused, never trusted.
public enum AudioHeader {
    /// Largest header Hoard walks: ID3 tags, FLAC metadata blocks, an M4A's `moov`.
    public static let maxHeaderBytes = 16 << 20
    /// Bytes searched for an MP3's first frame after its tags, and for an Ogg stream's last page before the file's end.
    public static let scanWindow = 128 << 10
    /// Most boxes, chunks, blocks or elements walked in one file.
    public static let maxElements = 4096
    /// Fewest bytes a second any accepted file holds (FLAC silence is about 100): a header that claims more time than
    /// its bytes can carry lies.
    public static let minBytesPerSecond = 16

    /// Reads a whole audio file. Never decodes; throws ``AudioHeaderError`` for anything else or anything broken.
    public static func read(_ file: UnsafeRawBufferPointer) throws(AudioHeaderError) -> AudioInfo {
        let bytes = ImageHeader.Bytes(buffer: file, isComplete: true)
        guard bytes.count > 0 else { throw .notAudio("The file is empty") }
        let info: AudioInfo
        if bytes.compare(Array("OggS".utf8), at: 0) == .match {
            info = try readOgg(bytes)
        } else if bytes.compare(Array("fLaC".utf8), at: 0) == .match {
            info = try readFLAC(bytes, at: 0)
        } else if bytes.compare(Array("RIFF".utf8), at: 0) == .match {
            info = try readWAV(bytes)
        } else if bytes.compare(Array("ftyp".utf8), at: 4) == .match {
            info = try readMP4(bytes)
        } else if bytes.compare(ImageHeader.webmSignature, at: 0) == .match {
            info = try readWebMAudio(bytes)
        } else if bytes.compare(Array("ID3".utf8), at: 0) == .match {
            let start = try skipID3(bytes)
            info = bytes.compare(Array("fLaC".utf8), at: start) == .match ? try readFLAC(bytes, at: start) : try readMP3(bytes, from: start)
        } else if let first = bytes[0], let second = bytes[1], first == 0xFF, second & 0xE0 == 0xE0 {
            info = try readMP3(bytes, from: 0)
        } else {
            throw .notAudio("The file does not start like an Ogg, MP3, FLAC, WAV, M4A or WebM audio file")
        }
        return try checked(info, size: bytes.count)
    }

    /// Convenience for tests and the fuzzer: reads a whole file held in an array.
    public static func read(_ bytes: [UInt8]) throws(AudioHeaderError) -> AudioInfo {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(AudioHeaderError) -> AudioInfo in try read(buffer) }
        }
        return try result.get()
    }

    /// Refuses what no real file says: no channel, no rate, no time, or more time than the bytes can carry.
    static func checked(_ info: AudioInfo, size: Int) throws(AudioHeaderError) -> AudioInfo {
        guard (1...255).contains(info.channels) else { throw .malformed("The header says \(info.channels) channels") }
        guard (1000...768_000).contains(info.sampleRate) else {
            throw .malformed("The header says \(info.sampleRate) samples a second, outside 1,000 to 768,000")
        }
        guard info.durationMs > 0 else { throw .malformed("The header gives no duration, or a duration of zero") }
        guard info.durationMs / 1000 <= size / minBytesPerSecond else {
            throw .malformed(
                "The header says the sound lasts \(info.durationMs / 1000) s, more than \(size) bytes can hold; its sizes lie")
        }
        return info
    }

    /// Whole milliseconds of `samples` at `rate` (rate > 0); nil past a million hours.
    static func milliseconds(samples: UInt64, rate: Int) -> Int? {
        guard rate > 0 else { return nil }
        let ms = (Double(samples) * 1000 / Double(rate)).rounded()
        return ms < 3.6e12 ? Int(ms) : nil
    }

    /// Where the audio starts after the ID3v2 tags at `0` (several may follow each other); a tag that runs past the file
    /// or past ``maxHeaderBytes`` is `malformed`.
    static func skipID3(_ bytes: ImageHeader.Bytes) throws(AudioHeaderError) -> Int {
        var offset = 0
        var tags = 0
        while bytes.compare(Array("ID3".utf8), at: offset) == .match {
            tags += 1
            guard tags <= 8 else { throw .malformed("The file has more than 8 ID3 tags in a row") }
            guard let flags = bytes[offset + 5], let raw = bytes.be32(at: offset + 6) else { throw .truncated("The file ends inside an ID3 tag's header") }
            guard raw & 0x8080_8080 == 0 else { throw .malformed("The ID3 tag's size at byte \(offset) is not a syncsafe integer") }
            let size = Int(raw & 0x7F) | Int(raw >> 8 & 0x7F) << 7 | Int(raw >> 16 & 0x7F) << 14 | Int(raw >> 24 & 0x7F) << 21
            let total = 10 + size + (flags & 0x10 != 0 ? 10 : 0)
            guard offset + total <= maxHeaderBytes else {
                throw .malformed("The ID3 tags are \(offset + total) bytes, over the \(maxHeaderBytes) Hoard reads; strip the cover art")
            }
            guard bytes.has(total, at: offset) else {
                throw .malformed("The ID3 tag at byte \(offset) says it holds \(size) bytes, more than the file has")
            }
            offset += total
        }
        return offset
    }
}
