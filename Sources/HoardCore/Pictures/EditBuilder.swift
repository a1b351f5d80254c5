/// Collects the pieces of an edited picture while a format walker decides what to keep.
struct EditBuilder {
    private(set) var pieces: [PictureEdit.Piece] = []
    private(set) var removed: [String] = []
    var hadGPSPosition = false
    /// The orientation of the first EXIF block removed, and where its replacement goes.
    private(set) var orientation: (value: Int, at: Int)?

    /// Keeps a run of the original file.
    mutating func keep(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        if case .original(let last)? = pieces.last, last.upperBound == range.lowerBound {
            pieces[pieces.count - 1] = .original(last.lowerBound..<range.upperBound)
        } else {
            pieces.append(.original(range))
        }
    }

    /// Adds new bytes at the end.
    mutating func insert(_ bytes: [UInt8]) { pieces.append(.inserted(bytes)) }

    /// Notes that something labelled `label` was left out here.
    mutating func drop(_ label: String) {
        if !removed.contains(label) { removed.append(label) }
    }

    /// Notes a removed EXIF block: the first one decides the orientation kept, at the place it was.
    mutating func dropEXIF(_ summary: ExifSummary) {
        drop("EXIF")
        hadGPSPosition = hadGPSPosition || summary.hasGPSPosition
        if orientation == nil { orientation = (summary.orientation, pieces.count) }
    }

    /// Puts `block(orientation)` where the first EXIF block was, when that orientation is not upright.
    mutating func restoreOrientation(_ block: (Int) -> [UInt8]) {
        guard let orientation, orientation.value != 1 else { return }
        pieces.insert(.inserted(block(orientation.value)), at: orientation.at)
    }

    /// The edit, or nil when nothing was removed.
    var edit: PictureEdit? {
        removed.isEmpty ? nil : PictureEdit(pieces: pieces, removed: removed, hadGPSPosition: hadGPSPosition)
    }
}
