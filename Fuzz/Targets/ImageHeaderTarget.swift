import HoardCore

/// Image header readers (PNG, JPEG, WebP, GIF, WebM) and the animation reader (GIF, APNG, animated WebP): any prefix,
/// complete or not, is read without crashing; what is accepted has a known type and positive sides, and an animation
/// has at least two frames.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImageHeader(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput(start, count).bytes
    for isComplete in [true, false] {
        if let info = try? ImageHeader.read(bytes, isComplete: isComplete) {
            precondition(info.width > 0 && info.height > 0, "\(info)")
            precondition(MediaType.allCases.contains(info.mediaType))
        }
    }
    if let info = try? ImageHeader.read(bytes, isComplete: true), AnimationReader.needsScan(bytes, info) {
        let animation = bytes.withUnsafeBytes { try? AnimationReader.read($0, info) }
        if let frames = animation?.frames { precondition(frames > 1, "\(frames) frames") }
    }
    _ = ArchiveSniffer.guess(bytes)
    return 0
}
