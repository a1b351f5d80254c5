/// A parsed dice formula: `4d6kh3+2`, `2d20kl1`, `8d10!>=8cs>=8`, `(1d8+3)*2`, `4dF`, `d%`.
///
/// Notation: `NdX` (N from 1, default 1), `dF` (fate: −1, 0, +1), `d%` (d100); after the sides, in any order and each
/// at most once: keep or drop highest or lowest (`kh`/`k`, `kl`, `dh`, `dl`, count default 1), reroll once (`r`) or
/// until it misses (`rr`), explode (`x`/`!` until it misses, `xo` once, `!!` compounding, `!p` penetrating: each extra
/// die counts one less), count successes and failures (`cs`, `cf`: the term's value is successes minus failures),
/// `min N`, `max N` (a face counts at least or at most N). Conditions are `=N`, `<N`, `>N`, `<=N`, `>=N` or a bare `N`
/// (equal); an explosion without one fires on the highest face. Terms combine with `+ - * /` (integer division,
/// rounded toward zero) and parentheses. Parsing applies ``DiceLimits`` before anything is rolled.
public struct DiceFormula: Sendable, Hashable, CustomStringConvertible {
    /// The formula as written.
    public let text: String
    /// Its expression tree.
    public let expression: Expression

    /// A node of the tree.
    public indirect enum Expression: Sendable, Hashable {
        /// A number as written.
        case number(Int)
        /// Dice to throw.
        case dice(DiceTerm)
        /// Minus the inner value.
        case negate(Expression)
        /// Two values combined, the left one rolled first.
        case binary(Operator, Expression, Expression)
    }

    /// An arithmetic operator.
    public enum Operator: Sendable, Hashable {
        /// `+`, `-`, `*`, `/` (integer division, toward zero).
        case add, subtract, multiply, divide
    }

    /// Parses `text` under `limits`; throws `BAD_FORMULA` or `DICE_LIMIT` saying what to fix.
    public init(_ text: String, limits: DiceLimits = .standard) throws(DiceError) {
        guard text.utf8.count <= limits.length else {
            throw DiceError(.diceLimit, "a formula is at most \(limits.length) bytes long")
        }
        var parser = DiceParser(text, limits: limits)
        expression = try parser.parseFormula()
        self.text = text
    }

    public var description: String { text }

    /// The dice terms, in the order they are rolled.
    public var terms: [DiceTerm] {
        var found: [DiceTerm] = []
        var pending = [expression]
        while let node = pending.popLast() {
            switch node {
            case .number: break
            case .dice(let term): found.append(term)
            case .negate(let inner): pending.append(inner)
            case .binary(_, let left, let right): pending += [right, left]
            }
        }
        return found
    }
}

/// One `NdX…` of a formula: how many dice, their faces and what is done with them.
public struct DiceTerm: Sendable, Hashable {
    /// The term as written (`4d6kh3`).
    public var notation: String
    /// How many dice are thrown first.
    public var count: Int
    /// The lowest face (1; −1 for fate dice).
    public var lowest: Int
    /// The highest face.
    public var highest: Int
    /// Which dice count.
    public var keep: Keep?
    /// When a die is thrown again, its face discarded.
    public var reroll: Reroll?
    /// When a die adds another.
    public var explode: Explode?
    /// Faces that count as a success.
    public var success: Condition?
    /// Faces that count as a failure.
    public var failure: Condition?
    /// Each face counts at least this.
    public var minimum: Int?
    /// Each face counts at most this.
    public var maximum: Int?

    /// How many faces a die has.
    public var faces: Int { highest - lowest + 1 }

    /// Which dice count, of those not rerolled.
    public enum Keep: Sendable, Hashable {
        /// The highest N (`khN`, `kN`).
        case highest(Int)
        /// The lowest N (`klN`).
        case lowest(Int)
        /// All but the highest N (`dhN`).
        case dropHighest(Int)
        /// All but the lowest N (`dlN`).
        case dropLowest(Int)
    }

    /// A reroll: once, or again as long as the new face matches too.
    public struct Reroll: Sendable, Hashable {
        /// The faces thrown again.
        public var condition: Condition
        /// Whether the new face is thrown again too while it matches (`rr`), or once only (`r`).
        public var isRecursive: Bool
    }

    /// An explosion: which faces fire and what the extra die does.
    public struct Explode: Sendable, Hashable {
        /// How an explosion adds.
        public enum Style: Sendable, Hashable {
            /// Another die, which may explode again (`x`, `!`).
            case recursive
            /// Another die, once (`xo`).
            case once
            /// Added to the same die (`!!`).
            case compound
            /// Another die counting one less, which may explode again (`!p`).
            case penetrate
        }
        /// What the extra die does.
        public var style: Style
        /// The faces that fire.
        public var condition: Condition
    }
}

/// A comparison of a face with a number: `=N`, `<N`, `>N`, `<=N`, `>=N`.
public struct Condition: Sendable, Hashable {
    /// How a face is compared: `=`, `<`, `>`, `<=`, `>=`.
    public enum Comparison: Sendable, Hashable { case equal, less, greater, lessOrEqual, greaterOrEqual }
    /// How.
    public var comparison: Comparison
    /// With what.
    public var value: Int

    /// Whether a face meets it.
    public func matches(_ face: Int) -> Bool {
        switch comparison {
        case .equal: face == value
        case .less: face < value
        case .greater: face > value
        case .lessOrEqual: face <= value
        case .greaterOrEqual: face >= value
        }
    }
}
