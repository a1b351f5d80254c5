import HoardCore

/// Audio header readers (Ogg Vorbis and Opus, MP3, FLAC, WAV, M4A, WebM audio): any bytes are read or refused without
/// crashing, and what is accepted has a known audio type, channels, a sample rate and a duration its bytes can hold.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAudioHeader(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput(start, count).bytes
    if let info = try? AudioHeader.read(bytes) {
        precondition(info.mediaType.isAudio, "\(info)")
        precondition(info.channels > 0 && info.sampleRate > 0 && info.durationMs > 0, "\(info)")
        precondition(info.durationMs / 1000 <= bytes.count / AudioHeader.minBytesPerSecond, "\(info)")
    }
    return 0
}
