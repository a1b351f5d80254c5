/// The audit of a session's rolls once its seed is revealed: the seed must hash to the commitment published before the
/// first roll, and every `rolled` event must be exactly what its formula rolls as its index under that seed. Pure: the
/// command line, the client library and the tests call the same function.
public enum DiceAudit {
    /// One roll that does not check out.
    public struct Mismatch: Sendable, Hashable, CustomStringConvertible {
        /// The roll's index, when the event has one.
        public var index: UInt64?
        /// What is wrong.
        public var reason: String

        public var description: String { "roll \(index.map(String.init) ?? "?"): \(reason)" }
    }

    /// Checks `seed` against `commitment` and recomputes each roll (the `roll` object of each `rolled` event, or a
    /// bare roll); returns what does not match, nothing when everything does.
    public static func verify(seed: DiceSeed, commitment: String, rolls: [JSONValue]) -> [Mismatch] {
        var mismatches: [Mismatch] = []
        if seed.commitment != commitment {
            mismatches.append(Mismatch(index: nil, reason: "the seed's SHA-256 is not the commitment \(commitment.prefix(64))"))
        }
        for event in rolls {
            let roll = event["roll"] ?? event
            guard case .number(let number)? = roll["index"], number >= 0, number < 0x1p53, number == number.rounded(),
                let formula = roll["formula"]?.stringValue
            else {
                mismatches.append(Mismatch(index: nil, reason: "not a roll: it needs a formula and an index"))
                continue
            }
            let index = UInt64(number)
            if case .number(let seq)? = event["seq"], seq != number {
                mismatches.append(Mismatch(index: index, reason: "rolled as index \(index) but logged at \(Int64(seq))"))
            }
            do {
                let expected = try DiceFormula(formula).roll(seed: seed, index: index).json
                if expected != roll {
                    mismatches.append(Mismatch(index: index, reason: "the dice or total differ from what '\(formula)' rolls"))
                }
            } catch {
                mismatches.append(Mismatch(index: index, reason: "'\(formula)' does not roll: \(error)"))
            }
        }
        return mismatches
    }
}
