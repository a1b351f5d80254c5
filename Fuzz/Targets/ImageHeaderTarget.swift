import HoardCore

/// Image header readers (PNG, JPEG, WebP): any prefix, complete or not, is read without crashing, and what is
/// accepted has a known type and positive sides.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImageHeader(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput(start, count).bytes
    for isComplete in [true, false] {
        if let info = try? ImageHeader.read(bytes, isComplete: isComplete) {
            precondition(info.width > 0 && info.height > 0, "\(info)")
            precondition(MediaType.allCases.contains(info.mediaType))
        }
    }
    _ = ArchiveSniffer.guess(bytes)
    return 0
}
