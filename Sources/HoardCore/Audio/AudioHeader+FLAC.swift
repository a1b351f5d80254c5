extension AudioHeader {
    /// Reads a FLAC file whose `fLaC` marker is at `start` (after ID3 tags): STREAMINFO's rate, channels and total
    /// samples, then every metadata block's header, which must lie inside the file.
    static func readFLAC(_ bytes: ImageHeader.Bytes, at start: Int) throws(AudioHeaderError) -> AudioInfo {
        var offset = start + 4
        guard let header = bytes[offset], let length = bytes.uint(3, at: offset + 1, bigEndian: true) else {
            throw .truncated("The FLAC file ends before its STREAMINFO block")
        }
        guard header & 0x7F == 0, length == 34, bytes.has(34, at: offset + 4) else {
            throw .malformed("The FLAC file's first metadata block is not a 34-byte STREAMINFO")
        }
        let info = offset + 4
        guard let packed = bytes.be64(8, at: info + 10) else { throw .truncated("The FLAC STREAMINFO is cut short") }
        let rate = Int(packed >> 44)
        let channels = Int(packed >> 41 & 0x7) + 1
        let samples = packed & 0xF_FFFF_FFFF
        var blocks = 0
        var isLast = header & 0x80 != 0
        offset = info + 34
        while !isLast {
            blocks += 1
            guard blocks <= maxElements else { throw .malformed("The FLAC file has more than \(maxElements) metadata blocks") }
            guard let next = bytes[offset], let size = bytes.uint(3, at: offset + 1, bigEndian: true) else {
                throw .malformed("The FLAC file ends inside its metadata")
            }
            guard offset + 4 + Int(size) - start <= maxHeaderBytes else {
                throw .malformed("The FLAC metadata is larger than the \(maxHeaderBytes) bytes Hoard reads; strip the pictures in it")
            }
            guard bytes.has(Int(size), at: offset + 4) else {
                throw .malformed("The FLAC metadata block at byte \(offset) says it holds \(size) bytes, more than the file has")
            }
            isLast = next & 0x80 != 0
            offset += 4 + Int(size)
        }
        guard bytes.compare([0xFF], at: offset) == .match, let sync = bytes[offset + 1], sync & 0xFE == 0xF8 else {
            throw .malformed("The FLAC metadata is not followed by an audio frame")
        }
        guard samples > 0 else { throw .malformed("The FLAC STREAMINFO does not say how many samples the file holds") }
        guard let ms = milliseconds(samples: samples, rate: rate) else { throw .malformed("The FLAC STREAMINFO's sample rate is 0") }
        return AudioInfo(mediaType: .flac, codec: "flac", channels: channels, sampleRate: rate, durationMs: ms)
    }
}
