/// The name of a blob: the SHA-256 of its bytes, written `sha256:<64 lowercase hex>` on the wire.
///
/// A digest is a value of 32 bytes, never a bare string; parsing is strict (lowercase hex only) so that
/// one blob has exactly one spelling.
public struct Digest: Sendable, Hashable, Comparable, LosslessStringConvertible, Codable {
    /// The algorithm prefix used on the wire.
    public static let algorithm = "sha256"

    // Four big-endian words keep the value inline, hashable and cheap to compare.
    private var words: (UInt64, UInt64, UInt64, UInt64)

    /// Creates a digest from its four big-endian 64-bit words (what a SHA-256 implementation produces).
    public init(words: (UInt64, UInt64, UInt64, UInt64)) {
        self.words = words
    }

    /// Creates a digest from exactly 32 raw bytes, or nil for any other count.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard let digest = Array(bytes).withUnsafeBytes({ Self(raw: $0) }) else { return nil }
        self = digest
    }

    /// Creates a digest from exactly 32 raw bytes in memory, or nil for any other count (not generic: thousands of
    /// digests read from a file cost microseconds, where the generic path spends them on type metadata).
    public init?(raw: UnsafeRawBufferPointer) {
        guard raw.count == 32 else { return nil }
        func word(_ index: Int) -> UInt64 { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
        words = (word(0), word(1), word(2), word(3))
    }

    /// Parses `sha256:<64 lowercase hex>`; returns nil for anything else (uppercase hex included).
    public init?(_ description: String) {
        var text = description
        guard let parsed = text.withUTF8({ Self(utf8: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = parsed
    }

    /// Parses the UTF-8 bytes of `sha256:<64 lowercase hex>`; returns nil for anything else.
    public init?(utf8: UnsafeRawBufferPointer) {
        guard utf8.count == 71, utf8.starts(with: Self.prefixBytes) else { return nil }
        var w: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for index in 0..<64 {
            let char = utf8[7 + index]
            let nibble: UInt64
            switch char {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = UInt64(char &- UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = UInt64(char &- UInt8(ascii: "a") &+ 10)
            default: return nil
            }
            switch index / 16 {
            case 0: w.0 = w.0 << 4 | nibble
            case 1: w.1 = w.1 << 4 | nibble
            case 2: w.2 = w.2 << 4 | nibble
            default: w.3 = w.3 << 4 | nibble
            }
        }
        words = w
    }

    private static let prefixBytes = Array("sha256:".utf8)

    /// The 32 raw bytes.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)) { Array($0) }
    }

    /// The 64 lowercase hex characters, without the algorithm prefix.
    public var hex: String {
        String(unsafeUninitializedCapacity: 64) { buffer in
            Self.writeHex(words, into: buffer, at: 0)
            return 64
        }
    }

    private static func writeHex(_ w: (UInt64, UInt64, UInt64, UInt64), into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for (slot, word) in [w.0, w.1, w.2, w.3].enumerated() {
                for nibble in 0..<16 {
                    buffer[start + slot * 16 + nibble] = digits[Int((word >> UInt64(60 - nibble * 4)) & 0xF)]
                }
            }
        }
    }

    /// `sha256:<hex>`.
    public var description: String {
        String(unsafeUninitializedCapacity: 71) { buffer in
            for (index, byte) in Self.prefixBytes.enumerated() { buffer[index] = byte }
            Self.writeHex(words, into: buffer, at: 7)
            return 71
        }
    }

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
