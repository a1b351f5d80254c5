import Foundation

/// The one text rule for every name people choose and read: groups, packs, members (token labels), sessions,
/// participants' display names, saved maps, refs and shares.
///
/// A name is what people see, so it must hold only what they can see, and two names that look alike must not be
/// two things. ``canonical(_:as:)`` is the only door a name comes in through: it drops surrounding white space and
/// the emoji presentation selectors (U+FE0E, U+FE0F), composes the rest (NFC), and refuses it when it is empty or
/// blank, longer than the kind's limit in Unicode scalars (what JSON Schema's `maxLength` counts), or holds a
/// control, format (bidi controls such as U+202E, U+200B, the soft hyphen, joiners), separator, private-use or any
/// other default-ignorable code point; NUL is refused, never cut off. ``key(_:)`` is the only comparison: names
/// with the same key are one name in their scope (compatibility forms, case and accents folded), so
/// "Émoi", "émoi" and "E\u{301}MOI" are one name, as are "Emoi" and "ＥＭＯＩ". Emoji are names' letters too, but a
/// sequence joined by U+200D (a format character) is refused.
public enum NameRule {
    /// What a name names: its noun in messages, its longest length and whether it may hold `/`.
    public struct Kind: Sendable, Hashable {
        /// The noun, as in "a pack name".
        public var noun: String
        /// The longest name, in Unicode scalars after composition.
        public var maxScalars: Int
        /// Whether `/` is refused (names that appear in a URL path).
        public var refusesSlash: Bool

        /// Creates a kind.
        public init(noun: String, maxScalars: Int, refusesSlash: Bool = false) {
            self.noun = noun
            self.maxScalars = maxScalars
            self.refusesSlash = refusesSlash
        }

        /// A group's name (unique on the server).
        public static let group = Kind(noun: "a group name", maxScalars: 128)
        /// A pack's name (unique in its group).
        public static let pack = Kind(noun: "a pack name", maxScalars: 128, refusesSlash: true)
        /// A member token's label, chosen when an invitation is redeemed or a token made.
        public static let member = Kind(noun: "a member name", maxScalars: 64)
        /// A game session's name.
        public static let session = Kind(noun: "a session name", maxScalars: 128)
        /// A participant's display name, chosen on join.
        public static let displayName = Kind(noun: "a display name", maxScalars: 64)
        /// A saved map's name (unique in its group).
        public static let savedMap = Kind(noun: "a map name", maxScalars: 128, refusesSlash: true)
        /// A ref's name (unique per member).
        public static let ref = Kind(noun: "a ref name", maxScalars: 128, refusesSlash: true)
        /// A share's title.
        public static let share = Kind(noun: "a share name", maxScalars: 128)
    }

    /// Why a name was refused: the message says what to change.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// What to fix, starting with the kind's noun ("a pack name cannot …").
        public var message: String
        public var description: String { message }
    }

    /// The name as it is stored and shown: trimmed, emoji presentation selectors dropped, composed (NFC). Throws
    /// ``Refusal`` saying what to change when it cannot name a `kind`.
    public static func canonical(_ raw: String, as kind: Kind) throws(Refusal) -> String {
        let name = trimmed(raw).precomposedStringWithCanonicalMapping
        if name.isEmpty {
            throw Refusal(message: raw.isEmpty ? "\(kind.noun) cannot be empty" : "\(kind.noun) cannot be blank; use letters, digits or other visible characters")
        }
        if let bad = name.unicodeScalars.first(where: isInvisible) {
            throw Refusal(message: "\(kind.noun) cannot contain control, format or invisible characters (it has \(code(bad))); remove it")
        }
        if name.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) {
            throw Refusal(message: "\(kind.noun) cannot be blank; use letters, digits or other visible characters")
        }
        if kind.refusesSlash, name.contains("/") { throw Refusal(message: "\(kind.noun) cannot contain '/'") }
        let length = name.unicodeScalars.count
        if length > kind.maxScalars {
            throw Refusal(message: "\(kind.noun) is at most \(kind.maxScalars) characters (Unicode scalars; this one has \(length)); shorten it")
        }
        return name
    }

    /// ``canonical(_:as:)``'s refusal, or nil when the name is fine.
    public static func problem(with raw: String, as kind: Kind) -> String? {
        do {
            _ = try canonical(raw, as: kind)
            return nil
        } catch {
            return error.message
        }
    }

    /// The form two names are compared in: compatibility-composed (NFKC), case-folded, composed again, so names that
    /// differ only in case, in composed or decomposed accents or in compatibility forms (ﬁ, full-width letters) have
    /// the same key. Presentation selectors and surrounding white space do not count.
    public static func key(_ name: String) -> String {
        trimmed(name)
            .precomposedStringWithCompatibilityMapping
            .folding(options: .caseInsensitive, locale: nil)
            .precomposedStringWithCompatibilityMapping
    }

    /// Whether two names are one name.
    public static func same(_ a: String, _ b: String) -> Bool { a == b || key(a) == key(b) }

    /// Whether two stored names are spelled alike as the catalogs' columns compare them (ASCII case aside): among
    /// names of one key, the one spelled so is found first.
    public static func spelledAlike(_ a: String, _ b: String) -> Bool {
        func folded(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
        return a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { folded($0) == folded($1) }
    }

    /// The things among `things` that `name` names: those spelled alike (``spelledAlike(_:_:)``), else those of the
    /// same ``key(_:)``. One answer is the thing; several (an old catalog's look-alikes) are for the caller to refuse.
    public static func matches<T>(_ name: String, among things: [T], name nameOf: (T) -> String) -> [T] {
        let name = name.precomposedStringWithCanonicalMapping
        let exact = things.filter { spelledAlike(nameOf($0), name) }
        guard exact.isEmpty else { return exact }
        let key = key(name)
        return things.filter { Self.key(nameOf($0)) == key }
    }

    /// Control (Cc), format (Cf: bidi controls, zero-width characters, the soft hyphen), line and paragraph
    /// separators, private use, unassigned surrogates, and any other default-ignorable code point.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate: return true
        default: return scalar.properties.isDefaultIgnorableCodePoint || scalar.properties.isBidiControl
        }
    }

    /// Without presentation selectors and without surrounding Unicode white space (`White_Space`, which a zero-width
    /// space is not: Foundation's `.whitespaces` would cut U+200B off instead of refusing it).
    private static func trimmed(_ raw: String) -> String {
        var scalars = Array(raw.unicodeScalars.filter { !isPresentationSelector($0) })
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        let start = scalars.firstIndex { !$0.properties.isWhitespace } ?? scalars.endIndex
        return String(String.UnicodeScalarView(scalars[start...]))
    }

    private static func isPresentationSelector(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value == 0xFE0E || scalar.value == 0xFE0F
    }

    private static func code(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
