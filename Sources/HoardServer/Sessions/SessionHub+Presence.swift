import Foundation
import HoardCatalog
import HoardCore
import Logging

// Sockets and presence: who is connected, to which replica, and what a socket that goes takes with it.
extension SessionHub {
    /// A socket the hub refuses.
    struct Refusal: Error, Sendable {
        var reason: String
    }

    /// Registers a socket and returns the stream of what it must send, starting with its backlog, atomically: no
    /// event falls between the backlog and the rest. With `since` inside the log, the backlog is exactly the events
    /// after it as this participant sees them; otherwise, and when those would pass ``outboundBytes``, it is one
    /// `snapshot` of their view now. Throws ``Refusal`` when the participant has ``socketsPerParticipant`` open.
    func connect(
        session id: String, connection: UUID, participantId: String, name: String, player: String? = nil, isHost: Bool, since: Int64?,
        link: LiveLink
    ) async throws -> AsyncStream<String> {
        try await load(id)
        // The table first catches up with what other replicas logged, and the backlog stops where the table is: an event
        // logged meanwhile comes once, with the others', not in the backlog too.
        try catchUp(id)
        guard let live = sessions[id] else { throw APIError.notFound("no session \(id)") }
        guard live.connections.values.count(where: { $0.participantId == participantId }) < Self.socketsPerParticipant else {
            throw Refusal(reason: "at most \(Self.socketsPerParticipant) sockets per participant")
        }
        let viewer: Table.Actor = isHost ? .host : .participant(participantId)
        var backlog: [String] = []
        // The log keeps up to one fold's worth of events before the base: a `since` among them is continued exactly,
        // unless that is more than a socket may have waiting (then a snapshot is smaller and as good).
        let events = try since.map { since -> [LoggedEvent] in
            guard since <= live.lastSeq, try catalog.eventBytes(session: id, after: since) <= Self.outboundBytes else { return [] }
            return try catalog.events(session: id, after: since).filter { $0.seq <= live.lastSeq }
        }
        if let since, let events, events.first.map({ $0.seq == since + 1 }) ?? (since == live.lastSeq) {
            replay: for event in events {
                switch try Self.text(of: event, for: viewer) {
                case .text(let text): backlog.append(text)
                case .nothing: continue
                case .wholeView:
                    backlog = [try snapshot(id, live, for: viewer)]
                    break replay
                }
            }
        } else {
            backlog.append(try snapshot(id, live, for: viewer))
        }
        if backlog.count > Self.outboundLimit || backlog.reduce(0, { $0 + $1.utf8.count }) > Self.outboundBytes {
            backlog = [try snapshot(id, live, for: viewer)]
        }
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(Self.outboundLimit))
        let added = Connection(participantId: participantId, name: name, player: player, isHost: isHost, continuation: continuation, link: link)
        for text in backlog { _ = Self.deliver(text, to: added) }
        let alreadyHere = live.connections.values.contains { $0.participantId == participantId }
        // Joined, for everyone, when this is the participant's first socket on any replica.
        var joins = false
        if !alreadyHere {
            joins = try !catalog.present(session: id, at: Date()).contains(participantId)
            try catalog.holdPresence(Presence(session: id, participant: participantId, name: name, replica: replica), until: leaseEnd())
        }
        sessions[id]?.connections[connection] = added
        departures[id]?[participantId] = nil
        if isHost { hostNames[id] = name }
        if joins {
            try publish(
                session: id,
                ["type": .string("presence"), "event": .string("joined"), "participant": Self.participant(participantId, name)])
        }
        return stream
    }

    /// Unregisters a socket; the participant's grabs are released and, when it has no other socket, it has left.
    /// When the session's last socket closes, its log is folded.
    func disconnect(session id: String, connection: UUID) {
        guard let gone = sessions[id]?.connections.removeValue(forKey: connection) else { return }
        gone.continuation.finish()
        departed(session: id, gone)
    }

    /// Whether a socket is still registered (a dropped one is not: nothing it sends is applied).
    func isConnected(session id: String, connection: UUID) -> Bool {
        sessions[id]?.connections[connection] != nil
    }

    /// Queues a message for a socket, within its budgets (``outboundBytes``, ``outboundLimit``); false when it has
    /// too much waiting already.
    static func deliver(_ text: String, to connection: Connection) -> Bool {
        guard connection.link.enqueue(text.utf8.count, limit: outboundBytes) else { return false }
        if case .dropped = connection.continuation.yield(text) { return false }
        return true
    }

    /// Drops sockets that do not read: each is cut off at once (no close handshake: it would not read one), and it
    /// has left like a socket that closed (its grabs released when it was its participant's last).
    func drop(session id: String, _ keys: [UUID]) {
        for key in keys {
            guard let gone = sessions[id]?.connections.removeValue(forKey: key) else { continue }
            logger.warning("disconnecting a client that does not read", metadata: [
                "session": "\(id)", "participant": "\(gone.participantId)", "queuedBytes": "\(gone.link.queuedBytes)",
            ])
            gone.link.drop()
            gone.continuation.finish()
            departed(session: id, gone)
        }
    }

    /// After a socket is gone: when it was its participant's last, their grabs are released and they have left; when
    /// it was the session's last, the log is folded.
    func departed(session id: String, _ gone: Connection) {
        guard let live = sessions[id] else { return }
        guard !live.connections.values.contains(where: { $0.participantId == gone.participantId }) else { return }
        do {
            for (entity, holder) in live.grabs where holder == gone.participantId {
                try releaseGrab(session: id, entity: entity, held: holder, by: holder)
            }
            try catalog.dropPresence(session: id, participant: gone.participantId, replica: replica)
            // Left, for everyone, when it was their last socket on any replica.
            if try !catalog.present(session: id, at: Date()).contains(gone.participantId) {
                departures[id, default: [:]][gone.participantId] = Date()
                try publish(
                    session: id,
                    ["type": .string("presence"), "event": .string("left"), "participant": Self.participant(gone.participantId, gone.name)])
            }
        } catch {
            logger.error("cannot log a presence event", metadata: ["session": "\(id)", "error": "\(error)"])
        }
        if sessions[id]?.connections.isEmpty == true { fold(id) }
    }

    /// Ends a session for everyone: its sockets are closed and its state forgotten (the catalog rows are the caller's).
    func end(session id: String) {
        if let live = sessions[id] {
            for connection in live.connections.values {
                connection.link.end(.sessionEnded)
                connection.continuation.finish()
            }
        }
        sessions[id] = nil
        access.setVisibleArt(session: id, nil)
    }

    /// Follows changes made through any server sharing the catalog: sockets of participants removed and of sessions
    /// deleted close; a session that reaches new art is loaded, so what its participants may fetch is known here.
    func follow(_ changes: [AccessIndex.SessionChange]) async {
        for change in changes {
            switch change {
            case .removed(let participant, let session): remove(participant: participant, session: session)
            case .ended(let session): end(session: session)
            case .reaches(let session): if sessions[session] == nil { _ = try? await load(session) }
            case .artChanged(let assets): artChanged(assets)
            }
        }
    }

    /// Closes a removed participant's sockets (4403) and lets them leave like a socket that closed: their grabs are
    /// released and the others see them go (the catalog row and the token are the caller's).
    func remove(participant: String, session id: String) {
        guard let live = sessions[id] else { return }
        for (key, connection) in live.connections where connection.participantId == participant {
            sessions[id]?.connections[key] = nil
            connection.link.end(.removed)
            connection.continuation.finish()
            departed(session: id, connection)
        }
    }

    /// Who is connected now, to any replica.
    func connected(session id: String) -> Set<String> {
        let here = Set(sessions[id]?.connections.values.map(\.participantId) ?? [])
        do {
            return here.union(try catalog.present(session: id, at: Date()))
        } catch {
            logger.warning("cannot read who is connected to other servers", metadata: ["session": "\(id)", "error": "\(error)"])
            return here
        }
    }

    /// Who is at the table as `GET /v1/sessions/{id}` lists them: of the session's participants, those connected, and
    /// those who left or joined (and never connected) less than ``awayGrace`` ago, shown away; then the host's seat, by
    /// the display name their table gave ("Host" until it has: a token's label is never shown).
    func seats(session: SessionRecord, participants: [ParticipantRecord]) -> (participants: [SessionFields.Participant], host: SessionFields.Participant) {
        let connected = connected(session: session.id)
        let since = Date().addingTimeInterval(-Double(awayGrace.components.seconds))
        let left = departures[session.id] ?? [:]
        let listed = participants.filter { connected.contains($0.id) || max($0.joinedAt, left[$0.id] ?? $0.joinedAt) > since }
        let hostId = "host:\(session.host)"
        return (
            listed.map { SessionFields.Participant(id: $0.id, name: $0.name, isConnected: connected.contains($0.id)) },
            SessionFields.Participant(id: hostId, name: hostNames[session.id] ?? Self.defaultHostName, isConnected: connected.contains(hostId))
        )
    }

    /// What the host is called until their table gives a display name.
    static let defaultHostName = "Host"

    /// A participant's presence on a replica whose lease ended (it died, or this process restarted): they leave, for
    /// everyone, unless they are connected to a replica still (this one included: its lease is then held again).
    func presenceExpired(_ presence: Presence) async throws {
        guard try !catalog.present(session: presence.session, at: Date()).contains(presence.participant) else { return }
        if let live = sessions[presence.session], let here = live.connections.values.first(where: { $0.participantId == presence.participant }) {
            try catalog.holdPresence(
                Presence(session: presence.session, participant: presence.participant, name: here.name, replica: replica), until: leaseEnd())
            return
        }
        try await load(presence.session)
        departures[presence.session, default: [:]][presence.participant] = Date()
        try publish(
            session: presence.session,
            ["type": .string("presence"), "event": .string("left"), "participant": Self.participant(presence.participant, presence.name)])
        logger.info("a participant left with the server they were connected to", metadata: [
            "session": "\(presence.session)", "participant": "\(presence.participant)",
        ])
    }

    static func participant(_ id: String, _ name: String) -> JSONValue {
        .object(["id": .string(id), "name": .string(name)])
    }
}
