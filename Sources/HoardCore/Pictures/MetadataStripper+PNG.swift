extension MetadataStripper {
    /// PNG chunks stripping removes: EXIF, text (where XMP and ImageMagick's raw EXIF/IPTC profiles live) and the
    /// modification time. Every other chunk, known or not, is kept.
    static let pngMetadataChunks: [String: String] = ["eXIf": "EXIF", "tEXt": "text", "zTXt": "text", "iTXt": "text", "tIME": "time"]
    /// The iTXt keyword of an XMP packet.
    static let pngXMPKeyword = Array("XML:com.adobe.xmp\0".utf8)

    /// Walks the chunks from the signature to IEND, leaving out metadata chunks; bytes after IEND are kept.
    static func stripPNG(_ bytes: ImageHeader.Bytes) throws(Problem) -> PictureEdit? {
        var edit = EditBuilder()
        edit.keep(0..<8)
        var position = 8
        while position < bytes.count {
            let type = bytes.fourCC(at: position + 4)
            let label = pngMetadataChunks[type]
            guard let length = bytes.be32(at: position), bytes.has(Int(length) + 12, at: position) else {
                throw Problem(
                    label == nil ? .unreadableImage : .corruptMetadata,
                    "the PNG chunk '\(type)' at byte \(position) claims \(bytes.be32(at: position) ?? 0) bytes but the file ends "
                        + "after \(max(0, bytes.count - position - 8)); the chunk lies about its length: re-save the picture")
            }
            let data = position + 8..<position + 8 + Int(length)
            let end = data.upperBound + 4
            switch label {
            case "EXIF":
                edit.dropEXIF(try summarize(bytes, data, at: position))
            case let label?:
                let isXMP = type == "iTXt" && bytes.compare(pngXMPKeyword, at: data.lowerBound) == .match
                edit.drop(isXMP ? "XMP" : label)
                if type != "zTXt", mentionsGPS(bytes, data) { edit.hadGPSPosition = true }
            case nil:
                edit.keep(position..<end)
            }
            position = end
            if type == "IEND" { break }
        }
        edit.keep(position..<bytes.count)
        edit.restoreOrientation { orientation in
            let tiff = ExifSummary.minimalTIFF(orientation: orientation)
            let body = Array("eXIf".utf8) + tiff
            return bigEndian32(tiff.count) + body + bigEndian32(Int(ImageHeader.crc32(body)))
        }
        return edit.edit
    }

    /// Four bytes, most significant first.
    static func bigEndian32(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// Four bytes, least significant first.
    static func littleEndian32(_ value: Int) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24 & 0xFF)]
    }
}
