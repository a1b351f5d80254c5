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
/// Client → server text messages: `{"type":"op","opId":"…","op":{"kind":…}}` (a ``TableOp``; `opId`, the client's
/// own id for it, makes a resent op apply once), `{"type":"grab","entity":"…"}`, `{"type":"release","entity":"…"}`.
/// Server → client: sequenced events (`op`, `presence`, `assets`, `grab`, `release`, `map`, `upload`), each as the
/// receiver's view of the table shows it, a `snapshot` of their whole view when a `since` cannot be continued, and
/// unsequenced `ping`s and `error`s (an error names the `opId` it answers).
struct LiveRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let hub: SessionHub

    /// Largest message a client may send: room for a stroke of ``TableOp/maxPoints`` points written at full precision.
    static let maxMessage = 1 << 20
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
        let (backlog, stream) = try await hub.connect(
            session: session.id, connection: connection, participantId: participantId, name: principal.tokenName, isHost: isHost, since: since)
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
                let opId = message["opId"]?.stringValue
                guard opId.map({ (1...64).contains($0.count) }) ?? true else {
                    return await reply(session.id, connection, "BAD_MESSAGE", "an opId is a string of 1 to 64 characters")
                }
                guard let json = message["op"] else { return await reply(session.id, connection, "BAD_MESSAGE", "an op message needs \"op\"", opId: opId) }
                guard json.depth <= SessionRoutes.maxDepth else { return await reply(session.id, connection, "BAD_OP", "the op is nested too deep", opId: opId) }
                let op: TableOp
                do {
                    op = try TableOp(json: json)
                } catch {
                    return await reply(session.id, connection, error.code.rawValue, error.message, opId: opId)
                }
                if isHost, let refusal = try await admitArt(of: op, session: session, principal: principal) {
                    return await reply(session.id, connection, "MISSING_BLOBS", refusal, opId: opId)
                }
                let catalog = hoard.catalog
                let outcome = try await hub.apply(
                    session: session.id, op: op, opId: opId, from: participantId, as: isHost ? .host : .participant(participantId),
                    manifest: { digests in try SessionRoutes.manifestFields(try catalog.resolve(Set(digests), group: session.groupId)) })
                switch outcome {
                case .refused(let error): await reply(session.id, connection, error.code.rawValue, error.message, opId: opId)
                case .duplicate:
                    if let opId { await hub.send(session: session.id, connection: connection, #"{"opId":"\#(opId)","type":"ack"}"#) }
                case .applied: break
                }
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

    /// Makes the art an op of the host's brings in reachable for the session (recorded, then known to the access
    /// index) when the host may read it; otherwise returns why not.
    func admitArt(of op: TableOp, session: SessionRecord, principal: Principal) async throws -> String? {
        let art: Set<Digest>
        switch op {
        case .add(_, let entity): art = JSONValue.object(entity).referencedDigests
        case .custom(let payload): art = payload.referencedDigests
        default: return nil
        }
        let fresh = art.filter { !access.isReachable($0, session: session.id) }
        guard !fresh.isEmpty else { return nil }
        let unreadable = fresh.filter { access.readable($0, by: principal) == nil }
        guard unreadable.isEmpty else { return "upload these first: " + unreadable.map(\.description).sorted().joined(separator: " ") }
        let resolved = try hoard.catalog.resolve(Set(fresh))
        try hoard.catalog.addReachable(session: session.id, resolved.reachable)
        access.addReachable(session: session.id, resolved.reachable)
        return nil
    }

    func reply(_ session: String, _ connection: UUID, _ code: String, _ message: String, opId: String? = nil) async {
        var body: [String: JSONValue] = ["type": .string("error"), "code": .string(code), "message": .string(message)]
        if let opId { body["opId"] = .string(opId) }
        guard let bytes = try? CanonicalJSON.encode(JSONValue.object(body)) else { return }
        await hub.send(session: session, connection: connection, String(decoding: bytes, as: UTF8.self))
    }
}
