import Foundation
import HoardCatalog
import HoardCore
import Logging

// Sequencing: one number per event, logged before it is sent, and catching up with what other replicas logged.
extension SessionHub {
    /// Assigns the next sequence number, logs the event, then sends it to every socket: the host `event`, each
    /// participant the view whose audience holds them (a nil view: their whole view again), or nothing.
    ///
    /// When another replica logged that number first, the table catches up and the event is logged after (it does
    /// not depend on the table), unless `orTakenThrow`: then it throws ``SequenceTaken`` for its caller to decide again.
    @discardableResult
    func publish(
        session id: String, _ event: [String: JSONValue], views: [(Audience, [String: JSONValue]?)]? = nil, orTakenThrow: Bool = false,
        grab: GrabChange? = nil, isRoll: Bool = false
    ) throws -> Int64 {
        if orTakenThrow { return try publishOnce(session: id, event, views: views, grab: grab, isRoll: isRoll) }
        return try decided(session: id) { try publishOnce(session: id, event, views: views, grab: grab, isRoll: isRoll) }
    }

    /// ``publish(session:_:views:orTakenThrow:grab:)`` at the number after the table's.
    func publishOnce(
        session id: String, _ event: [String: JSONValue], views: [(Audience, [String: JSONValue]?)]?, grab: GrabChange?,
        isRoll: Bool = false
    ) throws -> Int64 {
        guard let live = sessions[id] else { throw APIError.notFound("no session \(id)") }
        let seq = live.lastSeq + 1
        let number = JSONValue.number(Double(seq))
        let text = try Self.encode(event.merging(["seq": number]) { $1 })
        var viewTexts: [(Audience, String?)] = []
        var stored: String?
        if let views {
            viewTexts = try views.map { ($0.0, try $0.1.map { try Self.encode($0.merging(["seq": number]) { $1 }) }) }
            let entries = views.map { audience, body in
                JSONValue.object(["to": audience.json, "event": body.map { .object($0.merging(["seq": number]) { $1 }) } ?? .null])
            }
            stored = String(decoding: try CanonicalJSON.encode(JSONValue.array(entries)), as: UTF8.self)
        }
        do {
            let started = ContinuousClock.now
            try catalog.appendEvent(session: id, seq: seq, body: text, views: stored, grab: grab, isRoll: isRoll)
            appendTimed?(ContinuousClock.now - started)
        } catch {
            if error.code == .conflict { throw SequenceTaken() }
            throw error
        }
        sessions[id]?.lastSeq = seq
        var slow: [UUID] = []
        for (key, connection) in live.connections {
            var message: String? = text
            if !connection.isHost, views != nil {
                message = nil
                if let (_, view) = viewTexts.first(where: { $0.0.contains(connection.participantId) }) {
                    if let view {
                        message = view
                    } else if let current = sessions[id] {
                        message = try snapshot(id, current, for: .participant(connection.participantId))
                    }
                }
            }
            guard let message else { continue }
            if !Self.deliver(message, to: connection) { slow.append(key) }
        }
        // After every socket has this event: dropping publishes events of its own (release, left), which must follow.
        drop(session: id, slow)
        return seq
    }

    /// An event another replica logged, from the catalog's ``SessionEventFeed``: applied and sent on when it is the
    /// table's next; an earlier one is this replica's own or known already; a later one means events were missed,
    /// which are read from the log.
    func receive(session id: String, event: LoggedEvent) {
        guard let live = sessions[id], !live.isReloading, event.seq > live.lastSeq else { return }
        do {
            if event.seq == live.lastSeq + 1 {
                try applyLogged(id, [event])
            } else {
                try catchUp(id)
            }
        } catch {
            logger.error("cannot apply another server's session events", metadata: ["session": "\(id)", "error": "\(error)"])
        }
    }

    /// Brings the table up to the log: the events after its number, applied and sent on as this replica's own are.
    func catchUp(_ id: String) throws {
        guard let live = sessions[id], !live.isReloading else { return }
        try applyLogged(id, try catalog.events(session: id, after: live.lastSeq))
    }

    /// Applies events logged elsewhere, in order, and sends each socket its view of them (``text(of:for:)``, as a
    /// reconnection's backlog). A replaced map, or events no longer in the log, read the whole session again.
    func applyLogged(_ id: String, _ events: [LoggedEvent]) throws {
        var slow: Set<UUID> = []
        for event in events {
            guard let live = sessions[id], event.seq > live.lastSeq else { continue }
            let body = try? JSONValue(parsing: Data(event.body.utf8))
            let type = body?["type"]?.stringValue
            guard event.seq == live.lastSeq + 1, type != "map" else {
                reload(id)
                return
            }
            switch type {
            case "op":
                if let opJSON = body?["op"], let op = try? TableOp(json: opJSON), sessions[id] != nil {
                    if case .add(_, let entity) = op {
                        try? learnFootprints(JSONValue.object(entity).referencedDigests, into: &sessions[id]!.table)
                    }
                    _ = try? sessions[id]?.table.apply(op, by: .host)
                    // Ended by its sender; here too if its sender dies first.
                    if case .glimpse(let token, let to, let seconds) = op {
                        startGlimpse(session: id, token: token, to: to, until: Self.glimpseEnd(body ?? .null, seconds), grace: Self.glimpseGrace)
                    }
                }
                if let opId = body?["opId"]?.stringValue, let from = body?["from"]?.stringValue { Self.remember(opId, from, in: &sessions[id]!) }
            case "grab", "release":
                if let body { Self.applyGrab(body, to: &sessions[id]!) }
            case "rolled":
                if let opId = body?["opId"]?.stringValue, let from = body?["from"]?.stringValue { Self.remember(opId, from, in: &sessions[id]!) }
            case "revealed":
                sessions[id]?.dice?.isRevealed = true
            case "upload":
                if let digest = body?["digest"]?.stringValue.flatMap(Digest.init), let by = body?["by"]?.stringValue {
                    sessions[id]?.uploads[digest, default: []].insert(by)
                }
            default:
                break
            }
            sessions[id]?.lastSeq = event.seq
            guard let current = sessions[id] else { return }
            for (key, connection) in current.connections {
                let viewer: Table.Actor = connection.isHost ? .host : .participant(connection.participantId)
                let message: String?
                switch try Self.text(of: event, for: viewer) {
                case .text(let text): message = text
                case .nothing: message = nil
                case .wholeView: message = try snapshot(id, current, for: viewer)
                }
                if let message, !Self.deliver(message, to: connection) { slow.insert(key) }
            }
        }
        try updateVisibleArt(id)
        drop(session: id, Array(slow))
        if let live = sessions[id], live.lastSeq - live.baseSeq >= Self.foldEvery { fold(id) }
    }

    /// Reads a session again (base map, grabs and log) in the background, keeping its sockets, and sends every
    /// socket a `snapshot` of its view: for a map another replica replaced, or a log that moved past this table.
    func reload(_ id: String) {
        guard let live = sessions[id], !live.isReloading else { return }
        sessions[id]?.isReloading = true
        Task {
            sessions[id] = nil
            do {
                try await load(id)
            } catch {
                logger.error("cannot read a session again", metadata: ["session": "\(id)", "error": "\(error)"])
                var kept = live
                kept.isReloading = false
                if sessions[id] == nil { sessions[id] = kept }
                return
            }
            sessions[id]?.connections.merge(live.connections) { current, _ in current }
            guard let fresh = sessions[id] else { return }
            var slow: [UUID] = []
            for (key, connection) in fresh.connections {
                let text = try snapshot(id, fresh, for: connection.isHost ? .host : .participant(connection.participantId))
                if !Self.deliver(text, to: connection) { slow.append(key) }
            }
            drop(session: id, slow)
        }
    }

    static func encode(_ event: [String: JSONValue]) throws -> String {
        String(decoding: try CanonicalJSON.encode(JSONValue.object(event)), as: UTF8.self)
    }
}

/// Another replica logged the session's next sequence number first: nothing was logged or sent.
struct SequenceTaken: Error {}
