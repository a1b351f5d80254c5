import Foundation
import HoardCore

extension HoardClient {
    // MARK: Dice

    /// A session's dice: its commitment and, once revealed, its seed and every roll (also after the session ended,
    /// for the members of its group).
    public func dice(session id: String) async throws -> SessionDice {
        try await dated("GET", "/v1/sessions/\(Self.pathSegment(id))/dice", as: SessionDice.self)
    }

    /// Reveals a session's dice seed (its host): everyone at the table is sent it and the blind rolls; no more rolls
    /// are made in the session.
    @discardableResult
    public func revealDice(session id: String) async throws -> SessionFields.Dice {
        try await dated("POST", "/v1/sessions/\(Self.pathSegment(id))/dice/reveal", as: SessionFields.Dice.self)
    }

    /// The caller's group's dice statistics: per die and roller, and a high-score list per die, over its sessions whose
    /// seed is revealed.
    public func diceStatistics() async throws -> DiceStatistics {
        try await dated("GET", "/v1/dice/statistics", as: DiceStatistics.self)
    }

    /// The dice statistics of a session's group, as its players read them (a participant's token suffices).
    public func diceStatistics(session id: String) async throws -> DiceStatistics {
        try await dated("GET", "/v1/sessions/\(Self.pathSegment(id))/dice/statistics", as: DiceStatistics.self)
    }

    /// Audits a session's rolls: fetches its dice and recomputes every roll from the revealed seed
    /// (``SessionDice/audit()``). No mismatch means every roll is what the seed committed to before the game drew.
    public func verifyRolls(session id: String) async throws -> (dice: SessionDice, mismatches: [DiceAudit.Mismatch]) {
        let dice = try await dice(session: id)
        return (dice, dice.audit())
    }
}
