import Crypto

/// What a player who is no member of the group presents at each join (`playerKey`), so that their dice statistics add
/// up across the group's sessions: `hoard_k_` and 43 letters or digits (about 256 random bits), made by the server at a
/// first join and kept by the player's browser. The server keeps no key, only the ``player(inGroup:)`` it derives; a
/// record is claimed by its key alone, never by a name (names are display text, and look-alikes are easy).
public struct PlayerKey: Sendable, Hashable, LosslessStringConvertible {
    /// The key as sent.
    public let description: String

    static let prefix = "hoard_k_"
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// Reads a key; nil unless it is `hoard_k_` and 43 ASCII letters or digits.
    public init?(_ description: String) {
        let body = description.utf8.dropFirst(Self.prefix.utf8.count)
        guard description.hasPrefix(Self.prefix), body.count == 43,
            body.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else { return nil }
        self.description = description
    }

    /// A new random key (the system's cryptographic generator).
    public static func random() -> PlayerKey {
        var generator = SystemRandomNumberGenerator()
        let body = (0..<43).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] }
        return PlayerKey(uncheckedDescription: prefix + String(body))
    }

    private init(uncheckedDescription: String) { description = uncheckedDescription }

    /// The player's identity in a group: `player:` and 32 hex digits of SHA-256 over the group's id and the key. The
    /// same key gives another identity in another group (records are per group, and groups cannot link them); the key
    /// cannot be recovered from it, so showing it in a high-score list gives nobody the record.
    public func player(inGroup groupId: Int64) -> String {
        let hash = Digest(bytes: Array(SHA256.hash(data: Array("hoard.player/v1\n\(groupId)\n\(description)".utf8))))
        return "player:" + (hash?.hex.prefix(32) ?? "")
    }
}
