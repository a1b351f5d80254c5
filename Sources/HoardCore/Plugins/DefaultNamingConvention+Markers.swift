extension DefaultNamingConvention {
    /// What a file name says about its size, and the name without it.
    struct Marker: Equatable {
        /// The stem with the marker (and the separator before it) removed.
        var stem: String
        /// The footprint, nil when the name gives none.
        var footprint: Footprint?
    }

    /// Characters that separate the words of a file name.
    private static let separators: Set<Character> = [" ", "_", "-"]
    /// Opening brackets and the one that closes each.
    private static let brackets: [Character: Character] = ["[": "]", "(": ")"]

    /// Finds the size marker of a stem: the last `WxH` word (after a space, underscore or hyphen, or alone inside
    /// brackets or parentheses), else, when the kind takes them, the last size word anywhere (`Goblin_Medium_01`,
    /// `Large Ogre`, `rat (tiny)`). Only the marker found is removed from the name. A `WxH` with a side of 0 or over
    /// ``Footprint/maxTiles`` is `BAD_FOOTPRINT`; `2x`, `x2` and `2x2x2` are no markers, nor is a size word that is the
    /// whole name.
    static func splitMarker(_ stem: String, acceptsSizeWords: Bool, entry: String) throws(Problem) -> Marker {
        let chars = Array(stem)
        var footprintWord: (range: Range<Int>, width: Int, height: Int)?
        var sizeWord: (range: Range<Int>, side: Int)?
        var start = 0
        while start < chars.count {
            guard !isBoundary(chars[start]) else {
                start += 1
                continue
            }
            var end = start
            while end < chars.count, !isBoundary(chars[end]) { end += 1 }
            let word = String(chars[start..<end])
            let afterSeparator = start > 0 && (separators.contains(chars[start - 1]) || brackets[chars[start - 1]] != nil)
            if afterSeparator, let (width, height) = footprintSides(word) {
                footprintWord = (start..<end, width, height)
            } else if acceptsSizeWords, let side = sizeWords[word.lowercased()] {
                sizeWord = (start..<end, side)
            }
            start = end
        }
        if let found = footprintWord {
            guard found.width >= 1, found.height >= 1, let footprint = Footprint(width: found.width, height: found.height) else {
                throw Problem(
                    .badFootprint, "footprint \(found.width)x\(found.height) is outside 1 to \(Footprint.maxTiles) tiles a side",
                    entry: entry)
            }
            return Marker(stem: removing(found.range, from: chars), footprint: footprint)
        }
        // A size word that is the whole name (`Huge.png`) is the name.
        if let found = sizeWord, case let stem = removing(found.range, from: chars), !stem.isEmpty {
            return Marker(stem: stem, footprint: Footprint(width: found.side, height: found.side))
        }
        return Marker(stem: stem, footprint: nil)
    }

    private static func isBoundary(_ char: Character) -> Bool {
        separators.contains(char) || char == "[" || char == "]" || char == "(" || char == ")"
    }

    /// `2x3` (either case of x, 1 to 6 ASCII digits a side) → (2, 3).
    private static func footprintSides(_ word: String) -> (Int, Int)? {
        let sides = word.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2, sides.allSatisfy({ !$0.isEmpty && $0.count <= 6 && $0.allSatisfy(\.isASCIIDigit) }),
              let width = Int(sides[0]), let height = Int(sides[1])
        else { return nil }
        return (width, height)
    }

    /// The stem without the marker word: a bracket pair holding only the word goes with it, then the separators before
    /// it (or, at the start, after it); spaces left at either end are trimmed.
    private static func removing(_ word: Range<Int>, from chars: [Character]) -> String {
        var lower = word.lowerBound, upper = word.upperBound
        if lower > 0, upper < chars.count, let close = brackets[chars[lower - 1]], chars[upper] == close {
            lower -= 1
            upper += 1
        }
        if lower > 0 {
            while lower > 0, separators.contains(chars[lower - 1]) { lower -= 1 }
        } else {
            while upper < chars.count, separators.contains(chars[upper]) { upper += 1 }
        }
        var kept = Array(chars[..<lower] + chars[upper...])
        while kept.last == " " { kept.removeLast() }
        while kept.first == " " { kept.removeFirst() }
        return String(kept)
    }
}

extension Character {
    /// Whether this is one of the ASCII digits 0 to 9.
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
