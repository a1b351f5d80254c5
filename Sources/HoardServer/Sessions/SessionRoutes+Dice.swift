import Foundation
import HoardCatalog
import HoardCore
import Hummingbird

// `/v1/sessions/{id}/dice`: a session's dice commitment and, once revealed, its seed and every roll, for audits.
extension SessionRoutes {
    func registerDice(on endpoints: Endpoints) {
        endpoints.on(.get, "/v1/sessions/{id}/dice") { _, context in try await dice(context) }
        endpoints.on(.post, "/v1/sessions/{id}/dice/reveal") { _, context in try await revealDice(context) }
        endpoints.on(.get, "/v1/dice/statistics") { _, context in try diceStatistics(context) }
        endpoints.on(.get, "/v1/sessions/{id}/dice/statistics") { _, context in try tableDiceStatistics(context) }
        endpoints.on(.get, "/v1/sessions/{id}/dice/choices") { _, context in try diceChoices(context) }
    }

    /// The dice the session's table may choose from (``DiceChoices``): to whoever sees the session.
    func diceChoices(_ context: HoardRequestContext) throws -> Response {
        let (session, _) = try visibleSession(context)
        struct Choices: Encodable { var dice: [AssetListing] }
        return try JSONBody.response(Choices(dice: try DiceChoices(hoard: hoard, access: access).choices(for: session)))
    }

    /// The caller's group's dice statistics and high-score lists, over its sessions whose seed is revealed (a blind
    /// roll's result stays the host's until then).
    func diceStatistics(_ context: HoardRequestContext) throws -> Response {
        try diceStatistics(group: try context.requireMember().groupId)
    }

    /// The dice statistics of the session's group, to whoever sees the session: its players read the high-score list
    /// their table plays for, and nothing of another group's.
    func tableDiceStatistics(_ context: HoardRequestContext) throws -> Response {
        try diceStatistics(group: try visibleSession(context).0.groupId)
    }

    func diceStatistics(group: Int64) throws -> Response {
        let rolls = try hoard.catalog.diceRolls(group: group).compactMap { try? JSONValue(parsing: Data($0.utf8)) }
        return try JSONBody.response(DiceStatistics(rolls: rolls))
    }

    /// The dice of a session: to whoever sees the session while it lives, and after it ended to the members of its
    /// group (a seal outlives its session). The seed and the rolls only once revealed.
    func dice(_ context: HoardRequestContext) async throws -> Response {
        let id = context.parameter("id")
        guard let principal = context.principal else { throw APIError.unauthorized("send a participant's or member's token") }
        let seal = try hoard.catalog.diceSeal(session: id)
        let sees =
            if let session = try hoard.catalog.session(id: id) { Self.sees(principal, session) } else {
                principal.isMember && (principal.isAdmin || principal.groupId == seal?.groupId)
            }
        guard sees, let seal else { throw APIError.notFound("no session \(id)") }
        let rolls = seal.isRevealed ? try hoard.catalog.diceRolls(session: id).map { try JSONValue(parsing: Data($0.utf8)) } : []
        return try JSONBody.response(
            SessionDice(session: id, commitment: seal.seed.commitment, seed: seal.isRevealed ? seal.seed.description : nil, rolls: rolls))
    }

    /// Reveals a session's seed (its host or an operator): everyone at the table is sent it, with the blind rolls;
    /// no more rolls are made in the session. Ending a session does the same first.
    func revealDice(_ context: HoardRequestContext) async throws -> Response {
        let (session, principal) = try visibleSession(context)
        guard Self.isHost(principal, of: session) else { throw APIError.forbidden("only the session's host (or an operator) reveals its dice") }
        guard let seal = try await hub.revealDice(session: session.id) else { throw APIError.notFound("no session \(session.id)") }
        return try JSONBody.response(SessionFields.Dice(commitment: seal.seed.commitment, seed: seal.seed.description))
    }
}
