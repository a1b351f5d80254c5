import Crypto

/// The dice of roll *i* of a session: the bytes of HMAC-SHA256 keyed with the session's seed, in counter mode.
///
/// Block *b* (from 0) is `HMAC-SHA256(seed, UInt64(i) ‖ UInt64(b))`, both big-endian; the stream is the blocks one after
/// the other. A die of `n` faces reads the next 4 bytes as a big-endian `UInt32` `v` and takes `v mod n` when
/// `v < n · ⌊2³²/n⌋`, else it reads 4 more bytes (rejection sampling: every face equally likely, no modulo bias).
/// Anyone holding the seed draws the same faces: that is how a roll is audited.
public struct DiceStream: Sendable {
    /// HMAC keyed with the seed, before any message: copied for each block, so the key is hashed once.
    private let keyed: HMAC<SHA256>
    private let index: UInt64
    private var block: UInt64 = 0
    /// The current block as eight big-endian words, and how many of them are used.
    private var words: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var used = 8

    /// The stream of roll `index` under `seed`.
    public init(seed: DiceSeed, index: UInt64) {
        self.keyed = HMAC<SHA256>(key: SymmetricKey(data: seed.bytes))
        self.index = index
    }

    /// A face number in `0..<count`, uniformly; `count` is 1 to 2³².
    public mutating func uniform(_ count: Int) -> Int {
        precondition(count > 0 && UInt64(count) <= 1 << 32, "a die has 1 to 2^32 faces")
        let bound = (UInt64(1) << 32) / UInt64(count) * UInt64(count)
        while true {
            let value = UInt64(nextWord())
            if value < bound { return Int(value % UInt64(count)) }
        }
    }

    private mutating func nextWord() -> UInt32 {
        if used == 8 { refill() }
        defer { used += 1 }
        return withUnsafeBytes(of: &words) { UInt32(bigEndian: $0.loadUnaligned(fromByteOffset: used * 4, as: UInt32.self)) }
    }

    private mutating func refill() {
        var hmac = keyed
        withUnsafeBytes(of: (index.bigEndian, block.bigEndian)) { hmac.update(data: $0) }
        let code = hmac.finalize()
        withUnsafeMutableBytes(of: &words) { target in code.withUnsafeBytes { target.copyMemory(from: $0) } }
        used = 0
        block += 1
    }
}

/// A session's secret dice seed: 32 random bytes, published first as its ``commitment`` and revealed when the session
/// ends, so anyone can then recompute every roll (``DiceStream``). Written as 64 lowercase hex digits.
public struct DiceSeed: Sendable, Hashable, LosslessStringConvertible {
    // 32 bytes are a digest's shape; the hex spelling is the digest's without its prefix.
    private let value: Digest

    /// The 32 bytes.
    public var bytes: [UInt8] { value.bytes }

    /// A new random seed (the system's cryptographic generator).
    public static func random() -> DiceSeed {
        var generator = SystemRandomNumberGenerator()
        let words = (generator.next() as UInt64, generator.next() as UInt64, generator.next() as UInt64, generator.next() as UInt64)
        return DiceSeed(value: Digest(words: words))
    }

    /// Reads 64 lowercase hex digits; nil otherwise.
    public init?(_ description: String) {
        guard let value = Digest(Digest.algorithm + ":" + description) else { return nil }
        self.value = value
    }

    private init(value: Digest) { self.value = value }

    /// The 64 lowercase hex digits.
    public var description: String { value.hex }

    /// What the session publishes before any roll: the SHA-256 of the seed's 32 bytes, as 64 lowercase hex digits.
    public var commitment: String { Digest(bytes: Array(SHA256.hash(data: bytes)))?.hex ?? "" }
}
