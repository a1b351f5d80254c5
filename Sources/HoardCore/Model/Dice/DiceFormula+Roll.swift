extension DiceFormula {
    /// Rolls the formula as roll `index` under `seed`: terms left to right, each die's rerolls and explosions drawn
    /// right after it. Deterministic: the same seed, index and formula give the same ``DiceRoll``. Throws `BAD_FORMULA`
    /// for a division by zero and `DICE_LIMIT` for a total past 64 bits.
    public func roll(seed: DiceSeed, index: UInt64, limits: DiceLimits = .standard) throws(DiceError) -> DiceRoll {
        var roller = DiceRoller(stream: DiceStream(seed: seed, index: index), budget: limits.extraDice)
        let total = try roller.evaluate(expression)
        return DiceRoll(formula: text, index: index, total: total, terms: roller.terms)
    }
}

/// Evaluates a formula's tree, drawing from one stream.
struct DiceRoller {
    var stream: DiceStream
    /// Rerolls and explosions left.
    var budget: Int
    var terms: [RolledTerm] = []

    mutating func evaluate(_ node: DiceFormula.Expression) throws(DiceError) -> Int {
        switch node {
        case .number(let value): return value
        case .dice(let term): return try roll(term)
        case .negate(let inner): return try checked(0.subtractingReportingOverflow(try evaluate(inner)))
        case .binary(let op, let leftNode, let rightNode):
            let left = try evaluate(leftNode)
            let right = try evaluate(rightNode)
            switch op {
            case .add: return try checked(left.addingReportingOverflow(right))
            case .subtract: return try checked(left.subtractingReportingOverflow(right))
            case .multiply: return try checked(left.multipliedReportingOverflow(by: right))
            case .divide:
                guard right != 0 else { throw DiceError(.badFormula, "the formula divides by zero") }
                return try checked(left.dividedReportingOverflow(by: right))
            }
        }
    }

    private func checked(_ result: (partialValue: Int, overflow: Bool)) throws(DiceError) -> Int {
        guard !result.overflow else { throw DiceError(.diceLimit, "the formula's value does not fit in 64 bits") }
        return result.partialValue
    }

    private mutating func draw(_ term: DiceTerm) -> Int { term.lowest + stream.uniform(term.faces) }

    private mutating func roll(_ term: DiceTerm) throws(DiceError) -> Int {
        var dice: [RolledDie] = []
        for _ in 0..<term.count {
            var face = draw(term)
            if let reroll = term.reroll {
                while reroll.condition.matches(face), budget > 0 {
                    dice.append(RolledDie(face: face, rolls: [face], isRerolled: true))
                    budget -= 1
                    face = draw(term)
                    if !reroll.isRecursive { break }
                }
            }
            guard let explode = term.explode else {
                dice.append(RolledDie(face: face, rolls: [face]))
                continue
            }
            if explode.style == .compound {
                var rolls = [face]
                while explode.condition.matches(rolls[rolls.count - 1]), budget > 0 {
                    budget -= 1
                    rolls.append(draw(term))
                }
                dice.append(RolledDie(face: rolls.reduce(0, +), rolls: rolls, isExploded: rolls.count > 1))
                continue
            }
            var extra = 0
            while true {
                let fires = explode.condition.matches(face) && budget > 0 && (explode.style != .once || extra == 0)
                let penalty = explode.style == .penetrate && extra > 0 ? 1 : 0
                dice.append(RolledDie(face: face - penalty, rolls: [face], isExploded: fires))
                guard fires else { break }
                budget -= 1
                extra += 1
                face = draw(term)
            }
        }
        for index in dice.indices where !dice[index].isRerolled {
            if let minimum = term.minimum { dice[index].face = max(dice[index].face, minimum) }
            if let maximum = term.maximum { dice[index].face = min(dice[index].face, maximum) }
        }
        if let keep = term.keep { Self.apply(keep, to: &dice) }
        var value = 0
        let countsSuccesses = term.success != nil || term.failure != nil
        for index in dice.indices where dice[index].isCounted {
            if countsSuccesses {
                dice[index].isSuccess = term.success?.matches(dice[index].face) ?? false
                dice[index].isFailure = term.failure?.matches(dice[index].face) ?? false
                value += (dice[index].isSuccess ? 1 : 0) - (dice[index].isFailure ? 1 : 0)
            } else {
                value += dice[index].face
            }
        }
        terms.append(RolledTerm(notation: term.notation, value: value, dice: dice))
        return value
    }

    /// Marks dropped the dice keep or drop leaves out; among equal faces the earlier die is kept.
    private static func apply(_ keep: DiceTerm.Keep, to dice: inout [RolledDie]) {
        let active = dice.indices.filter { !dice[$0].isRerolled }
        let highestFirst = active.sorted { (dice[$0].face, $1) > (dice[$1].face, $0) }
        let lowestFirst = active.sorted { (dice[$0].face, $0) < (dice[$1].face, $1) }
        let kept: ArraySlice<Int> =
            switch keep {
            case .highest(let count): highestFirst.prefix(count)
            case .lowest(let count): lowestFirst.prefix(count)
            case .dropHighest(let count): lowestFirst.prefix(max(0, active.count - count))
            case .dropLowest(let count): highestFirst.prefix(max(0, active.count - count))
            }
        let keptSet = Set(kept)
        for index in active where !keptSet.contains(index) { dice[index].isDropped = true }
    }
}
