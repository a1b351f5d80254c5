import Foundation
import HoardCatalog
import HoardCore
import Logging

// Ops: applying a participant's op to the table, once, and logging it before it is sent.
extension SessionHub {
    /// What became of an op.
    enum Outcome: Sendable {
        /// Applied and sent; a `ping` has no sequence number.
        case applied(seq: Int64?)
        /// Applied and logged; its sender was sent their whole view again (which names no op id), so they are answered
        /// an `ack`.
        case appliedAsView(seq: Int64)
        /// Applied before under the same client op id: not applied again.
        case duplicate
        /// Refused; nothing changed.
        case refused(TableError)
        /// From a socket that was dropped: not applied.
        case ignored
    }

    /// Applies an op sent by `participantId` acting as `actor`, logs it and sends each participant their view of it,
    /// art first: an op that puts art in front of someone is preceded by an `assets` event with its manifest entries,
    /// for them. `manifest` gives those entries for digests.
    func apply(
        session id: String, op: TableOp, opId: String?, from participantId: String, as actor: Table.Actor,
        manifest: ([Digest]) throws -> [String: JSONValue], link: LiveLink? = nil
    ) async throws -> Outcome {
        try await load(id)
        if link?.isGone == true { return .ignored }
        return try decided(session: id) {
            try applyNow(session: id, op: op, opId: opId, from: participantId, as: actor, manifest: manifest)
        }
    }

    /// Runs a decision on the session's table until it is logged: when another replica logged an event first, the
    /// table catches up and `decide` runs again on it.
    func decided<T>(session id: String, _ decide: () throws -> T) throws -> T {
        for _ in 0..<16 {
            do {
                return try decide()
            } catch is SequenceTaken {
                try catchUp(id)
            }
        }
        throw APIError.storageUnavailable("SESSION_BUSY", "session \(id) is changing too fast on other servers; send again")
    }

    /// ``apply(session:op:opId:from:as:manifest:link:)`` on the table as it is now.
    func applyNow(
        session id: String, op: TableOp, opId: String?, from participantId: String, as actor: Table.Actor,
        manifest: ([Digest]) throws -> [String: JSONValue]
    ) throws -> Outcome {
        guard var table = sessions[id]?.table else { throw APIError.notFound("no session \(id)") }
        if let opId, sessions[id]?.recentOps[participantId]?.contains(opId) == true { return .duplicate }
        // Dice are chosen by whoever sends the op: the server says who.
        var op = op
        if case .chooseDice(_, let asset) = op { op = .chooseDice(by: participantId, asset: asset) }
        if case .add(_, let entity) = op { try learnFootprints(JSONValue.object(entity).referencedDigests, into: &table) }
        // The jukebox's ops carry the server's clock, never a client's: every seat and every replay reckons from it.
        if case .audio(let command) = op { op = .audio(command.stamped(serverTime)) }
        let change: Table.Change
        do {
            change = try table.apply(op, by: actor)
        } catch {
            return .refused(error)
        }
        guard change.isKept else {
            var ping = ["type": JSONValue.string("ping"), "from": .string(participantId), "op": change.op.json]
            if let opId { ping["opId"] = .string(opId) }
            let text = String(decoding: try CanonicalJSON.encode(JSONValue.object(ping)), as: UTF8.self)
            if let live = sessions[id] {
                drop(session: id, live.connections.filter { !Self.deliver(text, to: $0.value) }.map(\.key))
            }
            return .applied(seq: nil)
        }
        if case .roll(let request) = change.op {
            return try roll(session: id, request, opId: opId, from: participantId, audience: change.views?.first?.audience)
        }
        for (audience, digests) in change.art where !digests.isEmpty {
            var event = try manifest(digests.sorted())
            event["type"] = .string("assets")
            try publish(session: id, event, views: audience == .everyone ? nil : [(audience, event)])
        }
        var event: [String: JSONValue] = ["type": .string("op"), "from": .string(participantId), "op": change.op.json]
        if let opId { event["opId"] = .string(opId) }
        // A glimpse is logged with its end on this server's clock: every replica, and this one after a restart, ends it
        // then, and its art is fetchable until then only.
        var glimpseEnd: Date?
        if case .glimpse(_, _, let seconds) = change.op {
            let end = Date().addingTimeInterval(Double(seconds))
            event["until"] = .number((end.timeIntervalSince1970 * 1000).rounded())
            glimpseEnd = end
        }
        let views = Self.hearing(
            change.heard, event: event,
            views: change.views?.map { view in
                (view.audience, view.op.map { op -> [String: JSONValue] in event.merging(["op": op.json]) { $1 } })
            }, now: serverTime)
        let before = sessions[id]?.table
        sessions[id]?.table = table
        let seq: Int64
        do {
            seq = try publish(session: id, event, views: views, orTakenThrow: true)
        } catch is SequenceTaken {
            sessions[id]?.table = before ?? table  // nothing was logged: decided again once caught up
            throw SequenceTaken()
        } catch {
            sessions[id] = nil  // the state has an op the log lacks: read both again on next use
            throw error
        }
        if let opId { Self.remember(opId, participantId, in: &sessions[id]!) }
        if case .glimpse(let token, let to, _) = change.op, let glimpseEnd {
            startGlimpse(session: id, token: token, to: to, until: glimpseEnd)
        }
        if change.changesVisibility {
            if let affected = change.artAffected { try updateVisibleArt(id, of: affected) } else { try updateVisibleArt(id) }
        }
        if let live = sessions[id], live.lastSeq - live.baseSeq >= Self.foldEvery { fold(id) }
        if case .participant(let sender) = actor, change.views?.contains(where: { $0.op == nil && $0.audience.contains(sender) }) == true {
            return .appliedAsView(seq: seq)
        }
        return .applied(seq: seq)
    }

    /// `views` with, ahead of them, the event as each participant who starts or stops hearing an ambient sound is sent
    /// it: their view of the op (a `{"type":"audio"}` event when they see none of it) with `audio`, channel id → the
    /// channel and its `position` at `serverTime` (`now`), or null when they stop hearing it. One sent their whole view
    /// again hears what it carries.
    static func hearing(
        _ heard: [String: [String: AudioChannel?]], event: [String: JSONValue], views: [(Audience, [String: JSONValue]?)]?, now: Double
    ) -> [(Audience, [String: JSONValue]?)]? {
        guard !heard.isEmpty else { return views }
        var told: [(Audience, [String: JSONValue]?)] = []
        for (participant, channels) in heard.sorted(by: { $0.key < $1.key }) {
            var body: [String: JSONValue] = ["type": .string("audio")]
            if let views {
                if let view = views.first(where: { $0.0.contains(participant) }) {
                    guard let own = view.1 else { continue }
                    body = own
                }
            } else {
                body = event
            }
            body["audio"] = .object(channels.mapValues { $0.map { $0.json(at: now) } ?? .null })
            body["serverTime"] = .number(now.rounded())
            told.append((.only([participant]), body))
        }
        return told + (views ?? [(.everyone, event)])
    }
}
