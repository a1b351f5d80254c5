extension AudioHeader {
    /// Reads a RIFF WAVE file: its `fmt ` chunk (PCM or float samples only, what browsers play) and the size of its
    /// `data` chunk, which must lie inside the file, walking the chunks by their sizes.
    static func readWAV(_ bytes: ImageHeader.Bytes) throws(AudioHeaderError) -> AudioInfo {
        guard bytes.compare(Array("WAVE".utf8), at: 8) == .match else {
            throw .notAudio("The file is a RIFF container but not a WAVE file")
        }
        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, byteRate: Int, bits: Int)?
        var chunks = 0
        while bytes.has(8, at: offset) {
            chunks += 1
            guard chunks <= maxElements else { throw .malformed("The WAV file has more than \(maxElements) chunks") }
            guard let size = bytes.le32(at: offset + 4).map(Int.init) else { break }
            let id = bytes.fourCC(at: offset)
            let body = offset + 8
            if id == "data" {
                guard let format else { throw .malformed("The WAV file's data chunk comes before its fmt chunk") }
                guard bytes.has(size, at: body) else {
                    throw .malformed("The WAV data chunk says it holds \(size) bytes, but only \(bytes.count - body) follow it; its size lies")
                }
                guard format.byteRate > 0, let ms = milliseconds(samples: UInt64(size), rate: format.byteRate) else {
                    throw .malformed("The WAV fmt chunk's byte rate is 0")
                }
                let codec = try wavCodec(tag: format.tag, bits: format.bits)
                return AudioInfo(mediaType: .wav, codec: codec, channels: format.channels, sampleRate: format.rate, durationMs: ms)
            }
            guard bytes.has(size, at: body) else {
                throw .malformed("The WAV chunk '\(id)' at byte \(offset) says it holds \(size) bytes, more than the file has")
            }
            if id == "fmt " {
                guard size >= 16, let tag = bytes.le16(at: body), let channels = bytes.le16(at: body + 2),
                      let rate = bytes.le32(at: body + 4), let byteRate = bytes.le32(at: body + 8), let bits = bytes.le16(at: body + 14)
                else { throw .malformed("The WAV fmt chunk is shorter than 16 bytes") }
                var formatTag = tag
                if tag == 0xFFFE {
                    guard size >= 26, let sub = bytes.le16(at: body + 24) else { throw .malformed("The WAV extensible fmt chunk is cut short") }
                    formatTag = sub
                }
                // In 64 bits: a lying header's channels × bits × rate overflows 32 (found by the fuzzer).
                guard Int(byteRate) == channels * bits / 8 * Int(rate) || formatTag != 1 && formatTag != 3 else {
                    throw .malformed("The WAV fmt chunk's byte rate (\(byteRate)) is not channels × rate × bytes a sample; it lies")
                }
                format = (formatTag, channels, Int(rate), Int(byteRate), bits)
            }
            offset = body + size + (size & 1)
        }
        throw .malformed("The WAV file has no data chunk")
    }

    /// ffprobe's name of a WAVE format tag and sample size; only PCM and float, which every browser plays.
    static func wavCodec(tag: Int, bits: Int) throws(AudioHeaderError) -> String {
        switch (tag, bits) {
        case (1, 8): return "pcm_u8"
        case (1, 16): return "pcm_s16le"
        case (1, 24): return "pcm_s24le"
        case (1, 32): return "pcm_s32le"
        case (3, 32): return "pcm_f32le"
        case (3, 64): return "pcm_f64le"
        default:
            throw .notAudio("The WAV file holds format \(tag) at \(bits) bits, not PCM or float samples; convert it to FLAC or PCM WAV")
        }
    }
}
