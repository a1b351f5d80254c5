import Foundation
import HoardCatalog
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Answers a WebSocket upgrade that will not happen with the status the API declares, before NIO's upgrader sees
/// it: `426` with `Sec-WebSocket-Version: 13` for another version, `400` without a valid `Sec-WebSocket-Key` or
/// version, and for the live channel `401` (no token, an unknown one) and `404` (an unknown session, or one the
/// token may not see), each with the API's JSON error body, then closes the connection.
///
/// Without it NIO's upgrader dropped a handshake it could not read without an answer, and Hummingbird answered every
/// refused upgrade `400` whatever the reason. An upgrade it lets through goes on untouched (and the route checks
/// access again).
final class UpgradeAnswerer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Why an upgrade is refused; nil lets it through.
    typealias Check = @Sendable (HTTPRequestHead) async -> APIError?

    private let check: Check
    /// Parts that came while the check ran (NIO's decoder stops after an upgrade head: its end, little else).
    private var held: [NIOAny] = []
    private var checking = false
    private var refused = false

    init(check: @escaping Check) {
        self.check = check
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard !checking else {
            held.append(data)
            if held.count > 8 { context.close(promise: nil) }
            return
        }
        guard case .head(let head) = unwrapInboundIn(data),
            head.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" })
        else { return context.fireChannelRead(data) }
        if let refusal = Self.handshakeRefusal(head) { return refuse(context: context, refusal) }
        checking = true
        held = [data]
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let check = self.check
        Task {
            let refusal = await check(head)
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                handler.decided(context: context, refusal: refusal)
            }
        }
    }

    private func decided(context: ChannelHandlerContext, refusal: APIError?) {
        checking = false
        guard context.channel.isActive else { return }
        if let refusal { return refuse(context: context, refusal) }
        let parts = held
        held = []
        // What it held goes on; what comes after the upgrade is not HTTP: this handler leaves.
        for part in parts { context.fireChannelRead(part) }
        context.fireChannelReadComplete()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// RFC 6455 4.2.1: one version, 13 (426 naming it otherwise), and one key, 16 bytes in base64.
    static func handshakeRefusal(_ head: HTTPRequestHead) -> APIError? {
        let versions = head.headers[canonicalForm: "sec-websocket-version"]
        guard versions.count == 1 else { return .badRequest("a WebSocket upgrade needs one Sec-WebSocket-Version: 13") }
        guard versions[0] == "13" else { return .upgradeRequired() }
        let keys = head.headers[canonicalForm: "sec-websocket-key"]
        guard keys.count == 1, let key = Data(base64Encoded: String(keys[0])), key.count == 16 else {
            return .badRequest("a WebSocket upgrade needs a Sec-WebSocket-Key: 16 random bytes in base64")
        }
        return nil
    }

    private func refuse(context: ChannelHandlerContext, _ error: APIError) {
        refused = true
        held = []
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(APIError.Body(error: .init(code: error.code, message: error.message)))) ?? Data()
        var headers = HTTPHeaders([
            ("Content-Type", "application/json; charset=utf-8"), ("Content-Length", "\(body.count)"), ("Connection", "close"),
        ])
        for field in error.headers { headers.add(name: field.name.rawName, value: field.value) }
        let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: error.status.code), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

extension UpgradeAnswerer {
    /// The live channel's access check, as `LiveRoutes` makes it: 401 without a known token, 404 for a session the
    /// token may not see. Other upgrade paths are left to the router.
    static func liveCheck(access: AccessIndex, catalog: Catalog) -> Check {
        { head in
            let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 5, parts[0].isEmpty, parts[1] == "v1", parts[2] == "sessions", parts[4] == "live" else { return nil }
            let id = HoardRequestContext.percentDecoded(String(parts[3]))
            do {
                let authorization = AccessIndex.authorization(
                    header: head.headers.first(name: "authorization"), webSocketProtocols: head.headers[canonicalForm: "sec-websocket-protocol"].map(String.init))
                guard let principal = try access.principal(authorization: authorization) else {
                    return .unauthorized("send a participant's or member's token")
                }
                guard let session = try catalog.session(id: id), SessionRoutes.sees(principal, session) else {
                    return .notFound("no session \(id)")
                }
                return nil
            } catch let error as APIError {
                return error
            } catch {
                return nil  // the route meets the same failure and answers it
            }
        }
    }
}

/// Any child channel with an ``UpgradeAnswerer`` right after its HTTP decoder and a ``ClientFrameGuard`` in front.
struct UpgradeAnsweringChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let check: UpgradeAnswerer.Check

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(UpgradeAnswerer(check: check), position: .after(decoder))
            try pipeline.addHandler(ClientFrameGuard(), position: .first)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Refuses unmasked client frames (RFC 6455 5.1: a server MUST close the connection on one; here with a close frame,
/// 1002), which NIO's frame decoder and swift-websocket accept. It reads the connection's bytes in front of every
/// other handler: a connection whose first request is a WebSocket upgrade (Hummingbird upgrades only a first request)
/// and that is answered 101 is read as frames — each frame's header checked, its payload passed over unread —
/// anything else is left alone for good (the handler leaves).
final class ClientFrameGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private enum State {
        /// Reading the first request's head.
        case request
        /// The head asked for a WebSocket: frames may follow before the answer.
        case awaitingAnswer
        /// Upgraded: checking frames.
        case frames
        /// Refused a frame: nothing more is read.
        case closed
        /// Not a WebSocket: everything passes (the handler is leaving).
        case passing
    }

    private var state = State.request
    private var head = ByteBuffer()
    /// The header of the frame being read.
    private var header: [UInt8] = []
    /// Payload bytes of the current frame not yet passed.
    private var payloadLeft: UInt64 = 0
    /// An unmasked frame came before the upgrade was answered.
    private var unmaskedEarly = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        switch state {
        case .closed:
            return
        case .passing:
            context.fireChannelRead(data)
        case .request:
            head.writeImmutableBuffer(bytes)
            let view = head.readableBytesView
            if let end = view.firstRange(of: [13, 10, 13, 10]) {
                let text = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self).lowercased()
                let isUpgrade =
                    text.hasPrefix("get ")
                    && text.split(separator: "\r\n").contains { line in
                        line.hasPrefix("upgrade:") && line.dropFirst(8).trimmingCharacters(in: .whitespaces) == "websocket"
                    }
                guard isUpgrade else { return leave(context: context, data) }
                state = .awaitingAnswer
                if !scan(view[end.upperBound...]) { unmaskedEarly = true }
                head = ByteBuffer()
            } else if head.readableBytes > 16 << 10 {
                return leave(context: context, data)
            }
            context.fireChannelRead(data)
        case .awaitingAnswer:
            if !scan(bytes.readableBytesView) { unmaskedEarly = true }
            context.fireChannelRead(data)
        case .frames:
            guard scan(bytes.readableBytesView) else { return refuse(context: context) }
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .awaitingAnswer = state else { return context.write(data, promise: promise) }
        guard case .byteBuffer(let buffer) = unwrapOutboundIn(data),
            buffer.readableBytesView.starts(with: Array("HTTP/1.1 101".utf8))
        else {
            context.write(data, promise: promise)
            state = .passing
            return context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        state = .frames
        context.triggerUserOutboundEvent(ConnectionGuard.Progress.upgraded, promise: nil)
        context.write(data, promise: promise)
        if unmaskedEarly { refuse(context: context) }
    }

    /// Reads frame headers through `bytes`; false at an unmasked one.
    private func scan(_ bytes: ByteBufferView) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if payloadLeft > 0 {
                let step = Int(min(payloadLeft, UInt64(bytes.endIndex - index)))
                payloadLeft -= UInt64(step)
                index += step
                continue
            }
            header.append(bytes[index])
            index += 1
            guard header.count >= 2 else { continue }
            guard header[1] & 0x80 != 0 else { return false }
            let code = header[1] & 0x7F
            let lengthBytes = code == 126 ? 2 : code == 127 ? 8 : 0
            guard header.count == 2 + lengthBytes + 4 else { continue }
            payloadLeft = lengthBytes == 0 ? UInt64(code) : header[2..<(2 + lengthBytes)].reduce(0) { $0 << 8 | UInt64($1) }
            header.removeAll(keepingCapacity: true)
        }
        return true
    }

    private func refuse(context: ChannelHandlerContext) {
        state = .closed
        let close = ByteBuffer(bytes: [0x88, 0x02, 0x03, 0xEA])  // close, 1002 (protocol error)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(close))).whenComplete { _ in channel.close(promise: nil) }
    }

    private func leave(context: ChannelHandlerContext, _ data: NIOAny) {
        state = .passing
        head = ByteBuffer()
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
