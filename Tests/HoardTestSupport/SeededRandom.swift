/// A small seeded generator (SplitMix64), so a random test does the same on every run and a failing seed fails again.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number below `upperBound` (modulo: the small bias does not matter to a test).
    public mutating func next(upperBound: UInt64) -> UInt64 { next() % upperBound }
}
