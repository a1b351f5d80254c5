/// What the dice said of each roller: per roller and die (`d20`, `dF`…), how many were thrown, their mean against the
/// die's, the highest face and the longest run of highest faces; and per die a high-score list, luckiest first. Made
/// from `rolled` events (pure), counting every die thrown, rerolled and dropped ones included (the luck is the die's,
/// not the formula's).
public struct DiceStatistics: Sendable, Hashable, Codable {
    /// One roller's record with one die.
    public struct Record: Sendable, Hashable, Codable {
        /// Who rolled, never a name: a member's `host:<member id>`, or a player's `player:<id>` (``PlayerKey``),
        /// the same in every session of the group, so their record adds up across sessions; else a participant id,
        /// one seat of one session.
        public var who: String
        /// What `who` is: `member`, `player` (kept across sessions by their key) or `seat` (one session's).
        public var kind: String
        /// Their display name in their latest roll (absent in rolls made before rolls carried it).
        public var name: String?
        /// Dice thrown.
        public var count: Int
        /// Their mean face.
        public var mean: Double
        /// The die's mean face.
        public var expected: Double
        /// The highest face thrown.
        public var highest: Int
        /// The longest run of the die's highest face, in the order thrown.
        public var streak: Int
    }

    /// One die's high-score list: its rollers, the highest mean against the die's first (ties: more dice first).
    public struct Die: Sendable, Hashable, Codable {
        /// `d6`, `d20`, `dF`…
        public var die: String
        /// Its rollers.
        public var rollers: [Record]
    }

    /// Every die thrown, by name.
    public var dice: [Die]

    /// The statistics of these `rolled` events (events without a `roll`, or not from a formula that parses, count
    /// nothing).
    public init(rolls: [JSONValue]) {
        struct Tally {
            var count = 0, sum = 0, highest = Int.min, streak = 0, run = 0
        }
        var tallies: [String: [String: Tally]] = [:]
        var shapes: [String: (lowest: Int, highest: Int)] = [:]
        var names: [String: String] = [:]
        for event in rolls {
            // A player who joined with their key rolls under it (the server writes it, the roller cannot).
            let who = event["player"]?.stringValue ?? event["from"]?.stringValue
            if let who, let name = event["name"]?.stringValue { names[who] = name }
            guard let who, let roll = event["roll"], let formula = roll["formula"]?.stringValue,
                let terms = try? DiceFormula(formula).terms, case .array(let rolled)? = roll["terms"], rolled.count == terms.count
            else { continue }
            for (term, record) in zip(terms, rolled) {
                guard case .array(let dice)? = record["dice"] else { continue }
                let name = term.lowest == -1 ? "dF" : "d\(term.highest)"
                shapes[name] = (term.lowest, term.highest)
                var tally = tallies[name]?[who] ?? Tally()
                for die in dice {
                    // The face drawn (a compounding die's first roll; a penetrating die's before its one less).
                    guard case .number(let value)? = die["rolls"]?.firstNumber ?? die["face"] else { continue }
                    let face = Int(value)
                    tally.count += 1
                    tally.sum += face
                    tally.highest = max(tally.highest, face)
                    tally.run = face == term.highest ? tally.run + 1 : 0
                    tally.streak = max(tally.streak, tally.run)
                }
                tallies[name, default: [:]][who] = tally
            }
        }
        dice = tallies.keys.sorted { (shapes[$0]?.highest ?? 0, $0) < (shapes[$1]?.highest ?? 0, $1) }.map { name in
            let shape = shapes[name] ?? (1, 1)
            let expected = Double(shape.lowest + shape.highest) / 2
            let rollers = (tallies[name] ?? [:]).map { who, tally in
                Record(
                    who: who, kind: Self.kind(of: who), name: names[who], count: tally.count, mean: Double(tally.sum) / Double(max(tally.count, 1)),
                    expected: expected, highest: tally.highest, streak: tally.streak)
            }
            return Die(die: name, rollers: rollers.sorted { ($1.mean, $1.count, $0.who) < ($0.mean, $0.count, $1.who) })
        }
    }
}

extension DiceStatistics {
    /// `member`, `player` or `seat`, by the prefix the server gives each kind of roller.
    static func kind(of who: String) -> String {
        who.hasPrefix("host:") ? "member" : who.hasPrefix("player:") ? "player" : "seat"
    }
}

extension JSONValue {
    /// The first element of an array that is a number.
    fileprivate var firstNumber: JSONValue? {
        guard case .array(let items) = self, let first = items.first, case .number = first else { return nil }
        return first
    }
}
