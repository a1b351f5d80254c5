/// Why the table refused an op: a wire code (listed in Schemas/problem-codes.json) and a message that says what to fix.
/// The op changed nothing.
public struct TableError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The wire codes of refused ops.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Not an op: unknown kind, a missing or ill-typed field, a field the kind does not have.
        case badOp = "BAD_OP"
        /// The op names a token, object or stroke that is not on the table (or that the sender cannot see).
        case unknownEntity = "UNKNOWN_ENTITY"
        /// A position or size outside the map's grid.
        case outOfGrid = "OUT_OF_GRID"
        /// An `add` or `stroke` whose id is already on the table.
        case idTaken = "ID_TAKEN"
        /// The sender may not do this (a participant acting on what is not theirs, or on what only the host does).
        case forbidden = "FORBIDDEN"
        /// A `roll` whose formula cannot be read (``DiceFailure/badFormula``).
        case badFormula = "BAD_FORMULA"
        /// A `roll` whose formula is past its limits (``DiceFailure/diceLimit``).
        case diceLimit = "DICE_LIMIT"
    }

    /// What went wrong.
    public var code: Code
    /// What to fix, for people.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension TableError {
    /// A `roll` refused for its formula: the dice code, the same message.
    public init(_ error: DiceError) {
        self.init(error.code == .badFormula ? .badFormula : .diceLimit, error.message)
    }
}
