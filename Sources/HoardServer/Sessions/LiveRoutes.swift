import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import ServiceLifecycle

/// `GET /v1/sessions/{id}/live?since=SEQ`: the WebSocket that carries a session's ordered events.
///
/// Client → server text messages: `{"type":"op","opId":"…","op":{"kind":…}}` (a ``TableOp``; `opId`, the client's
/// own id for it, makes a resent op apply once), `{"type":"grab","entity":"…"}`, `{"type":"release","entity":"…"}`,
/// `{"type":"time","t0":…}` (answered with the server's clock, for players to play sounds in step).
/// Server → client: sequenced events (`op`, `presence`, `assets`, `grab`, `release`, `map`, `upload`), each as the
/// receiver's view of the table shows it, a `snapshot` of their whole view when a `since` cannot be continued, and
/// unsequenced `ping`s and `error`s (an error names the `opId` it answers).
struct LiveRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let hub: SessionHub
    /// On shutdown, how long a socket has to answer its close frame before its connection is aborted.
    var closeDeadline: Duration = .seconds(5)
    /// Each participant's message budget, shared by all their sockets.
    let rates = LiveRates(rate: LiveRoutes.rate, burst: LiveRoutes.burst)
    /// Each session's message budget, shared by all its participants: one table's crowd cannot take the server's
    /// time from another table.
    let sessionRates = LiveRates(rate: LiveRoutes.sessionRate, burst: 2 * LiveRoutes.sessionRate)
    /// Members' sockets by their token, so that a revoked token's close at once (``LiveSockets``).
    let sockets = LiveSockets()
    /// Told how long each op took from its decoded message to every socket's queue holding its event
    /// (`hoard_live_op_duration_seconds`): the server's own share of an op's delivery, waits for the session included.
    var opTimed: (@Sendable (Duration) -> Void)?

    /// Largest message a client may send: room for a stroke of ``TableOp/maxPoints`` points written at full precision.
    static let maxMessage = 1 << 20
    /// Most frames one message may come in (a 1 MiB message in frames of 1 KiB); more closes the socket with 1008.
    static let maxFrames = 1024
    /// Sustained messages per second per participant, across their sockets, and the burst allowed above it.
    static let rate = 50.0
    static let burst = 100.0
    /// Sustained messages per second per session, all its participants together (ten players at the full rate).
    static let sessionRate = 500.0
    /// Seconds in a row a socket may send more than twice the rate before it is closed (1008).
    static let floodSeconds = 3
    /// How long the server waits for a client's close frame after sending its own.
    static let closeTimeout: Duration = .seconds(3)

    func register(on endpoints: Endpoints) {
        endpoints.record(.get, "/v1/sessions/{id}/live")
        // A member token revoked through any server: its sockets here are marked (nothing more they send is applied)
        // before the revoking request is answered, then closed with 4401.
        // A member's role changed: their sockets close the same way (opened again, they act with the new role).
        access.onTokensRevoked { [sockets, hub] revoked, roleChanged in
            let hit = sockets.revoke(revoked) + sockets.revoke(roleChanged, refusingLater: false)
            guard !hit.isEmpty else { return }
            Task { for socket in hit { await hub.disconnect(session: socket.session, connection: socket.connection) } }
        }
        endpoints.router.ws("/v1/sessions/:id/live", shouldUpgrade: { request, context in
            _ = try await admit(context)
            // A browser that offered the page's subprotocol (its token rides in another) is answered with it.
            let offered = request.headers[values: .secWebSocketProtocol].flatMap { $0.split(separator: ",") }
            let answersProtocol = offered.contains { $0.trimmingCharacters(in: .whitespaces) == AccessIndex.liveProtocol }
            return .upgrade(answersProtocol ? [.secWebSocketProtocol: AccessIndex.liveProtocol] : [:])
        }, onUpgrade: { inbound, outbound, wsContext in
            let context = wsContext.requestContext
            let (session, principal) = try await admit(context)
            let since = wsContext.request.uri.queryParameters["since"].flatMap { Int64(String($0)) }
            let name = wsContext.request.uri.queryParameters["name"].flatMap { try? NameRule.checked(String($0), as: .displayName) }
            let headers = wsContext.request.headers
            let protocols: [String] = headers[values: .secWebSocketProtocol]
            let authorization: String? = AccessIndex.authorization(header: headers[.authorization], webSocketProtocols: protocols)
            var tokenHash: String?
            if let authorization, let token = try? AccessIndex.bearerToken(authorization) { tokenHash = Hoard.hashToken(token) }
            try await serve(
                session: session, principal: principal, tokenHash: tokenHash, since: since, name: name, inbound: inbound,
                outbound: outbound, channel: context.channel, logger: context.logger)
        })
    }

    /// Who a socket is at the table: a participant by the name they joined with; a member by the name their table gave
    /// (`name=`), else the host as "Host" (a token's label is never shown to players) and another member by their label.
    static func displayName(_ principal: Principal, _ isHost: Bool, given: String?) -> String {
        guard principal.participantId == nil else { return principal.tokenName }
        return given ?? (isHost ? SessionHub.defaultHostName : principal.memberName)
    }

    func admit(_ context: HoardRequestContext) async throws -> (SessionRecord, Principal) {
        try SessionRoutes.visibleSession(context, catalog: hoard.catalog)
    }

    func serve(
        session: SessionRecord, principal: Principal, tokenHash: String?, since: Int64?, name: String?, inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter, channel: any Channel, logger: Logger
    ) async throws {
        let connection = UUID()
        let isHost = SessionRoutes.isHost(principal, of: session)
        let participantId = principal.participantId ?? "host:\(principal.owner)"
        // Dropping a socket that does not read aborts its connection: a close frame would wait behind what it does not read.
        let link = LiveLink(abort: { channel.close(promise: nil) })
        let stream: AsyncStream<String>
        do {
            stream = try await hub.connect(
                session: session.id, connection: connection, participantId: participantId, name: Self.displayName(principal, isHost, given: name),
                player: principal.player, isHost: isHost,
                since: since, link: link)
        } catch let refusal as SessionHub.Refusal {
            return try await outbound.close(.policyViolation, reason: refusal.reason)
        }
        defer { Task { await hub.disconnect(session: session.id, connection: connection) } }
        // A member's socket follows its token: revoked meanwhile, it closes now.
        if principal.isMember, let tokenHash {
            guard sockets.add(connection, session: session.id, tokenHash: tokenHash) else {
                return try await outbound.close(LiveSockets.revokedCode, reason: LiveSockets.revokedReason)
            }
        }
        defer { sockets.remove(connection) }
        let deadline = closeDeadline
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in stream {
                        try await outbound.write(.text(text))
                        link.written(text.utf8.count)
                    }
                    // The hub finished the stream: the socket was dropped (its connection is aborted already), the
                    // session ended, its token was revoked, or the socket is closing.
                    if sockets.isRevoked(connection) {
                        try await outbound.close(LiveSockets.revokedCode, reason: LiveSockets.revokedReason)
                    } else if let ending = link.ending {
                        try await outbound.close(ending.closeCode, reason: ending.reason)
                    }
                }
                group.addTask {
                    try await read(inbound, outbound: outbound, session: session, principal: principal, participantId: participantId,
                                   isHost: isHost, connection: connection, link: link, logger: logger)
                }
                try await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            // Close frames to all; whatever has not answered by the deadline is aborted, so shutdown never waits on a client.
            Task {
                try? await outbound.close(.goingAway, reason: "the server is shutting down")
                try? await Task.sleep(for: deadline)
                link.abort()
            }
        }
    }

    /// Reads the socket's frames into messages (``LiveMessageAssembler``) and handles each within the participant's
    /// rate; returns after closing the socket for a broken message or a sustained flood, or when the client closed.
    func read(
        _ inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, session: SessionRecord, principal: Principal,
        participantId: String, isHost: Bool, connection: UUID, link: LiveLink, logger: Logger
    ) async throws {
        var assembler = LiveMessageAssembler(maxBytes: Self.maxMessage, maxFrames: Self.maxFrames)
        var flood = FloodWatch(rate: Self.rate, seconds: Self.floodSeconds)
        let key = "\(session.id) \(participantId)"
        for try await frame in inbound {
            let text: String?
            switch assembler.take(frame) {
            case .partial: continue
            case .close(let code, let reason):
                logger.notice("closing a live socket", metadata: [
                    "session": "\(session.id)", "participant": "\(participantId)", "reason": "\(reason)",
                ])
                return try await outbound.close(code, reason: reason)
            case .binary: text = nil
            case .text(let message): text = message
            }
            guard !link.isGone, !sockets.isRevoked(connection) else { return }
            switch flood.admit(rates.take(key) && sessionRates.take(session.id)) {
            case .handle: break
            case .dropAndWarn:
                let warning = "more than \(Int(Self.rate)) messages a second from you, or \(Int(Self.sessionRate)) from your table; "
                    + "slow down (the excess is dropped)"
                await reply(session.id, connection, "RATE_LIMITED", warning)
                continue
            case .drop: continue
            case .close:
                logger.notice("closing a flooding live socket", metadata: ["session": "\(session.id)", "participant": "\(participantId)"])
                return try await outbound.close(.policyViolation, reason: "more than twice the message rate for \(Self.floodSeconds) s")
            }
            guard let text else {
                await reply(session.id, connection, "BAD_MESSAGE", "send JSON text messages")
                continue
            }
            await handle(text, session: session, principal: principal, participantId: participantId, isHost: isHost,
                         connection: connection, link: link, logger: logger)
        }
    }

    func handle(
        _ text: String, session: SessionRecord, principal: Principal, participantId: String, isHost: Bool, connection: UUID,
        link: LiveLink? = nil, logger: Logger
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
                if case .chooseDice(_, let dice?) = op {
                    if let refusal = try DiceChoices(hoard: hoard, access: access).refusal(of: dice, in: session) {
                        return await reply(session.id, connection, "BAD_OP", refusal, opId: opId)
                    }
                } else if isHost, let refusal = try await admitArt(of: op, session: session, principal: principal) {
                    return await reply(session.id, connection, "MISSING_BLOBS", refusal, opId: opId)
                }
                // Its token revoked while the op was on its way: refused, not applied.
                guard !sockets.isRevoked(connection) else { return }
                let catalog = hoard.catalog
                let started = ContinuousClock.now
                defer { opTimed?(ContinuousClock.now - started) }
                let outcome = try await hub.apply(
                    session: session.id, op: op, opId: opId, from: participantId, as: isHost ? .host : .participant(participantId),
                    manifest: { digests in try SessionRoutes.manifestFields(try catalog.resolve(Set(digests), group: session.groupId)) },
                    link: link)
                switch outcome {
                case .refused(let error): await reply(session.id, connection, error.code.rawValue, error.message, opId: opId)
                case .duplicate, .appliedAsView:
                    if let opId { await hub.send(session: session.id, connection: connection, #"{"opId":"\#(opId)","type":"ack"}"#) }
                case .applied, .ignored: break
                }
            case "time":
                // A clock probe: `t0` (the client's clock when sent) comes back with the server's, so the client learns
                // its offset as NTP does: offset = serverTime − (t0 + t1) / 2, t1 its clock on receipt.
                guard case .number(let sent)? = message["t0"], sent.isFinite, abs(sent) < 1e15 else {
                    return await reply(session.id, connection, "BAD_MESSAGE", "a time message needs \"t0\": the client's clock in Unix ms")
                }
                let answer = JSONValue.object(["type": .string("time"), "t0": .number(sent), "serverTime": .number(hub.serverTime)])
                await hub.send(session: session.id, connection: connection, String(decoding: try CanonicalJSON.encode(answer), as: UTF8.self))
            case "grab", "release":
                guard !sockets.isRevoked(connection) else { return }
                guard let entity = message["entity"]?.stringValue, !entity.isEmpty, entity.count <= 256 else {
                    return await reply(session.id, connection, "BAD_MESSAGE", "\(type) needs an \"entity\" string")
                }
                let refusal = type == "grab"
                    ? try await hub.grab(session: session.id, entity: entity, by: participantId, isHost: isHost, link: link)
                    : try await hub.release(session: session.id, entity: entity, by: participantId, isHost: isHost, link: link)
                if let refusal {
                    let message =
                        refusal == TableError.Code.unknownEntity.rawValue
                        ? Table.refusal("entity", entity, of: participantId).message : "\(entity) is held by someone else"
                    await reply(session.id, connection, refusal, message)
                }
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
        let art = op.art
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

/// Token buckets of messages per participant (all their sockets draw on one), with `rate` a second and `burst` above.
final class LiveRates: Sendable {
    private struct Bucket {
        var tokens: Double
        var last: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Double
    private let buckets = NIOLockedValueBox<[String: Bucket]>([:])

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// Takes one message from `key`'s bucket; false when it is empty.
    func take(_ key: String, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLockedValue { buckets in
            if buckets.count > 4096 {
                // Forget full buckets: they are what a new one would be.
                buckets = buckets.filter { min(burst, $0.value.tokens + rate * Self.seconds(now - $0.value.last)) < burst }
            }
            var bucket = buckets[key] ?? Bucket(tokens: burst, last: now)
            bucket.tokens = min(burst, bucket.tokens + rate * Self.seconds(now - bucket.last))
            bucket.last = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            buckets[key] = bucket
            return allowed
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// One socket's answer to being over its participant's rate: the excess is dropped, with one `RATE_LIMITED` warning
/// per second; a socket that sends more than twice the rate for `seconds` seconds in a row is closed.
struct FloodWatch {
    enum Verdict: Equatable {
        case handle
        case drop
        case dropAndWarn
        case close
    }

    let rate: Double
    let seconds: Int
    private var window: ContinuousClock.Instant?
    private var dropped = 0
    private var floodedWindows = 0

    init(rate: Double, seconds: Int) {
        self.rate = rate
        self.seconds = seconds
    }

    mutating func admit(_ allowed: Bool, now: ContinuousClock.Instant = .now) -> Verdict {
        if let start = window, now - start >= .seconds(1) {
            // A window has passed: it counts as flooded when more than the rate was dropped (twice the rate sent).
            let elapsed = Int(LiveRates.seconds(now - start))
            floodedWindows = elapsed == 1 && Double(dropped) > rate ? floodedWindows + 1 : 0
            window = nil
            dropped = 0
        }
        guard !allowed else { return .handle }
        dropped += 1
        if window == nil {
            window = now
            return floodedWindows >= seconds ? .close : .dropAndWarn
        }
        return floodedWindows >= seconds ? .close : .drop
    }
}

extension LiveLink.Ending {
    /// The close frame that tells the client why (4403 is in the range kept for applications).
    var closeCode: WebSocketErrorCode { self == .removed ? .unknown(4403) : .goingAway }
    var reason: String { self == .removed ? "the host removed you from the session" : "the session ended" }
}
