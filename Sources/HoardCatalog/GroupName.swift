import Foundation

/// What may name a group, and when two names are one name.
///
/// People type a group's name and read it in refusals and listings, so a name must be something they can see,
/// and two names that look alike must not be two groups: "Éclair", "éclair", "ÉCLAIR" and "E\u{301}clair" are
/// one name. SQLite's `COLLATE NOCASE` on the column folds ASCII only, so the catalog compares ``key(_:)``s
/// before it creates a group. Catalogs written before may hold names that clash under the key: they keep
/// working, and only new names are refused.
public enum GroupName {
    /// The longest name, in UTF-8 bytes.
    public static let maxBytes = 128

    /// Why `name` cannot name a group, said so that the reader knows what to change; nil when it can.
    public static func problem(with name: String) -> String? {
        if name.isEmpty { return "a group name cannot be empty" }
        if name.unicodeScalars.allSatisfy({ $0.properties.isWhitespace || $0.properties.isDefaultIgnorableCodePoint }) {
            return "a group name cannot be blank; use letters, digits or other visible characters"
        }
        if let control = name.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            let code = "U+" + String(control.value, radix: 16, uppercase: true).leftPadded(to: 4)
            return "a group name cannot contain control characters (it has \(code)); remove it"
        }
        if name.utf8.count > maxBytes { return "a group name is at most \(maxBytes) bytes of UTF-8 (this one is \(name.utf8.count))" }
        return nil
    }

    /// The form two names are compared in: compatibility-composed (NFKC), case-folded, composed again, so names
    /// that differ only in case, in composed or decomposed accents or in compatibility forms (ﬁ, full-width
    /// letters) have the same key.
    public static func key(_ name: String) -> String {
        name.precomposedStringWithCompatibilityMapping
            .folding(options: .caseInsensitive, locale: nil)
            .precomposedStringWithCompatibilityMapping
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
