import Foundation
import HoardCatalog
import HoardCore
import Logging

// Grabs and their leases: one holder per entity, across replicas.
extension SessionHub {
    /// Takes a logged `grab` or `release` into the table's grabs.
    static func applyGrab(_ body: JSONValue, to live: inout Live) {
        guard let entity = body["entity"]?.stringValue else { return }
        switch body["type"]?.stringValue {
        case "grab": live.grabs[entity] = body["by"]?.stringValue
        case "release": live.grabs[entity] = nil
        default: break
        }
    }

    /// First request wins; the host may take over; everyone sees the one outcome. Returns an error code when refused.
    /// A grab whose lease ended is not held, whether or not a lease service has released it yet: a refused grab looks
    /// at the holder's lease in the catalog and, when it ended, releases it and asks again.
    func grab(session id: String, entity: String, by participant: String, isHost: Bool, link: LiveLink? = nil) async throws -> String? {
        let refusal = try await grabOnce(session: id, entity: entity, by: participant, isHost: isHost, link: link)
        guard refusal == "GRAB_DENIED", let holder = sessions[id]?.grabs[entity] else { return refusal }
        let held = HeldGrab(session: id, entity: entity, participant: holder)
        guard try catalog.expiredGrabs(before: Date(), limit: 1000).contains(held) else { return refusal }
        try await releaseExpired(held)
        return try await grabOnce(session: id, entity: entity, by: participant, isHost: isHost, link: link)
    }

    private func grabOnce(session id: String, entity: String, by participant: String, isHost: Bool, link: LiveLink?) async throws -> String? {
        try await load(id)
        if link?.isGone == true { return nil }
        return try decided(session: id) { () throws -> String? in
            guard let state = sessions[id] else { throw APIError.notFound("no session \(id)") }
            if !isHost, !Self.sees(participant, entity, on: state.table) { return Table.refusal("entity", entity, of: participant).code.rawValue }
            let holder = state.grabs[entity]
            if let holder {
                if holder == participant { return nil }
                if !isHost { return "GRAB_DENIED" }
            }
            // Held before it is sent: a socket dropped while it is sent releases what its participant holds.
            sessions[id]?.grabs[entity] = participant
            do {
                let event: [String: JSONValue] = ["type": .string("grab"), "entity": .string(entity), "by": .string(participant)]
                try publish(
                    session: id, event, views: Self.audience(of: entity, on: state.table).map { [($0, event)] }, orTakenThrow: true,
                    grab: .hold(entity: entity, participant: participant, replica: replica, until: leaseEnd()))
            } catch {
                sessions[id]?.grabs[entity] = holder
                throw error
            }
            return nil
        }
    }

    /// When this hub's grabs stop being leased: `grabLease` from now.
    nonisolated func leaseEnd() -> Date {
        Date().addingTimeInterval(LiveRates.seconds(grabLease))
    }

    /// Only the holder or the host releases.
    func release(session id: String, entity: String, by participant: String, isHost: Bool, link: LiveLink? = nil) async throws -> String? {
        try await load(id)
        if link?.isGone == true { return nil }
        return try decided(session: id) { () throws -> String? in
            if !isHost, let table = sessions[id]?.table, !Self.sees(participant, entity, on: table) {
                return Table.refusal("entity", entity, of: participant).code.rawValue
            }
            guard let holder = sessions[id]?.grabs[entity] else { return nil }
            guard holder == participant || isHost else { return "NOT_HOLDER" }
            try releaseGrab(session: id, entity: entity, held: holder, by: participant)
            return nil
        }
    }

    /// Releases a grab whose lease ended: its replica stopped renewing it (it died, or this process restarted). Nothing
    /// happens when the grab has changed hands or been released since.
    func releaseExpired(_ grab: HeldGrab) async throws {
        try await load(grab.session)
        guard try releaseGrab(session: grab.session, entity: grab.entity, held: grab.participant, by: grab.participant) else { return }
        logger.info("released a grab whose lease ended", metadata: [
            "session": "\(grab.session)", "entity": "\(grab.entity)", "participant": "\(grab.participant)",
        ])
    }

    /// Logs the release of `entity` while `holder` holds it, by `participant`; when another replica logged an event
    /// first, decided again on the table caught up (the grab may have changed hands: then nothing is released). Returns
    /// whether it released.
    @discardableResult
    func releaseGrab(session id: String, entity: String, held holder: String, by participant: String) throws -> Bool {
        try decided(session: id) {
            guard sessions[id]?.grabs[entity] == holder else { return false }
            sessions[id]?.grabs[entity] = nil
            let event: [String: JSONValue] = ["type": .string("release"), "entity": .string(entity), "by": .string(participant)]
            do {
                try publish(
                    session: id, event, views: sessions[id].flatMap { Self.audience(of: entity, on: $0.table) }.map { [($0, event)] },
                    orTakenThrow: true, grab: .drop(entity: entity))
            } catch {
                sessions[id]?.grabs[entity] = holder
                throw error
            }
            return true
        }
    }

    /// Whether a participant may grab or release `entity`: it is on the table and they see it. A hidden entity and an
    /// absent one are refused alike (``Table/refusal(_:_:of:)``), so a grab tells a player nothing they cannot see.
    static func sees(_ participant: String, _ entity: String, on table: Table) -> Bool {
        table.audience(ofEntity: entity)?.contains(participant) ?? false
    }

    /// Who is sent a grab or release of `entity`: those who see it (nil: everyone, for what is not on the table).
    static func audience(of entity: String, on table: Table) -> Audience? {
        table.audience(ofEntity: entity).flatMap { $0 == .everyone ? nil : $0 }
    }
}
