/// A `roll` op: `{"kind": "roll", "formula": "4d6kh3+2", "label": "Stealth", "to": ["p1"], "blind": true}`.
///
/// `to` picks who sees the result as a message's does (``Table/audience(to:from:)``); a blind roll's result is the
/// host's alone, and its roller is told only that they rolled. The formula is parsed (and its limits checked) when the
/// op is read, so a refused formula never reaches the table.
public struct DiceRequest: Sendable, Hashable {
    /// The formula, parsed.
    public var formula: DiceFormula
    /// What the roll is for, shown with it.
    public var label: String?
    /// Who sees the result besides the roller and the host; nil for everyone.
    public var to: [String]?
    /// Whether only the host sees the result (the roller sees that they rolled, not what).
    public var isBlind: Bool

    /// Creates a request.
    public init(formula: DiceFormula, label: String? = nil, to: [String]? = nil, isBlind: Bool = false) {
        self.formula = formula
        self.label = label
        self.to = to
        self.isBlind = isBlind
    }

    init(_ fields: inout Fields) throws(TableError) {
        let text = try fields.string("formula", max: DiceLimits.standard.length)
        do {
            formula = try DiceFormula(text)
        } catch {
            throw TableError(error)
        }
        label = fields.members["label"] == nil ? nil : try fields.string("label", max: TableOp.maxText)
        to = try fields.recipients()
        isBlind = fields.members["blind"] == nil ? false : try fields.bool("blind")
    }

    /// The op's fields besides `kind`.
    var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = ["formula": .string(formula.text)]
        if let label { fields["label"] = .string(label) }
        if let to { fields["to"] = .array(to.map(JSONValue.string)) }
        if isBlind { fields["blind"] = .bool(true) }
        return fields
    }
}
