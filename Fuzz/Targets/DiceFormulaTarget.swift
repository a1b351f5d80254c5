import HoardCore

/// Dice formulas: any bytes as a formula. A formula the parser accepts must roll within its limits (no crash, no
/// endless explosion, no arithmetic trap), the same twice from one seed and index, and its record must audit clean.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDiceFormula(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let text = String(decoding: FuzzInput(start, count).bytes, as: UTF8.self)
    guard let formula = try? DiceFormula(text) else { return 0 }
    let seed = DiceSeed(String(repeating: "ab", count: 32))!
    guard let roll = try? formula.roll(seed: seed, index: 7) else { return 0 }
    let limits = DiceLimits.standard
    let dice = roll.terms.reduce(0) { $0 + $1.dice.count }
    precondition(dice <= limits.dice + limits.extraDice, "\(dice) dice for \(text)")
    precondition((try? formula.roll(seed: seed, index: 7)) == roll, "a second roll differs for \(text)")
    precondition(DiceAudit.verify(seed: seed, commitment: seed.commitment, rolls: [roll.json]).isEmpty, "the audit fails \(text)")
    return 0
}
