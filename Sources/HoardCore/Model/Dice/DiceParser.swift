/// The recursive-descent parser behind ``DiceFormula``: UTF-8 bytes in, an expression tree out, every limit checked on
/// the way (a number is refused by its digit count before it is read, so `1000000000d6` costs nothing).
struct DiceParser {
    private let text: [UInt8]
    private let limits: DiceLimits
    private var position = 0
    private var depth = 0
    private var dice = 0

    init(_ text: String, limits: DiceLimits) {
        self.text = Array(text.utf8)
        self.limits = limits
    }

    mutating func parseFormula() throws(DiceError) -> DiceFormula.Expression {
        skipSpaces()
        guard position < text.count else { throw DiceError(.badFormula, "the formula is empty; write one like 1d20+3") }
        let expression = try parseSum()
        guard position == text.count else { throw unexpected() }
        return expression
    }

    private mutating func parseSum() throws(DiceError) -> DiceFormula.Expression {
        var left = try parseProduct()
        while let next = peek(), next == UInt8(ascii: "+") || next == UInt8(ascii: "-") {
            advance()
            left = .binary(next == UInt8(ascii: "+") ? .add : .subtract, left, try parseProduct())
        }
        return left
    }

    private mutating func parseProduct() throws(DiceError) -> DiceFormula.Expression {
        var left = try parseUnary()
        while let next = peek(), next == UInt8(ascii: "*") || next == UInt8(ascii: "/") {
            advance()
            left = .binary(next == UInt8(ascii: "*") ? .multiply : .divide, left, try parseUnary())
        }
        return left
    }

    private mutating func parseUnary() throws(DiceError) -> DiceFormula.Expression {
        depth += 1
        defer { depth -= 1 }
        guard depth <= limits.depth else { throw DiceError(.diceLimit, "a formula nests at most \(limits.depth) deep") }
        switch peek() {
        case UInt8(ascii: "-"):
            advance()
            return .negate(try parseUnary())
        case UInt8(ascii: "+"):
            advance()
            return try parseUnary()
        case UInt8(ascii: "("):
            advance()
            let inner = try parseSum()
            guard peek() == UInt8(ascii: ")") else { throw DiceError(.badFormula, "a parenthesis is not closed") }
            advance()
            return inner
        default:
            return try parseOperand()
        }
    }

    private mutating func parseOperand() throws(DiceError) -> DiceFormula.Expression {
        let start = position
        let count = try number()
        guard peekRaw() == UInt8(ascii: "d") || peekRaw() == UInt8(ascii: "D") else {
            guard let count else { throw unexpected() }
            skipSpaces()
            return .number(count)
        }
        position += 1
        return .dice(try parseTerm(count: count ?? 1, start: start))
    }

    private mutating func parseTerm(count: Int, start: Int) throws(DiceError) -> DiceTerm {
        guard count >= 1 else { throw DiceError(.badFormula, "throw at least one die") }
        dice += count
        guard dice <= limits.dice else { throw DiceError(.diceLimit, "a formula throws at most \(limits.dice) dice") }
        var term = DiceTerm(notation: "", count: count, lowest: 1, highest: 0)
        switch peekRaw() {
        case UInt8(ascii: "%"):
            position += 1
            term.highest = 100
        case UInt8(ascii: "F"), UInt8(ascii: "f"):
            position += 1
            (term.lowest, term.highest) = (-1, 1)
        default:
            guard let sides = try number(), sides >= 1 else { throw DiceError(.badFormula, "a die has 1 or more sides: d6, d20, d%, dF") }
            guard sides <= limits.sides else { throw DiceError(.diceLimit, "a die has at most \(limits.sides) sides") }
            term.highest = sides
        }
        while let modifier = peekRaw(), Self.isModifierStart(modifier) { try parseModifier(into: &term) }
        term.notation = String(decoding: text[start..<position], as: UTF8.self).filter { $0 != " " }
        skipSpaces()
        return term
    }

    private static func isModifierStart(_ byte: UInt8) -> Bool {
        "kdrx!cm".utf8.contains(byte | 0x20)
    }

    private mutating func parseModifier(into term: inout DiceTerm) throws(DiceError) {
        if take("kl") {
            try setKeep(&term, .lowest(try count(term)))
        } else if take("kh") || take("k") {
            try setKeep(&term, .highest(try count(term)))
        } else if take("dh") {
            try setKeep(&term, .dropHighest(try count(term)))
        } else if take("dl") {
            try setKeep(&term, .dropLowest(try count(term)))
        } else if case let isRecursive = take("rr"), isRecursive || take("r") {
            guard term.reroll == nil else { throw DiceError(.badFormula, "a term rerolls once: one r or rr") }
            guard let condition = try condition() else { throw DiceError(.badFormula, "a reroll needs a condition: r1, r<3") }
            guard !term.everyFace(condition) else { throw everyFace("reroll") }
            term.reroll = DiceTerm.Reroll(condition: condition, isRecursive: isRecursive)
        } else if let style = explosionStyle() {
            guard term.explode == nil else { throw DiceError(.badFormula, "a term explodes once: one x, xo, !, !! or !p") }
            let condition = try condition() ?? Condition(comparison: .equal, value: term.highest)
            guard !term.everyFace(condition) || style == .once else { throw everyFace("explode") }
            term.explode = DiceTerm.Explode(style: style, condition: condition)
        } else if take("cs") || take("cf") {
            let isSuccess = text[position - 1] | 0x20 == UInt8(ascii: "s")
            guard let condition = try condition() else { throw DiceError(.badFormula, "cs and cf need a condition: cs>=5") }
            guard (isSuccess ? term.success : term.failure) == nil else { throw DiceError(.badFormula, "one cs and one cf a term") }
            if isSuccess { term.success = condition } else { term.failure = condition }
        } else if take("min") || take("max") {
            let isMinimum = text[position - 2] | 0x20 == UInt8(ascii: "i")
            guard let value = try signedNumber() else { throw DiceError(.badFormula, "min and max need a number: min2") }
            guard (isMinimum ? term.minimum : term.maximum) == nil else { throw DiceError(.badFormula, "one min and one max a term") }
            if isMinimum { term.minimum = value } else { term.maximum = value }
        } else {
            throw unexpected()
        }
    }

    private mutating func explosionStyle() -> DiceTerm.Explode.Style? {
        if take("!!") { return .compound }
        if take("!p") { return .penetrate }
        if take("!") || take("x") { return take("o") ? .once : .recursive }
        return nil
    }

    private func setKeep(_ term: inout DiceTerm, _ keep: DiceTerm.Keep) throws(DiceError) {
        guard term.keep == nil else { throw DiceError(.badFormula, "a term keeps or drops once: one of kh, kl, dh, dl") }
        term.keep = keep
    }

    private mutating func count(_ term: DiceTerm) throws(DiceError) -> Int {
        let count = try number() ?? 1
        guard count <= term.count else { throw DiceError(.badFormula, "keep or drop at most the \(term.count) dice thrown") }
        return count
    }

    private mutating func condition() throws(DiceError) -> Condition? {
        let comparisons: [(String, Condition.Comparison)] = [("<=", .lessOrEqual), (">=", .greaterOrEqual), ("<", .less), (">", .greater), ("=", .equal)]
        for (spelling, comparison) in comparisons where take(spelling) {
            guard let value = try signedNumber() else { throw DiceError(.badFormula, "a comparison needs a number: >=5") }
            return Condition(comparison: comparison, value: value)
        }
        return try signedNumber().map { Condition(comparison: .equal, value: $0) }
    }

    private mutating func signedNumber() throws(DiceError) -> Int? {
        if peekRaw() == UInt8(ascii: "-") {
            position += 1
            guard let value = try number() else { throw DiceError(.badFormula, "a minus sign needs a number") }
            return -value
        }
        return try number()
    }

    /// Digits at the position, refused past the limit by their count before they are read.
    private mutating func number() throws(DiceError) -> Int? {
        let start = position
        while position < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[position]) { position += 1 }
        guard position > start else { return nil }
        let digits = text[start..<position].drop { $0 == UInt8(ascii: "0") }
        guard digits.count <= String(limits.number).count else { throw tooLarge() }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard value <= limits.number else { throw tooLarge() }
        return value
    }

    private func tooLarge() -> DiceError { DiceError(.diceLimit, "numbers in a formula are at most \(limits.number)") }

    private func everyFace(_ what: String) -> DiceError {
        DiceError(.diceLimit, "every face would \(what) for ever; choose a condition some face misses")
    }

    private func unexpected() -> DiceError {
        guard position < text.count else { return DiceError(.badFormula, "the formula ends too early") }
        let rest = String(decoding: text[position...].prefix(12), as: UTF8.self)
        return DiceError(.badFormula, "cannot read '\(rest)' at byte \(position); write dice like 4d6kh3+2")
    }

    /// Takes `word` (ASCII, any case) at the position.
    private mutating func take(_ word: String) -> Bool {
        let bytes = word.utf8
        guard position + bytes.count <= text.count else { return false }
        for (offset, byte) in bytes.enumerated() where text[position + offset] | (byte >= UInt8(ascii: "a") ? 0x20 : 0) != byte {
            return false
        }
        position += bytes.count
        return true
    }

    private func peekRaw() -> UInt8? { position < text.count ? text[position] : nil }

    private mutating func peek() -> UInt8? {
        skipSpaces()
        return peekRaw()
    }

    private mutating func advance() {
        position += 1
        skipSpaces()
    }

    private mutating func skipSpaces() {
        while position < text.count, text[position] == UInt8(ascii: " ") { position += 1 }
    }
}

extension DiceTerm {
    /// Whether every face of the die meets `condition` (a reroll or explosion that would never end).
    func everyFace(_ condition: Condition) -> Bool {
        switch condition.comparison {
        case .equal: lowest == highest && lowest == condition.value
        case .less: highest < condition.value
        case .greater: lowest > condition.value
        case .lessOrEqual: highest <= condition.value
        case .greaterOrEqual: lowest >= condition.value
        }
    }
}
