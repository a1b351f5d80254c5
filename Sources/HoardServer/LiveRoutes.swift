import Foundation
import HoardCatalog
import HoardCore
import HoardImport
import HoardStore
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// `GET /v1/sessions/{id}/live?since=SEQ`: the WebSocket that carries a session's ordered events.
///
/// Client → server text messages: `{"type":"op","op":{…}}` (host only), `{"type":"grab","entity":"…"}`,
/// `{"type":"release","entity":"…"}`. Server → client: sequenced events (`op`, `presence`, `assets`, `grab`,
/// `release`, `map`), a `snapshot` when the client is too far behind, and unsequenced `error`s.
struct LiveRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let hub: SessionHub

    /// Largest message a client may send.
    static let maxMessage = 64 << 10
    /// Sustained messages per second per socket, and the burst allowed above it.
    static let rate = 50.0
    static let burst = 100.0

    func register(on endpoints: Endpoints) {
        endpoints.record(.get, "/v1/sessions/{id}/live")
        endpoints.router.ws("/v1/sessions/:id/live", shouldUpgrade: { _, context in
            _ = try await admit(context)
            return .upgrade([:])
        }, onUpgrade: { inbound, outbound, wsContext in
            let context = wsContext.requestContext
            let (session, principal) = try await admit(context)
            let since = wsContext.request.uri.queryParameters["since"].flatMap { Int64(String($0)) }
            try await serve(session: session, principal: principal, since: since, inbound: inbound, outbound: outbound, logger: context.logger)
        })
    }

    func admit(_ context: HoardRequestContext) async throws -> (SessionRecord, Principal) {
        try SessionRoutes.visibleSession(context, catalog: hoard.catalog)
    }

    func serve(
        session: SessionRecord, principal: Principal, since: Int64?, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        logger: Logger
    ) async throws {
        let connection = UUID()
        let isHost = SessionRoutes.isHost(principal, of: session)
        let participantId = principal.participantId ?? "host:\(principal.tokenName)"
        let hoard = self.hoard
        let (backlog, stream) = try await hub.connect(
            session: session.id, connection: connection, participantId: participantId, name: principal.tokenName, isHost: isHost, since: since,
            snapshot: {
                guard let current = try hoard.catalog.session(id: session.id),
                      let bytes = try Self.blockingRead(hoard, current.mapDigest)
                else { throw APIError.internalError("the session's map is missing") }
                let map = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
                let event: JSONValue = .object([
                    "type": .string("snapshot"), "seq": .number(Double(current.baseSeq)), "mapDigest": .string(current.mapDigest.description),
                    "map": map,
                ])
                return String(decoding: try CanonicalJSON.encode(event), as: UTF8.self)
            })
        defer { Task { await hub.disconnect(session: session.id, connection: connection) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for text in backlog { try await outbound.write(.text(text)) }
                for await text in stream { try await outbound.write(.text(text)) }
                // The hub finished the stream: this client fell too far behind.
                try await outbound.close(.policyViolation, reason: "too slow: reconnect with since=<last seq>")
            }
            group.addTask {
                var tokens = Self.burst
                var last = ContinuousClock.now
                for try await message in inbound.messages(maxSize: Self.maxMessage) {
                    let now = ContinuousClock.now
                    tokens = min(Self.burst, tokens + Self.rate * Double((now - last).components.attoseconds) / 1e18
                        + Self.rate * Double((now - last).components.seconds))
                    last = now
                    guard tokens >= 1 else {
                        await reply(session.id, connection, "RATE_LIMITED", "more than \(Int(Self.rate)) messages a second; slow down")
                        continue
                    }
                    tokens -= 1
                    guard case .text(let text) = message else {
                        await reply(session.id, connection, "BAD_MESSAGE", "send JSON text messages")
                        continue
                    }
                    await handle(text, session: session, principal: principal, participantId: participantId, isHost: isHost,
                                 connection: connection, logger: logger)
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    func handle(
        _ text: String, session: SessionRecord, principal: Principal, participantId: String, isHost: Bool, connection: UUID, logger: Logger
    ) async {
        guard let message = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), let type = message["type"]?.stringValue else {
            return await reply(session.id, connection, "BAD_MESSAGE", "a message is a JSON object with a \"type\"")
        }
        do {
            switch type {
            case "op":
                guard isHost else { return await reply(session.id, connection, "FORBIDDEN", "only the host changes the map") }
                guard let op = message["op"] else { return await reply(session.id, connection, "BAD_MESSAGE", "an op message needs \"op\"") }
                guard op.depth <= SessionRoutes.maxDepth else { return await reply(session.id, connection, "BAD_MESSAGE", "the op is nested too deep") }
                let fresh = op.referencedDigests.filter { access.readable($0, by: principalForSession(session)) == nil }
                if !fresh.isEmpty {
                    let unreadable = fresh.filter { access.readable($0, by: principal) == nil }
                    guard unreadable.isEmpty else {
                        return await reply(session.id, connection, "MISSING_BLOBS",
                                           "upload these first: " + unreadable.map(\.description).sorted().joined(separator: " "))
                    }
                    let resolved = try hoard.catalog.resolve(Set(fresh))
                    try hoard.catalog.addReachable(session: session.id, resolved.reachable)
                    access.addReachable(session: session.id, resolved.reachable)
                    var event = try SessionRoutes.manifestFields(resolved)
                    event["type"] = .string("assets")
                    try await hub.publish(session: session.id, event)
                }
                try await hub.publish(session: session.id, ["type": .string("op"), "from": .string(participantId), "op": op])
            case "grab", "release":
                guard let entity = message["entity"]?.stringValue, !entity.isEmpty, entity.count <= 256 else {
                    return await reply(session.id, connection, "BAD_MESSAGE", "\(type) needs an \"entity\" string")
                }
                let refusal = type == "grab"
                    ? try await hub.grab(session: session.id, entity: entity, by: participantId, isHost: isHost)
                    : try await hub.release(session: session.id, entity: entity, by: participantId, isHost: isHost)
                if let refusal { await reply(session.id, connection, refusal, "\(entity) is held by someone else") }
            default:
                await reply(session.id, connection, "BAD_MESSAGE", "unknown message type '\(type.prefix(40))'")
            }
        } catch {
            logger.error("live message failed", metadata: ["session": "\(session.id)", "error": "\(error)"])
            await reply(session.id, connection, "INTERNAL", "the server could not handle that message")
        }
    }

    /// A stand-in principal that can read exactly what the session's participants can.
    func principalForSession(_ session: SessionRecord) -> Principal {
        Principal(participant: "", name: "", session: session.id)
    }

    func reply(_ session: String, _ connection: UUID, _ code: String, _ message: String) async {
        let body: JSONValue = .object(["type": .string("error"), "code": .string(code), "message": .string(message)])
        guard let bytes = try? CanonicalJSON.encode(body) else { return }
        await hub.send(session: session, connection: connection, String(decoding: bytes, as: UTF8.self))
    }

    /// Reads a small blob synchronously (inside the hub's critical section, for snapshots).
    static func blockingRead(_ hoard: Hoard, _ digest: Digest) throws -> [UInt8]? {
        guard let store = hoard.store as? FileBlobStore else { return nil }
        return FileManager.default.contents(atPath: store.path(of: digest)).map(Array.init)
    }
}
