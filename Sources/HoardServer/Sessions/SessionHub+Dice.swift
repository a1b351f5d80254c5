import Foundation
import HoardCatalog
import HoardCore

// Dice: rolls drawn from the session's sealed seed, logged as `rolled` events, and the seed revealed at the end.
extension SessionHub {
    /// Rolls a `roll` op as the session's next event: roll *i* is the event's sequence number, drawn from the seal's
    /// seed (``DiceStream``), logged as `{"type":"rolled","from","name","player","dice","roll":{…},"label","to","blind"}` (kept in the
    /// session's dice rolls too) and sent to `audience` (nil: everyone; the host always). A blind roll's roller is sent
    /// the event without its `roll`, its formula in its place. Refused once the seed is revealed: later rolls would be
    /// foreseeable.
    func roll(session id: String, _ request: DiceRequest, opId: String?, from participantId: String, audience: Audience?) throws -> Outcome {
        guard let live = sessions[id], let seal = live.dice else { throw APIError.notFound("no session \(id)") }
        guard !seal.isRevealed else {
            return .refused(TableError(.forbidden, "this session's dice seed is revealed, so its rolls could be foreseen; roll in a new session"))
        }
        let index = live.lastSeq + 1
        let rolled: DiceRoll
        do {
            rolled = try request.formula.roll(seed: seal.seed, index: UInt64(index))
        } catch {
            return .refused(TableError(error))
        }
        var event: [String: JSONValue] = ["type": .string("rolled"), "from": .string(participantId), "roll": rolled.json]
        if let opId { event["opId"] = .string(opId) }
        // Drawn with the roller's dice; their name is kept for the group's statistics, which outlive the session.
        if let dice = live.table.chosenDice[participantId] { event["dice"] = .string(dice.description) }
        if let roller = live.connections.values.first(where: { $0.participantId == participantId }) {
            event["name"] = .string(roller.name)
            if let player = roller.player { event["player"] = .string(player) }
        }
        if let label = request.label { event["label"] = .string(label) }
        if let to = request.to { event["to"] = .array(to.map(JSONValue.string)) }
        var views = audience.map { [($0, Optional(event))] }
        if request.isBlind {
            event["blind"] = .bool(true)
            var sealed = event
            sealed["roll"] = nil
            sealed["formula"] = .string(request.formula.text)
            views = [(audience ?? .nobody, sealed)]
        }
        let seq: Int64
        do {
            seq = try publish(session: id, event, views: views, orTakenThrow: true, isRoll: true)
        } catch is SequenceTaken {
            throw SequenceTaken()
        } catch {
            sessions[id] = nil
            throw error
        }
        if let opId { Self.remember(opId, participantId, in: &sessions[id]!) }
        if let live = sessions[id], live.lastSeq - live.baseSeq >= Self.foldEvery { fold(id) }
        return .applied(seq: seq)
    }

    /// The session's dice as its document shows them: the commitment, and the seed only once revealed.
    func diceFields(session id: String) -> SessionFields.Dice? {
        sessions[id]?.dice.map { SessionFields.Dice(commitment: $0.seed.commitment, seed: $0.isRevealed ? $0.seed.description : nil) }
    }

    /// Reveals the session's seed: marks its seal revealed and sends everyone a
    /// `{"type":"revealed","seed","commitment","blind":[…]}` event with the blind rolls whole, once. Nil when the session
    /// has no seal. What the host asks for, and what ending a session does before it goes.
    @discardableResult
    func revealDice(session id: String) async throws -> DiceSealRecord? {
        try await load(id)
        let wasRevealed = sessions[id]?.dice?.isRevealed ?? false
        guard let seal = try catalog.revealDice(session: id) else { return nil }
        sessions[id]?.dice = seal
        guard !wasRevealed else { return seal }
        let blind = try catalog.diceRolls(session: id).compactMap { body -> JSONValue? in
            guard let event = try? JSONValue(parsing: Data(body.utf8)), event["blind"] == .bool(true) else { return nil }
            return event
        }
        let event: [String: JSONValue] = [
            "type": .string("revealed"), "seed": .string(seal.seed.description), "commitment": .string(seal.seed.commitment),
            "blind": .array(blind),
        ]
        try publish(session: id, event)
        return seal
    }
}
