extension MetadataStripper {
    /// The identifier that starts an EXIF APP1 segment.
    static let exifIdentifier = Array("Exif\0\0".utf8)
    /// The identifiers that start XMP APP1 segments (main and extended).
    static let xmpIdentifiers = [Array("http://ns.adobe.com/xap/1.0/\0".utf8), Array("http://ns.adobe.com/xmp/extension/\0".utf8)]

    /// Walks the marker segments up to the first SOS, leaving out EXIF and XMP (APP1) and IPTC (APP13); the scan
    /// data and everything after it are kept as they are.
    static func stripJPEG(_ bytes: ImageHeader.Bytes) throws(Problem) -> PictureEdit? {
        var edit = EditBuilder()
        edit.keep(0..<2)
        var position = 2
        var previous = (name: "the start-of-image marker", isMetadata: false)
        while position < bytes.count {
            guard bytes[position] == 0xFF else {
                throw Problem(
                    previous.isMetadata ? .corruptMetadata : .unreadableImage,
                    "\(previous.name) gives a length that does not end at the next marker (byte \(position) is "
                    + "0x\(ImageHeader.hex(bytes[position] ?? 0)), not FF); the segment lies about its length: re-save the picture")
            }
            var markerAt = position + 1
            while bytes[markerAt] == 0xFF { markerAt += 1 }
            guard let marker = bytes[markerAt] else { break }
            let segment = markerAt + 1
            if marker == 0xDA || marker == 0xD9 { break }  // scan data or end of image: the rest is kept whole
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                edit.keep(position..<segment)
                position = segment
                continue
            }
            let label = segmentLabel(bytes, marker: marker, at: segment)
            let name = "the FF\(ImageHeader.hex(marker))\(label.map { " (\($0))" } ?? "") segment at byte \(position)"
            guard let length = bytes.be16(at: segment), length >= 2, segment + length <= bytes.count else {
                throw Problem(
                    label == nil ? .unreadableImage : .corruptMetadata,
                    "\(name) claims \(bytes.be16(at: segment) ?? 0) bytes but the file ends after \(bytes.count - segment); "
                        + "the segment lies about its length: re-save the picture")
            }
            let end = segment + length
            switch label {
            case "EXIF":
                edit.dropEXIF(try summarize(bytes, min(segment + 2 + exifIdentifier.count, end)..<end, at: position))
            case let label?:
                edit.drop(label)
                if label == "XMP", mentionsGPS(bytes, segment..<end) { edit.hadGPSPosition = true }
            case nil:
                edit.keep(position..<end)
            }
            previous = (name, label != nil)
            position = end
        }
        edit.keep(position..<bytes.count)
        edit.restoreOrientation { orientation in
            let tiff = ExifSummary.minimalTIFF(orientation: orientation)
            let length = 2 + exifIdentifier.count + tiff.count
            return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + exifIdentifier + tiff
        }
        return edit.edit
    }

    /// `EXIF`, `XMP` or `IPTC` for the metadata segments stripping removes, nil for every other segment.
    private static func segmentLabel(_ bytes: ImageHeader.Bytes, marker: UInt8, at segment: Int) -> String? {
        switch marker {
        case 0xE1 where bytes.compare(exifIdentifier, at: segment + 2) == .match: "EXIF"
        case 0xE1 where xmpIdentifiers.contains(where: { bytes.compare($0, at: segment + 2) == .match }): "XMP"
        case 0xED: "IPTC"
        default: nil
        }
    }
}
