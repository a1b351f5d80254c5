extension ImageHeader {
    /// Whether a JPEG marker starts a frame (SOF0–SOF15); C4 (DHT), C8 (JPG) and CC (DAC) share the range but are not frames.
    static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    /// Reads a JPEG that starts with SOI (FF D8): walks the marker segments by their lengths until a SOF marker.
    ///
    /// Running out of bytes before the SOF is `truncated` when more of the file exists (the SOF lies beyond the
    /// prefix) and `malformed` when the prefix is the whole file. Every step moves forward, so the walk always ends.
    static func readJPEG(_ bytes: Bytes) throws(ImageHeaderError) -> ImageInfo {
        /// The error for running out of bytes: whether it is the prefix or the file that ended decides the code.
        func outOfBytes(_ detail: String) -> ImageHeaderError {
            bytes.isComplete
                ? .malformed("JPEG ends \(detail), before any SOF marker")
                : .truncated("JPEG has no SOF marker within the first \(bytes.count) bytes (it ends \(detail))")
        }
        var position = 2
        while true {
            guard let lead = bytes[position] else { throw outOfBytes("after a segment") }
            guard lead == 0xFF else {
                throw .malformed("JPEG has a stray byte 0x\(hex(lead)) at offset \(position) where a marker should start")
            }
            var markerAt = position + 1
            while bytes[markerAt] == 0xFF { markerAt += 1 }  // fill bytes
            guard let marker = bytes[markerAt] else { throw outOfBytes("inside a marker") }
            let segment = markerAt + 1
            switch marker {
            case 0x00:
                throw .malformed("JPEG has an invalid marker FF00 at offset \(markerAt - 1)")
            case 0x01, 0xD0...0xD7:
                position = segment  // TEM and RST0–7 stand alone, with no length
                continue
            case 0xD8:
                throw .malformed("JPEG has a second start-of-image marker at offset \(markerAt - 1)")
            case 0xD9:
                throw .malformed("JPEG reaches its end-of-image marker before any SOF marker")
            case 0xDA:
                throw .malformed("JPEG has no SOF marker before the image data")
            default:
                break
            }
            guard let length = bytes.be16(at: segment) else { throw outOfBytes("inside a segment length") }
            guard length >= 2 else {
                throw .malformed("JPEG segment FF\(hex(marker)) at offset \(markerAt - 1) has impossible length \(length)")
            }
            let end = segment + length
            guard end <= bytes.count else { throw outOfBytes("inside segment FF\(hex(marker)) of \(length) bytes") }
            if isStartOfFrame(marker) {
                return try readStartOfFrame(bytes, at: segment, length: length, marker: marker)
            }
            position = end
        }
    }

    /// Reads the size from a SOF segment whose `length` bytes at `offset` (from the length field on) are all present.
    static func readStartOfFrame(_ bytes: Bytes, at offset: Int, length: Int, marker: UInt8) throws(ImageHeaderError)
        -> ImageInfo
    {
        // Layout: length(2) precision(1) height(2) width(2) components(1) then 3 bytes per component.
        guard length >= 8, let height = bytes.be16(at: offset + 3), let width = bytes.be16(at: offset + 5),
            let components = bytes[offset + 7]
        else {
            throw .malformed("JPEG SOF segment FF\(hex(marker)) is too short (\(length) bytes)")
        }
        guard components > 0, length == 8 + 3 * Int(components) else {
            throw .malformed("JPEG SOF segment length \(length) does not fit its \(components) components")
        }
        guard height > 0 else {
            throw .malformed("JPEG SOF gives height 0 (height set later by a DNL marker is not supported)")
        }
        guard width > 0 else { throw .malformed("JPEG SOF gives width 0") }
        return ImageInfo(mediaType: .jpeg, width: width, height: height)
    }
}
