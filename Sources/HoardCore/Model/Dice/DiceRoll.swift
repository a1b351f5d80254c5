/// What a formula rolled: every die of every term, in the order drawn, and the total. Its ``json`` is what the
/// `rolled` event carries, and what an audit recomputes from the seed and compares byte for byte.
public struct DiceRoll: Sendable, Hashable {
    /// The formula as written.
    public var formula: String
    /// The roll's index in its session (the sequence number of its `rolled` event): which ``DiceStream`` drew it.
    public var index: UInt64
    /// The formula's value.
    public var total: Int
    /// The dice terms, in the order rolled.
    public var terms: [RolledTerm]

    /// The wire form: `{"formula","index","total","terms":[{"notation","value","dice":[{"face",…}]}]}`.
    public var json: JSONValue {
        .object([
            "formula": .string(formula), "index": .number(Double(index)), "total": .number(Double(total)),
            "terms": .array(terms.map(\.json)),
        ])
    }
}

/// One term of a roll: its dice and what they count.
public struct RolledTerm: Sendable, Hashable {
    /// The term as written (`4d6kh3`).
    public var notation: String
    /// What the term counts: its kept dice's faces added, or successes minus failures when it counts them.
    public var value: Int
    /// Every die drawn, rerolled ones included, in the order drawn.
    public var dice: [RolledDie]

    /// The wire form.
    public var json: JSONValue {
        .object(["notation": .string(notation), "value": .number(Double(value)), "dice": .array(dice.map(\.json))])
    }
}

/// One die as thrown.
public struct RolledDie: Sendable, Hashable {
    /// What the die counts: its face after `min`/`max`, a penetration's one less, or a compounding's sum.
    public var face: Int
    /// The faces drawn for it: one, or several when it compounded.
    public var rolls: [Int]
    /// Not counted: keep or drop left it out.
    public var isDropped = false
    /// Not counted: thrown again; the die after it in the list replaced it.
    public var isRerolled = false
    /// It exploded: the next die of the list was thrown because of it (or, compounding, its later rolls).
    public var isExploded = false
    /// It met the term's `cs` condition.
    public var isSuccess = false
    /// It met the term's `cf` condition.
    public var isFailure = false

    /// Whether it counts toward its term.
    public var isCounted: Bool { !isDropped && !isRerolled }

    /// The wire form: `{"face": 6}` and only the flags that are true; `rolls` when they are not just the face.
    public var json: JSONValue {
        var die: [String: JSONValue] = ["face": .number(Double(face))]
        if rolls != [face] { die["rolls"] = .array(rolls.map { .number(Double($0)) }) }
        let flags = [("dropped", isDropped), ("rerolled", isRerolled), ("exploded", isExploded), ("success", isSuccess), ("failure", isFailure)]
        for (name, isSet) in flags where isSet { die[name] = .bool(true) }
        return .object(die)
    }
}
