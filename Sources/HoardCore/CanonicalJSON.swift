import Foundation

/// The one JSON encoding Hoard hashes: keys sorted, no insignificant white space, slashes unescaped.
///
/// Documents that become blobs (descriptors, manifests) must go through this so equal values give equal digests.
public enum CanonicalJSON {
    /// Encodes a value canonically.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }
}
