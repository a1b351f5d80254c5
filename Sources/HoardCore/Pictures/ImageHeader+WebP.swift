extension ImageHeader {
    /// How far the RIFF size may overshoot a complete file: writers that store the file size instead of
    /// file size − 8 are common enough to tolerate.
    static let riffSizeSlack = 8

    /// Reads a WebP that starts with "RIFF" size "WEBP": the first chunk must be VP8, VP8L or VP8X.
    static func readWebP(_ bytes: Bytes) throws(ImageHeaderError) -> ImageInfo {
        // Layout: "RIFF"(4) size(4 LE) "WEBP"(4) | fourCC(4) chunkSize(4 LE) payload…
        guard let riffSize = bytes.le32(at: 4) else { throw .truncated("WebP ends inside its RIFF header") }
        guard riffSize >= 12 else {
            throw .malformed("WebP RIFF size \(riffSize) is too small to hold a chunk")
        }
        if bytes.isComplete, Int(riffSize) + 8 > bytes.count + riffSizeSlack {
            throw .malformed("WebP RIFF header says the file is \(Int(riffSize) + 8) bytes but it is \(bytes.count)")
        }
        guard let chunkSize = bytes.le32(at: 16) else { throw .truncated("WebP ends before its first chunk header") }
        let payload = 20
        /// Checks the chunk is big enough and its first `needed` bytes are present.
        func require(_ needed: Int, _ name: String) throws(ImageHeaderError) {
            guard chunkSize >= needed else { throw .malformed("WebP \(name) chunk is too short (\(chunkSize) bytes)") }
            guard bytes.has(needed, at: payload) else { throw .truncated("WebP ends inside its \(name) chunk header") }
        }
        switch bytes.fourCC(at: 12) {
        case "VP8 ":
            // frame tag(3) start code 9D 01 2A, then width and height as 14 bits + 2 scale bits, little-endian.
            try require(10, "VP8")
            guard let tag = bytes[payload], let width = bytes.le16(at: payload + 6),
                let height = bytes.le16(at: payload + 8)
            else { throw .truncated("WebP ends inside its VP8 chunk header") }
            guard tag & 1 == 0 else { throw .malformed("WebP VP8 frame is not a key frame") }
            guard bytes.compare([0x9D, 0x01, 0x2A], at: payload + 3) == .match else {
                throw .malformed("WebP VP8 frame lacks the start code 9D 01 2A")
            }
            let size = (width: width & 0x3FFF, height: height & 0x3FFF)
            guard size.width > 0 else { throw .malformed("WebP VP8 width is 0") }
            guard size.height > 0 else { throw .malformed("WebP VP8 height is 0") }
            return ImageInfo(mediaType: .webp, width: size.width, height: size.height)
        case "VP8L":
            // signature 0x2F, then 32 bits LE: width−1 (14), height−1 (14), alpha hint (1), version (3).
            try require(5, "VP8L")
            guard let signature = bytes[payload], let bits = bytes.le32(at: payload + 1) else {
                throw .truncated("WebP ends inside its VP8L chunk header")
            }
            guard signature == 0x2F else { throw .malformed("WebP VP8L chunk lacks the 0x2F signature") }
            guard bits >> 29 == 0 else { throw .malformed("WebP VP8L version \(bits >> 29) is unknown") }
            return ImageInfo(mediaType: .webp, width: Int(bits & 0x3FFF) + 1, height: Int(bits >> 14 & 0x3FFF) + 1)
        case "VP8X":
            // flags(1) reserved(3), canvas width−1 (24 LE), canvas height−1 (24 LE).
            try require(10, "VP8X")
            guard let width = bytes.le24(at: payload + 4), let height = bytes.le24(at: payload + 7) else {
                throw .truncated("WebP ends inside its VP8X chunk header")
            }
            return ImageInfo(mediaType: .webp, width: width + 1, height: height + 1)
        case let other:
            throw .malformed("WebP first chunk is '\(other)', expected VP8, VP8L or VP8X")
        }
    }
}
