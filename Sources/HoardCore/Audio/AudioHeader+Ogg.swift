extension AudioHeader {
    /// One Ogg page's header: where its body starts, its length, its stream's serial number and granule position.
    struct OggPage {
        var bodyStart: Int
        var bodyLength: Int
        var serial: UInt32
        var granule: UInt64
    }

    /// The Ogg page at `offset`; nil when it is not a whole page.
    static func oggPage(_ bytes: ImageHeader.Bytes, at offset: Int) -> OggPage? {
        guard bytes.compare(Array("OggS".utf8), at: offset) == .match, bytes[offset + 4] == 0,
              let low = bytes.le32(at: offset + 6), let high = bytes.le32(at: offset + 10), let serial = bytes.le32(at: offset + 14),
              let segments = bytes[offset + 26]
        else { return nil }
        var length = 0
        for index in 0..<Int(segments) {
            guard let lace = bytes[offset + 27 + index] else { return nil }
            length += Int(lace)
        }
        let bodyStart = offset + 27 + Int(segments)
        guard bytes.has(length, at: bodyStart) else { return nil }
        return OggPage(bodyStart: bodyStart, bodyLength: length, serial: serial, granule: UInt64(high) << 32 | UInt64(low))
    }

    /// Reads an Ogg Vorbis or Ogg Opus file: channels and rate from the first page's identification header, the
    /// duration from the granule position of the stream's last page, found by searching back from the file's end.
    static func readOgg(_ bytes: ImageHeader.Bytes) throws(AudioHeaderError) -> AudioInfo {
        guard let first = oggPage(bytes, at: 0) else { throw .malformed("The Ogg file's first page runs past the file's end") }
        let body = first.bodyStart
        let codec: String
        let channels: Int
        let rate: Int
        var preSkip: UInt64 = 0
        if bytes.compare([0x01] + Array("vorbis".utf8), at: body) == .match {
            guard first.bodyLength >= 30, let count = bytes[body + 11], let sampleRate = bytes.le32(at: body + 12) else {
                throw .malformed("The Vorbis identification header is shorter than 30 bytes")
            }
            codec = "vorbis"
            channels = Int(count)
            rate = Int(sampleRate)
        } else if bytes.compare(Array("OpusHead".utf8), at: body) == .match {
            guard first.bodyLength >= 19, let count = bytes[body + 9], let skip = bytes.le16(at: body + 10) else {
                throw .malformed("The OpusHead header is shorter than 19 bytes")
            }
            codec = "opus"
            channels = Int(count)
            rate = 48_000  // Opus always decodes at 48 kHz; its granule counts 48 kHz samples.
            preSkip = UInt64(skip)
        } else {
            throw .notAudio("The Ogg file holds neither Vorbis nor Opus (perhaps Theora video or Speex); convert it to Opus")
        }
        var last: OggPage?
        var offset = bytes.count - 27
        let floor = max(0, bytes.count - scanWindow)
        while offset >= floor, last == nil {
            if bytes[offset] == 0x4F, let page = oggPage(bytes, at: offset), page.serial == first.serial, page.granule != UInt64.max {
                last = page
            }
            offset -= 1
        }
        guard let last else { throw .malformed("The Ogg file has no complete page of its stream in its last \(scanWindow) bytes") }
        guard last.granule > preSkip, let ms = milliseconds(samples: last.granule - preSkip, rate: rate) else {
            throw .malformed("The Ogg stream's last granule position (\(last.granule)) gives no duration")
        }
        return AudioInfo(mediaType: .ogg, codec: codec, channels: channels, sampleRate: rate, durationMs: ms)
    }
}
