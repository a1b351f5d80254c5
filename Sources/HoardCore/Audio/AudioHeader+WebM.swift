extension AudioHeader {
    /// Reads a WebM audio file (EBML with DocType `webm`, one audio track, no video track): the codec, channels and
    /// rate of its first audio track and the duration of its Info, walking elements with the picture reader's
    /// ``ImageHeader/EBMLReader``.
    static func readWebMAudio(_ bytes: ImageHeader.Bytes) throws(AudioHeaderError) -> AudioInfo {
        do {
            let ebml = ImageHeader.EBMLReader(bytes: bytes, wanted: "audio track")
            typealias ID = ImageHeader.EBMLID
            let segment = try ebml.segment()
            var offset = segment.dataStart
            var scale: UInt64 = 1_000_000
            var duration: Double?
            var sound: (codec: String, channels: Int, rate: Int)?
            var elements = 0
            while let child = try ebml.next(in: segment, at: &offset), child.id != ID.cluster {
                elements += 1
                guard elements <= maxElements else { throw AudioHeaderError.malformed("The WebM file has more than \(maxElements) elements") }
                if child.id == ID.info { (scale, duration) = try ebml.info(child) }
                guard child.id == ID.tracks else { continue }
                for track in try ebml.children(of: child, "Tracks") where track.id == ID.trackEntry {
                    let fields = try ebml.children(of: track, "a TrackEntry")
                    guard let type = fields.first(where: { $0.id == ID.trackType }) else { continue }
                    let kind = try ebml.unsigned(type)
                    if kind == 1 { throw AudioHeaderError.notAudio("The WebM file has a video track; it is a video, not audio") }
                    guard kind == 2, sound == nil, let audio = fields.first(where: { $0.id == ID.audio }),
                          let codecID = fields.first(where: { $0.id == ID.codecID })
                    else { continue }
                    let settings = try ebml.children(of: audio, "an Audio track")
                    let rate = settings.first { $0.id == ID.samplingFrequency }.flatMap { ebml.float($0) } ?? 8000
                    let channels = try settings.first { $0.id == ID.channels }.map { try ebml.unsigned($0) } ?? 1
                    let name = try ebml.string(codecID)
                    guard let codec = ["A_OPUS": "opus", "A_VORBIS": "vorbis"][name] else {
                        throw AudioHeaderError.notAudio("The WebM audio track is in '\(name)'; WebM audio is Opus or Vorbis")
                    }
                    guard rate.isFinite, rate >= 1, rate < 1e7, channels < 256 else {
                        throw AudioHeaderError.malformed("The WebM audio track's rate or channels are out of range")
                    }
                    sound = (codec, Int(channels), Int(rate))
                }
            }
            guard let sound else { throw AudioHeaderError.malformed("The WebM file has no audio track before its first Cluster") }
            guard let ms = ImageHeader.EBMLReader.milliseconds(duration, scale: scale) else {
                throw AudioHeaderError.malformed("The WebM file's Info gives no duration (written as a stream?); remux it with ffmpeg")
            }
            return AudioInfo(mediaType: .webmAudio, codec: sound.codec, channels: sound.channels, sampleRate: sound.rate, durationMs: ms)
        } catch let error as ImageHeaderError {
            throw error.code == .notAnImage ? .notAudio(error.message) : .malformed(error.message)
        } catch let error as AudioHeaderError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }
}
