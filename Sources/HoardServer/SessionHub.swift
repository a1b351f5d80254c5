import Foundation
import HoardCatalog
import HoardCore
import Logging

/// Orders and fans out the live events of every game session: one sequence per session, every event logged in
/// the catalog before it is sent, so a client that reconnects with its last sequence number gets exactly what it
/// missed, and a server restart loses nothing.
actor SessionHub {
    /// One connected socket.
    struct Connection {
        var participantId: String
        var name: String
        var isHost: Bool
        var continuation: AsyncStream<String>.Continuation
    }

    struct Live {
        var lastSeq: Int64
        var baseSeq: Int64
        var connections: [UUID: Connection] = [:]
        /// Entity → participant holding it.
        var grabs: [String: String] = [:]
    }

    /// Messages a slow reader may have waiting before it is disconnected.
    static let outboundLimit = 2048

    private let catalog: Catalog
    private let logger: Logger
    private var sessions: [String: Live] = [:]

    init(catalog: Catalog, logger: Logger) {
        self.catalog = catalog
        self.logger = logger
    }

    private func live(_ id: String) throws -> Live {
        if let live = sessions[id] { return live }
        guard let record = try catalog.session(id: id) else { throw APIError.notFound("no session \(id)") }
        let live = Live(lastSeq: record.lastSeq, baseSeq: record.baseSeq)
        sessions[id] = live
        return live
    }

    /// Registers a socket and returns what it must send first (a snapshot and/or missed events) and the stream of
    /// everything after, atomically: no event falls between the backlog and the stream.
    func connect(
        session id: String, connection: UUID, participantId: String, name: String, isHost: Bool, since: Int64?, snapshot: () throws -> String
    ) throws -> (backlog: [String], stream: AsyncStream<String>) {
        var state = try live(id)
        var backlog: [String] = []
        let from: Int64
        if let since, since >= state.baseSeq, since <= state.lastSeq {
            from = since
        } else {
            backlog.append(try snapshot())
            from = state.baseSeq
        }
        backlog += try catalog.events(session: id, after: from).map(\.body)
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(Self.outboundLimit))
        let alreadyHere = state.connections.values.contains { $0.participantId == participantId }
        state.connections[connection] = Connection(participantId: participantId, name: name, isHost: isHost, continuation: continuation)
        sessions[id] = state
        if !alreadyHere {
            try publish(session: id, ["type": .string("presence"), "event": .string("joined"), "participant": Self.participant(participantId, name)])
        }
        return (backlog, stream)
    }

    /// Unregisters a socket; the participant's grabs are released and, when it has no other socket, it has left.
    func disconnect(session id: String, connection: UUID) {
        guard var state = sessions[id], let gone = state.connections.removeValue(forKey: connection) else { return }
        gone.continuation.finish()
        sessions[id] = state
        guard !state.connections.values.contains(where: { $0.participantId == gone.participantId }) else { return }
        do {
            for (entity, holder) in state.grabs where holder == gone.participantId {
                sessions[id]?.grabs[entity] = nil
                try publish(session: id, ["type": .string("release"), "entity": .string(entity), "by": .string(gone.participantId)])
            }
            try publish(session: id, ["type": .string("presence"), "event": .string("left"), "participant": Self.participant(gone.participantId, gone.name)])
        } catch {
            logger.error("cannot log a presence event", metadata: ["session": "\(id)", "error": "\(error)"])
        }
    }

    /// Assigns the next sequence number, logs the event, then sends it to every socket. Returns the sequence number.
    @discardableResult
    func publish(session id: String, _ event: [String: JSONValue]) throws -> Int64 {
        var state = try live(id)
        let seq = state.lastSeq + 1
        var body = event
        body["seq"] = .number(Double(seq))
        let text = String(decoding: try CanonicalJSON.encode(JSONValue.object(body)), as: UTF8.self)
        try catalog.appendEvent(session: id, seq: seq, body: text)
        state.lastSeq = seq
        sessions[id] = state
        for (key, connection) in state.connections {
            if case .dropped = connection.continuation.yield(text) {
                logger.warning("disconnecting a client that does not read", metadata: ["session": "\(id)", "participant": "\(connection.participantId)"])
                connection.continuation.finish()
                sessions[id]?.connections[key] = nil
            }
        }
        return seq
    }

    /// Sends a message to one socket only (errors, not logged, no sequence number).
    func send(session id: String, connection: UUID, _ text: String) {
        _ = sessions[id]?.connections[connection]?.continuation.yield(text)
    }

    /// A map replaced over HTTP: a `map` event whose sequence number becomes the new base for snapshots.
    func replaceMap(session id: String, commit: (Int64) throws -> Void, event: [String: JSONValue]) throws -> Int64 {
        let seq = try live(id).lastSeq + 1
        try commit(seq)
        sessions[id]?.baseSeq = seq
        sessions[id]?.lastSeq = seq - 1
        return try publish(session: id, event)
    }

    /// First request wins; the host may take over; everyone sees the one outcome. Returns an error code when refused.
    func grab(session id: String, entity: String, by participant: String, isHost: Bool) throws -> String? {
        let state = try live(id)
        if let holder = state.grabs[entity] {
            if holder == participant { return nil }
            if !isHost { return "GRAB_DENIED" }
        }
        sessions[id]?.grabs[entity] = participant
        try publish(session: id, ["type": .string("grab"), "entity": .string(entity), "by": .string(participant)])
        return nil
    }

    /// Only the holder or the host releases.
    func release(session id: String, entity: String, by participant: String, isHost: Bool) throws -> String? {
        let state = try live(id)
        guard let holder = state.grabs[entity] else { return nil }
        guard holder == participant || isHost else { return "NOT_HOLDER" }
        sessions[id]?.grabs[entity] = nil
        try publish(session: id, ["type": .string("release"), "entity": .string(entity), "by": .string(participant)])
        return nil
    }

    /// Who is connected now.
    func connected(session id: String) -> Set<String> {
        Set(sessions[id]?.connections.values.map(\.participantId) ?? [])
    }

    static func participant(_ id: String, _ name: String) -> JSONValue {
        .object(["id": .string(id), "name": .string(name)])
    }
}
