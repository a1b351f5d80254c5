extension ImageHeader {
    /// The bit depths the PNG spec allows for each colour type.
    static let pngBitDepths: [UInt8: Set<UInt8>] = [
        0: [1, 2, 4, 8, 16],  // greyscale
        2: [8, 16],  // truecolour
        3: [1, 2, 4, 8],  // indexed
        4: [8, 16],  // greyscale with alpha
        6: [8, 16],  // truecolour with alpha
    ]

    /// Reads a PNG whose 8-byte signature has matched: the first chunk must be a 13-byte IHDR with a good CRC.
    static func readPNG(_ bytes: Bytes) throws(ImageHeaderError) -> ImageInfo {
        // Layout: signature(8) | length(4) "IHDR"(4) | width(4) height(4) depth type compression filter interlace | CRC(4)
        guard let length = bytes.be32(at: 8), bytes.has(4, at: 12) else {
            throw .truncated("PNG ends before its IHDR chunk")
        }
        guard bytes.compare(Array("IHDR".utf8), at: 12) == .match else {
            throw .malformed("PNG first chunk is '\(bytes.fourCC(at: 12))', not IHDR")
        }
        guard length == 13 else {
            throw .malformed("PNG IHDR chunk is \(length) bytes long instead of 13")
        }
        guard let computed = crc32(bytes, from: 12, length: 17), let stored = bytes.be32(at: 29) else {
            throw .truncated("PNG ends inside its IHDR chunk")
        }
        guard computed == stored else {
            throw .malformed("PNG IHDR chunk has a bad CRC")
        }
        guard let width = bytes.be32(at: 16), let height = bytes.be32(at: 20),
            let depth = bytes[24], let colourType = bytes[25],
            let compression = bytes[26], let filter = bytes[27], let interlace = bytes[28]
        else {
            throw .truncated("PNG ends inside its IHDR chunk")
        }
        for (name, value) in [("width", width), ("height", height)] {
            guard value > 0 else { throw .malformed("PNG \(name) is 0") }
            guard value < 1 << 31 else { throw .malformed("PNG \(name) \(value) is not below 2^31") }
        }
        guard let allowedDepths = pngBitDepths[colourType] else {
            throw .malformed("PNG colour type \(colourType) does not exist")
        }
        guard allowedDepths.contains(depth) else {
            throw .malformed("PNG bit depth \(depth) is not allowed with colour type \(colourType)")
        }
        guard compression == 0 else { throw .malformed("PNG compression method \(compression) is unknown") }
        guard filter == 0 else { throw .malformed("PNG filter method \(filter) is unknown") }
        guard interlace <= 1 else { throw .malformed("PNG interlace method \(interlace) is unknown") }
        return ImageInfo(mediaType: .png, width: Int(width), height: Int(height))
    }
}
