extension MetadataStripper {
    /// The VP8X flag bits of an EXIF and of an XMP chunk.
    static let webpEXIFFlag: UInt8 = 0x08
    static let webpXMPFlag: UInt8 = 0x04

    /// Leaves out the EXIF and XMP chunks of an extended (VP8X) WebP, clears their VP8X flags and rewrites the RIFF
    /// size. Simple WebPs (a lone VP8 or VP8L chunk) cannot carry metadata and are left alone.
    static func stripWebP(_ bytes: ImageHeader.Bytes) throws(Problem) -> PictureEdit? {
        guard bytes.fourCC(at: 12) == "VP8X", let vp8xSize = bytes.le32(at: 16), vp8xSize >= 10, bytes.has(18, at: 12) else {
            return nil
        }
        var edit = EditBuilder()
        var position = 12
        while position < bytes.count {
            let type = bytes.fourCC(at: position)
            let label: String? = switch type {
            case "EXIF": "EXIF"
            case "XMP ": "XMP"
            default: nil
            }
            guard let size = bytes.le32(at: position + 4), bytes.has(Int(size) + 8, at: position) else {
                throw Problem(
                    label == nil ? .unreadableImage : .corruptMetadata,
                    "the WebP chunk '\(type)' at byte \(position) claims \(bytes.le32(at: position + 4) ?? 0) bytes but the file "
                        + "ends after \(max(0, bytes.count - position - 8)); the chunk lies about its length: re-save the picture")
            }
            let data = position + 8..<position + 8 + Int(size)
            let end = min(data.upperBound + Int(size & 1), bytes.count)  // chunks are padded to an even size
            switch label {
            case "EXIF":
                let tiff = bytes.compare(exifIdentifier, at: data.lowerBound) == .match ? data.lowerBound + exifIdentifier.count : data.lowerBound
                edit.dropEXIF(try summarize(bytes, min(tiff, data.upperBound)..<data.upperBound, at: position))
            case let label?:
                edit.drop(label)
                if mentionsGPS(bytes, data) { edit.hadGPSPosition = true }
            case nil:
                edit.keep(position..<end)
            }
            position = end
        }
        edit.restoreOrientation { orientation in
            let tiff = ExifSummary.minimalTIFF(orientation: orientation)
            return Array("EXIF".utf8) + littleEndian32(tiff.count) + tiff
        }
        guard var result = edit.edit else { return nil }
        // The RIFF header and the VP8X flags are rewritten; the first piece is the VP8X chunk kept from byte 12.
        var flags = bytes.buffer[20] & ~(webpEXIFFlag | webpXMPFlag)
        if result.pieces.contains(where: { if case .inserted = $0 { true } else { false } }) { flags |= webpEXIFFlag }
        let body = result.size
        var head = Array("RIFF".utf8) + littleEndian32(body + 4) + Array("WEBP".utf8)
        head += Array(bytes.buffer[12..<20]) + [flags] + Array(bytes.buffer[21..<30])
        guard case .original(let first)? = result.pieces.first, first.lowerBound == 12 else { return nil }
        result.pieces[0] = .original(30..<first.upperBound)
        result.pieces.insert(.inserted(head), at: 0)
        return result
    }
}
