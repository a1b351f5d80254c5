/// What `GET /v1/sessions/{id}/dice` answers: the commitment, and once the seed is revealed the seed and every
/// `rolled` event of the session (blind ones whole), so that anyone may recompute them. The server encodes it, the
/// client library decodes and audits it.
public struct SessionDice: Sendable, Hashable, Codable {
    /// The session's id (it may have ended).
    public var session: String
    /// The SHA-256 of the seed, 64 lowercase hex digits.
    public var commitment: String
    /// The seed once revealed.
    public var seed: String?
    /// Every `rolled` event as logged, in order, once revealed; empty before.
    public var rolls: [JSONValue]

    /// A dice document.
    public init(session: String, commitment: String, seed: String?, rolls: [JSONValue]) {
        self.session = session
        self.commitment = commitment
        self.seed = seed
        self.rolls = rolls
    }

    /// The audit (``DiceAudit/verify(seed:commitment:rolls:)``) of these rolls; one mismatch when the seed is not
    /// revealed yet or is not a seed.
    public func audit() -> [DiceAudit.Mismatch] {
        guard let text = seed else { return [DiceAudit.Mismatch(index: nil, reason: "the seed is not revealed yet")] }
        guard let seed = DiceSeed(text) else { return [DiceAudit.Mismatch(index: nil, reason: "the seed is not 64 lowercase hex digits")] }
        return DiceAudit.verify(seed: seed, commitment: commitment, rolls: rolls)
    }
}
