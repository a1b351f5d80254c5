/// Why a dice formula was refused: a wire code (listed in Schemas/problem-codes.json) and a message that says what to
/// fix. A refused formula rolls nothing.
public typealias DiceError = CodedError<DiceFailure>

/// The wire codes of refused formulas (``DiceError``'s codes).
public enum DiceFailure: String, Sendable, Hashable, CaseIterable {
    /// Not a formula: an unknown character or modifier, a missing number, unbalanced parentheses, a division by zero.
    case badFormula = "BAD_FORMULA"
    /// A formula past a limit of ``DiceLimits``: too long, too deep, too many dice or sides, a reroll or explosion that
    /// every face would trigger.
    case diceLimit = "DICE_LIMIT"
}

/// The bounds a formula must keep to be rolled; each is checked while parsing, before a die is drawn.
public struct DiceLimits: Sendable, Hashable {
    /// Longest formula, in UTF-8 bytes.
    public var length = 256
    /// Deepest nesting of parentheses and signs.
    public var depth = 16
    /// Most dice a formula names, all terms together (before rerolls and explosions).
    public var dice = 1_000
    /// Most sides of a die.
    public var sides = 1_000_000
    /// Most dice rerolls and explosions add to one roll; a roll that reaches it stops rerolling and exploding.
    public var extraDice = 1_000
    /// Largest number written in a formula.
    public var number = 1_000_000

    /// The server's limits.
    public static let standard = DiceLimits()

    /// Creates the standard limits; change fields to tighten them.
    public init() {}
}
