/// The name of a blob: the SHA-256 of its bytes, written `sha256:<64 lowercase hex>` on the wire.
///
/// A digest is a value of 32 bytes, never a bare string; parsing is strict (lowercase hex only) so that
/// one blob has exactly one spelling.
public struct Digest: Sendable, Hashable, Comparable, LosslessStringConvertible, Codable {
    /// The algorithm prefix used on the wire.
    public static let algorithm = "sha256"

    // Four big-endian words keep the value inline, hashable and cheap to compare.
    private var words: (UInt64, UInt64, UInt64, UInt64)

    /// Creates a digest from exactly 32 raw bytes, or nil for any other count.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == 32 else { return nil }
        var w: [UInt64] = [0, 0, 0, 0]
        for (i, byte) in bytes.enumerated() { w[i / 8] = w[i / 8] << 8 | UInt64(byte) }
        words = (w[0], w[1], w[2], w[3])
    }

    /// Parses `sha256:<64 lowercase hex>`; returns nil for anything else (uppercase hex included).
    public init?(_ description: String) {
        let prefix = Self.algorithm + ":"
        guard description.utf8.count == prefix.utf8.count + 64, description.hasPrefix(prefix) else { return nil }
        var w: [UInt64] = [0, 0, 0, 0]
        var index = 0
        for char in description.utf8.dropFirst(prefix.utf8.count) {
            let nibble: UInt8
            switch char {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = char - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = char - UInt8(ascii: "a") + 10
            default: return nil
            }
            w[index / 16] = w[index / 16] << 4 | UInt64(nibble)
            index += 1
        }
        words = (w[0], w[1], w[2], w[3])
    }

    /// The 32 raw bytes.
    public var bytes: [UInt8] {
        [words.0, words.1, words.2, words.3].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } }
    }

    /// The 64 lowercase hex characters, without the algorithm prefix.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `sha256:<hex>`.
    public var description: String { Self.algorithm + ":" + hex }

    public static func == (lhs: Digest, rhs: Digest) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    public static func < (lhs: Digest, rhs: Digest) -> Bool {
        (lhs.words.0, lhs.words.1, lhs.words.2, lhs.words.3) < (rhs.words.0, rhs.words.1, rhs.words.2, rhs.words.3)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = Digest(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text.prefix(80))' is not a digest; expected sha256:<64 lowercase hex>")
        }
        self = digest
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
