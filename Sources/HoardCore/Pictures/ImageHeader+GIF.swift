extension ImageHeader {
    /// Reads a GIF that starts with "GIF8": version 87a or 89a, then the logical screen's width and height
    /// (little-endian). Frames are counted by ``AnimationReader``.
    static func readGIF(_ bytes: Bytes) throws(ImageHeaderError) -> ImageInfo {
        // Layout: "GIF87a"/"GIF89a"(6) | width(2 LE) height(2 LE) flags background aspect
        guard bytes.has(10, at: 0) else { throw .truncated("GIF ends inside its header") }
        guard bytes.compare(Array("7a".utf8), at: 4) == .match || bytes.compare(Array("9a".utf8), at: 4) == .match else {
            throw .malformed("GIF version '\(bytes.fourCC(at: 2))' is neither 87a nor 89a")
        }
        guard let width = bytes.le16(at: 6), let height = bytes.le16(at: 8) else { throw .truncated("GIF ends inside its header") }
        guard width > 0 else { throw .malformed("GIF width is 0") }
        guard height > 0 else { throw .malformed("GIF height is 0") }
        return ImageInfo(mediaType: .gif, width: width, height: height)
    }
}
