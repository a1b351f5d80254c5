extension AudioHeader {
    /// One MPEG audio frame header.
    struct MPEGFrame {
        /// 1 (MPEG-1), 2 (MPEG-2) or 25 (MPEG-2.5).
        var version: Int
        /// 1, 2 or 3.
        var layer: Int
        /// Bits a second (0: free format).
        var bitrate: Int
        var sampleRate: Int
        var channels: Int
        /// Bytes in the frame, header included.
        var length: Int
        /// Samples the frame decodes to.
        var samples: Int
    }

    /// The MPEG audio frame header at `offset`; nil when the four bytes are not one (or use a free or bad bitrate).
    static func mpegFrame(_ bytes: ImageHeader.Bytes, at offset: Int) -> MPEGFrame? {
        guard let header = bytes.be32(at: offset), header >> 21 == 0x7FF else { return nil }
        let versionBits = Int(header >> 19 & 3), layerBits = Int(header >> 17 & 3)
        let bitrateIndex = Int(header >> 12 & 15), rateIndex = Int(header >> 10 & 3)
        guard versionBits != 1, layerBits != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
        let version = versionBits == 3 ? 1 : versionBits == 2 ? 2 : 25
        let layer = 4 - layerBits
        let rates = [44_100, 48_000, 32_000]
        let sampleRate = rates[rateIndex] / (version == 1 ? 1 : version == 2 ? 2 : 4)
        let table: [Int]
        switch (version == 1, layer) {
        case (true, 1): table = [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
        case (true, 2): table = [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
        case (true, _): table = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        case (false, 1): table = [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
        case (false, _): table = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        }
        let bitrate = table[bitrateIndex] * 1000
        let padding = Int(header >> 9 & 1)
        let samples = layer == 1 ? 384 : layer == 3 && version != 1 ? 576 : 1152
        let length = layer == 1 ? (12 * bitrate / sampleRate + padding) * 4 : samples / 8 * bitrate / sampleRate + padding
        let channels = header >> 6 & 3 == 3 ? 1 : 2
        return MPEGFrame(
            version: version, layer: layer, bitrate: bitrate, sampleRate: sampleRate, channels: channels, length: length, samples: samples)
    }

    /// Reads an MP3 (MPEG-1, 2 or 2.5, layer I, II or III) whose audio starts at `start`: the first frame that another
    /// frame follows (within ``scanWindow``), then the duration from its Xing/Info or VBRI header's frame count, else
    /// (constant bit rate) from the bytes after it and its bit rate, as ffprobe does.
    static func readMP3(_ bytes: ImageHeader.Bytes, from start: Int) throws(AudioHeaderError) -> AudioInfo {
        var offset = start
        var found: MPEGFrame?
        while found == nil, offset < min(bytes.count, start + scanWindow) {
            if bytes[offset] == 0xFF, let frame = mpegFrame(bytes, at: offset) {
                let next = offset + frame.length
                if next == bytes.count || mpegFrame(bytes, at: next).map({ $0.sampleRate == frame.sampleRate && $0.layer == frame.layer }) == true {
                    found = frame
                    break
                }
            }
            offset += 1
        }
        guard let frame = found else {
            throw start > 0 ? .malformed("The ID3 tags are not followed by MPEG audio frames within \(scanWindow) bytes")
                : .notAudio("The file has no two MPEG audio frames in a row in its first \(scanWindow) bytes")
        }
        let codec = frame.layer == 3 ? "mp3" : frame.layer == 2 ? "mp2" : "mp1"
        let sideInfo = frame.version == 1 ? (frame.channels == 1 ? 17 : 32) : (frame.channels == 1 ? 9 : 17)
        let xing = offset + 4 + sideInfo
        var frames: UInt32?
        if bytes.compare(Array("Xing".utf8), at: xing) == .match || bytes.compare(Array("Info".utf8), at: xing) == .match {
            guard let flags = bytes.be32(at: xing + 4) else { throw .malformed("The MP3's Xing header is cut short") }
            if flags & 1 != 0 {
                guard let count = bytes.be32(at: xing + 8) else { throw .malformed("The MP3's Xing header is cut short") }
                frames = count
            }
        } else if bytes.compare(Array("VBRI".utf8), at: offset + 36) == .match {
            guard let count = bytes.be32(at: offset + 36 + 14) else { throw .malformed("The MP3's VBRI header is cut short") }
            frames = count
        }
        let samples: UInt64
        if let frames {
            guard frames > 0 else { throw .malformed("The MP3's Xing/VBRI header says it holds no frame") }
            samples = UInt64(frames) * UInt64(frame.samples)
        } else {
            var audioBytes = bytes.count - offset
            if bytes.compare(Array("TAG".utf8), at: bytes.count - 128) == .match { audioBytes -= 128 }
            samples = UInt64(audioBytes) * 8 * UInt64(frame.sampleRate) / UInt64(frame.bitrate)
        }
        guard let ms = milliseconds(samples: samples, rate: frame.sampleRate) else { throw .malformed("The MP3 gives no duration") }
        return AudioInfo(mediaType: .mp3, codec: codec, channels: frame.channels, sampleRate: frame.sampleRate, durationMs: ms)
    }
}
