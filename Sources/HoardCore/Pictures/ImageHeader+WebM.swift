extension ImageHeader {
    /// The EBML magic every Matroska and WebM file starts with.
    static let webmSignature: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3]

    /// EBML element IDs (marker bits kept, as written) that the WebM readers (pictures and audio) look at.
    enum EBMLID {
        static let header: UInt64 = 0x1A45_DFA3, docType: UInt64 = 0x4282, segment: UInt64 = 0x1853_8067
        static let info: UInt64 = 0x1549_A966, timecodeScale: UInt64 = 0x2A_D7B1, duration: UInt64 = 0x4489
        static let tracks: UInt64 = 0x1654_AE6B, trackEntry: UInt64 = 0xAE, trackType: UInt64 = 0x83, video: UInt64 = 0xE0
        static let pixelWidth: UInt64 = 0xB0, pixelHeight: UInt64 = 0xBA, cluster: UInt64 = 0x1F43_B675
        static let codecID: UInt64 = 0x86, audio: UInt64 = 0xE1, samplingFrequency: UInt64 = 0xB5, channels: UInt64 = 0x9F
    }

    /// One EBML element header: its ID, where its data starts and ends (`end` nil: unknown size).
    struct EBMLElement {
        var id: UInt64
        var dataStart: Int
        var end: Int?
    }

    /// Reads a WebM (EBML with DocType `webm`): the width and height of the first video track, and the duration
    /// from the segment's Info, walking elements by their sizes. An element whose size runs past its parent or past
    /// the file is `malformed` (sizes that lie); a Cluster before any video track, too.
    static func readWebM(_ bytes: Bytes) throws(ImageHeaderError) -> ImageInfo {
        let ebml = EBMLReader(bytes: bytes, wanted: "video size")
        let segment = try ebml.segment()
        var offset = segment.dataStart
        var timecodeScale: UInt64 = 1_000_000
        var duration: Double?
        while let child = try ebml.next(in: segment, at: &offset) {
            switch child.id {
            case EBMLID.info: (timecodeScale, duration) = try ebml.info(child)
            case EBMLID.tracks:
                for track in try ebml.children(of: child, "Tracks") where track.id == EBMLID.trackEntry {
                    let fields = try ebml.children(of: track, "a TrackEntry")
                    guard let type = fields.first(where: { $0.id == EBMLID.trackType }), try ebml.unsigned(type) == 1,
                          let video = fields.first(where: { $0.id == EBMLID.video })
                    else { continue }
                    let sizes = try ebml.children(of: video, "a Video track")
                    guard let w = sizes.first(where: { $0.id == EBMLID.pixelWidth }), let h = sizes.first(where: { $0.id == EBMLID.pixelHeight })
                    else { throw .malformed("WebM video track has no PixelWidth and PixelHeight") }
                    let (width, height) = (try ebml.unsigned(w), try ebml.unsigned(h))
                    guard width > 0, height > 0, width < 1 << 31, height < 1 << 31 else {
                        throw .malformed("WebM video size \(width)×\(height) is not a picture size")
                    }
                    let milliseconds = EBMLReader.milliseconds(duration, scale: timecodeScale)
                    return ImageInfo(
                        mediaType: .webm, width: Int(width), height: Int(height), animation: Animation(frames: nil, durationMs: milliseconds))
                }
                throw .malformed("WebM has no video track")
            case EBMLID.cluster:
                throw .malformed("WebM reaches its first Cluster before any Tracks")
            default:
                guard child.end != nil else { throw .malformed("WebM element before Tracks has an unknown size") }
            }
        }
        throw .malformed("WebM's Segment ends before any Tracks")
    }

    /// Walks EBML elements by their sizes: every read is bounds-checked, and an element whose size runs past its parent
    /// or past the file is `malformed` (sizes that lie). Shared by the WebM picture reader and ``AudioHeader``.
    struct EBMLReader {
        /// The bytes read.
        let bytes: Bytes
        /// What the caller looks for, for the message when a prefix ends first (`video size`).
        let wanted: String

        /// The error when the bytes end inside `what`: malformed for a whole file, truncated for a prefix.
        func outOfBytes(_ what: String) -> ImageHeaderError {
            bytes.isComplete ? .malformed("WebM ends inside \(what)") : .truncated("WebM has no \(wanted) within the first \(bytes.count) bytes")
        }

        /// The element at `offset`, which must end by `limit` (its parent's end, or the file's).
        func element(at offset: Int, within limit: Int?, _ what: String) throws(ImageHeaderError) -> EBMLElement {
            guard let first = bytes[offset] else { throw outOfBytes(what) }
            let idLength = first.leadingZeroBitCount + 1
            guard idLength <= 4 else { throw .malformed("WebM has an invalid element ID at byte \(offset)") }
            guard let id = bytes.be64(idLength, at: offset), let sizeLead = bytes[offset + idLength] else { throw outOfBytes(what) }
            let sizeLength = sizeLead.leadingZeroBitCount + 1
            guard sizeLength <= 8 else { throw .malformed("WebM has an invalid element size at byte \(offset + idLength)") }
            guard let raw = bytes.be64(sizeLength, at: offset + idLength) else { throw outOfBytes(what) }
            let marker = UInt64(1) << UInt64(7 * sizeLength)
            let size = raw & (marker - 1)
            let dataStart = offset + idLength + sizeLength
            if size == marker - 1 { return EBMLElement(id: id, dataStart: dataStart, end: nil) }
            let room = (limit ?? (bytes.isComplete ? bytes.count : Int.max / 2)) - dataStart
            guard size <= UInt64(max(room, 0)) else {
                throw .malformed(
                    "WebM element \(String(id, radix: 16, uppercase: true)) at byte \(offset) says it holds \(size) bytes, "
                        + "more than its container has")
            }
            return EBMLElement(id: id, dataStart: dataStart, end: dataStart + Int(size))
        }

        /// Unsigned integer data of an element (up to 8 bytes).
        func unsigned(_ element: EBMLElement) throws(ImageHeaderError) -> UInt64 {
            guard let end = element.end, end - element.dataStart <= 8 else { throw .malformed("WebM integer element has a bad size") }
            guard let value = bytes.be64(end - element.dataStart, at: element.dataStart) else { throw outOfBytes("an integer") }
            return value
        }

        /// String data of an element (a DocType, a CodecID), without its zero bytes.
        func string(_ element: EBMLElement) throws(ImageHeaderError) -> String {
            guard let end = element.end, bytes.has(end - element.dataStart, at: element.dataStart) else { throw outOfBytes("a string") }
            return String(decoding: (element.dataStart..<end).compactMap { bytes[$0] }.filter { $0 != 0 }, as: UTF8.self)
        }

        /// An EBML float (4 or 8 bytes, big-endian IEEE 754); nil for another size.
        func float(_ element: EBMLElement) -> Double? {
            guard let end = element.end else { return nil }
            let length = end - element.dataStart
            guard length == 4 || length == 8, let raw = bytes.be64(length, at: element.dataStart) else { return nil }
            return length == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw)
        }

        /// The children of a master element of known size.
        func children(of parent: EBMLElement, _ what: String) throws(ImageHeaderError) -> [EBMLElement] {
            guard let end = parent.end else { throw .malformed("WebM \(what) has an unknown size") }
            var found: [EBMLElement] = []
            var offset = parent.dataStart
            while offset < end {
                let child = try element(at: offset, within: end, what)
                guard let childEnd = child.end else { throw .malformed("WebM element inside \(what) has an unknown size") }
                found.append(child)
                offset = childEnd
            }
            return found
        }

        /// Checks the EBML header (its DocType must be `webm`) and returns the Segment that follows it.
        func segment() throws(ImageHeaderError) -> EBMLElement {
            let header = try element(at: 0, within: nil, "its EBML header")
            guard let docType = try children(of: header, "the EBML header").first(where: { $0.id == EBMLID.docType }) else {
                throw .malformed("WebM's EBML header names no DocType")
            }
            let name = try string(docType)
            guard name == "webm" else { throw .notAnImage("The file is a Matroska '\(name)' file, not WebM") }
            guard let headerEnd = header.end else { throw .malformed("WebM's EBML header has an unknown size") }
            let segment = try element(at: headerEnd, within: nil, "its Segment")
            guard segment.id == EBMLID.segment else { throw .malformed("WebM's EBML header is not followed by a Segment") }
            return segment
        }

        /// The Segment's child at `offset`, and moves `offset` past it; nil at the Segment's end. After a child of
        /// unknown size (a live stream's Cluster) the walk ends.
        func next(in segment: EBMLElement, at offset: inout Int) throws(ImageHeaderError) -> EBMLElement? {
            guard offset >= 0 else { return nil }
            if let end = segment.end, offset >= end { return nil }
            let child = try element(at: offset, within: segment.end, "its Segment")
            offset = child.end ?? -1
            return child
        }

        /// The TimecodeScale (1 ms unless given) and the Duration of a Segment's Info.
        func info(_ info: EBMLElement) throws(ImageHeaderError) -> (scale: UInt64, duration: Double?) {
            var scale: UInt64 = 1_000_000
            var duration: Double?
            for field in try children(of: info, "Info") {
                if field.id == EBMLID.timecodeScale { scale = try unsigned(field) }
                if field.id == EBMLID.duration { duration = float(field) }
            }
            return (scale, duration)
        }

        /// A duration in TimecodeScale units as whole milliseconds; nil when absent or absurd.
        static func milliseconds(_ duration: Double?, scale: UInt64) -> Int? {
            duration.map { $0 * Double(scale) / 1_000_000 }.flatMap { $0.isFinite && $0 >= 0 && $0 < 1e12 ? Int($0.rounded()) : nil }
        }
    }
}
