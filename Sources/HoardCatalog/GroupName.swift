import Foundation
import HoardCore

/// What may name a group, and when two names are one name: ``NameRule`` with ``NameRule/Kind/group``.
///
/// People type a group's name and read it in refusals and listings, so a name must be something they can see,
/// and two names that look alike must not be two groups: "Éclair", "éclair", "ÉCLAIR" and "E\u{301}clair" are
/// one name. SQLite's `COLLATE NOCASE` on the column folds ASCII only, so the catalog compares ``key(_:)``s
/// before it creates a group. Catalogs written before may hold names that clash under the key: they keep
/// working (each found by its exact name), and only new names are refused.
public enum GroupName {
    /// The longest name, in Unicode scalars.
    public static let maxScalars = NameRule.Kind.group.maxScalars

    /// Why `name` cannot name a group, said so that the reader knows what to change; nil when it can.
    public static func problem(with name: String) -> String? { NameRule.problem(with: name, as: .group) }

    /// The name as it is stored (``NameRule/canonical(_:as:)``); `invalid` when it cannot name a group.
    public static func canonical(_ name: String) throws(CatalogError) -> String {
        do {
            return try NameRule.canonical(name, as: .group)
        } catch {
            throw CatalogError(.invalid, error.message)
        }
    }

    /// The form two names are compared in (``NameRule/key(_:)``).
    public static func key(_ name: String) -> String { NameRule.key(name) }
}
