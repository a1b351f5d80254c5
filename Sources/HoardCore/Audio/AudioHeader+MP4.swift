extension AudioHeader {
    /// One ISO base media box: its type, where its data starts and where it ends.
    struct MP4Box {
        var type: String
        var dataStart: Int
        var end: Int
    }

    /// The boxes between `start` and `end`, each of which must end by `end` (sizes that lie are `malformed`); `count`
    /// counts every box walked in the file, against ``maxElements``.
    static func mp4Boxes(_ bytes: ImageHeader.Bytes, from start: Int, to end: Int, count: inout Int) throws(AudioHeaderError) -> [MP4Box] {
        var boxes: [MP4Box] = []
        var offset = start
        while offset + 8 <= end {
            count += 1
            guard count <= maxElements else { throw .malformed("The M4A file has more than \(maxElements) boxes") }
            guard let size32 = bytes.be32(at: offset) else { throw .malformed("The M4A file ends inside a box header") }
            let type = bytes.fourCC(at: offset + 4)
            var size = Int(size32)
            var header = 8
            if size32 == 1 {
                guard let large = bytes.be64(8, at: offset + 8), large < UInt64(Int.max / 2) else {
                    throw .malformed("The M4A box '\(type)' has a bad 64-bit size")
                }
                size = Int(large)
                header = 16
            } else if size32 == 0 {
                size = end - offset
            }
            guard size >= header, size <= end - offset else {
                throw .malformed("The M4A box '\(type)' at byte \(offset) says it holds \(size) bytes, more than its container has")
            }
            boxes.append(MP4Box(type: type, dataStart: offset + header, end: offset + size))
            offset += size
        }
        return boxes
    }

    /// Reads an M4A (MP4 audio): the `moov` box (anywhere among the top-level boxes, at most ``maxHeaderBytes``), its
    /// movie duration (`mvhd`), and the first sound track's sample entry (`stsd`): codec, channels and rate. A file
    /// with a video track is a video, not audio.
    static func readMP4(_ bytes: ImageHeader.Bytes) throws(AudioHeaderError) -> AudioInfo {
        var count = 0
        let top = try mp4Boxes(bytes, from: 0, to: bytes.count, count: &count)
        guard let moov = top.first(where: { $0.type == "moov" }) else {
            throw .malformed("The M4A file has no moov box (its index); remux it with `ffmpeg -i IN -c copy -movflags +faststart OUT.m4a`")
        }
        guard moov.end - moov.dataStart <= maxHeaderBytes else {
            throw .malformed("The M4A moov box is \(moov.end - moov.dataStart) bytes, over the \(maxHeaderBytes) Hoard reads")
        }
        func child(_ type: String, of box: MP4Box) throws(AudioHeaderError) -> MP4Box? {
            try mp4Boxes(bytes, from: box.dataStart, to: box.end, count: &count).first { $0.type == type }
        }
        guard let mvhd = try child("mvhd", of: moov), let version = bytes[mvhd.dataStart] else {
            throw .malformed("The M4A moov box has no mvhd")
        }
        let isLong = version == 1
        guard let scale = bytes.be32(at: mvhd.dataStart + (isLong ? 20 : 12)),
              let duration = isLong ? bytes.be64(8, at: mvhd.dataStart + 24) : bytes.be32(at: mvhd.dataStart + 16).map(UInt64.init),
              mvhd.dataStart + (isLong ? 32 : 20) <= mvhd.end
        else { throw .malformed("The M4A mvhd box is cut short") }
        var sound: (codec: String, channels: Int, rate: Int)?
        for trak in try mp4Boxes(bytes, from: moov.dataStart, to: moov.end, count: &count) where trak.type == "trak" {
            guard let mdia = try child("mdia", of: trak), let hdlr = try child("hdlr", of: mdia) else { continue }
            let handler = bytes.fourCC(at: hdlr.dataStart + 8)
            if handler == "vide" { throw .notAudio("The MP4 file has a video track; it is a video, not audio") }
            guard handler == "soun", sound == nil, let minf = try child("minf", of: mdia), let stbl = try child("stbl", of: minf),
                  let stsd = try child("stsd", of: stbl)
            else { continue }
            let entry = stsd.dataStart + 8
            guard entry + 36 <= stsd.end, let channels = bytes.be16(at: entry + 24), let rate = bytes.be32(at: entry + 32) else {
                throw .malformed("The M4A sound track's sample description is cut short")
            }
            let format = bytes.fourCC(at: entry + 4)
            let codec = ["mp4a": "aac", "alac": "alac", "Opus": "opus", "fLaC": "flac", "ac-3": "ac3"][format]
            guard let codec else { throw .notAudio("The M4A sound track is in '\(format)', which Hoard does not read") }
            var count = channels
            if let size = bytes.be32(at: entry).map(Int.init), size >= 36, entry + size <= stsd.end,
               let esds = try mp4Boxes(bytes, from: entry + 36, to: entry + size, count: &count).first(where: { $0.type == "esds" }),
               let configured = aacChannels(bytes, esds) {
                count = configured
            }
            sound = (codec, count, Int(rate >> 16))
        }
        guard let sound else { throw .notAudio("The MP4 file has no sound track") }
        guard let ms = milliseconds(samples: duration, rate: Int(scale)) else { throw .malformed("The M4A mvhd's time scale is 0") }
        return AudioInfo(mediaType: .m4a, codec: sound.codec, channels: sound.channels, sampleRate: sound.rate, durationMs: ms)
    }

    /// The channel configuration of an `esds` box's AAC AudioSpecificConfig (what ffprobe reports; the sample entry
    /// often says 2 whatever the stream holds); nil when absent or 0 (given elsewhere).
    static func aacChannels(_ bytes: ImageHeader.Bytes, _ esds: MP4Box) -> Int? {
        var offset = esds.dataStart + 4
        /// A descriptor's tag and where its body starts; its length has up to four 7-bit bytes.
        func descriptor() -> (tag: UInt8, body: Int)? {
            guard let tag = bytes[offset] else { return nil }
            var cursor = offset + 1
            for _ in 0..<4 {
                guard let byte = bytes[cursor] else { return nil }
                cursor += 1
                if byte & 0x80 == 0 { break }
            }
            return (tag, cursor)
        }
        guard let es = descriptor(), es.tag == 3, let flags = bytes[es.body + 2] else { return nil }
        offset = es.body + 3 + (flags & 0x80 != 0 ? 2 : 0) + (flags & 0x20 != 0 ? 2 : 0)
        if flags & 0x40 != 0, let length = bytes[offset] { offset += 1 + Int(length) }
        guard let config = descriptor(), config.tag == 4 else { return nil }
        offset = config.body + 13
        guard let specific = descriptor(), specific.tag == 5, let bits = bytes.be32(at: specific.body), offset < esds.end else { return nil }
        var shift = 27  // after the 5-bit object type
        if bits >> 27 == 31 { shift -= 6 }
        let frequency = bits >> UInt32(shift - 4) & 0xF
        shift -= frequency == 15 ? 28 : 4
        guard shift >= 4 else { return nil }
        let channels = Int(bits >> UInt32(shift - 4) & 0xF)
        return channels == 0 ? nil : channels == 7 ? 8 : channels
    }
}
