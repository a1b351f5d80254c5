import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Answers a request that NIO's HTTP decoder cannot read (bare LF line ends, a request line that is not one, …)
/// with `400 Bad Request` — `501 Not Implemented` for a method the decoder does not know — and closes the
/// connection, after the answers to the requests before it, which it lets finish (it counts request heads going in
/// and response ends going out).
///
/// Without it such a request got no answer at all: on a connection that may still become a WebSocket, the upgrade
/// handler waits for a request head that never comes and swallows the decoder's error, so the client hung until
/// it gave up, holding a connection. A refusal between requests is not passed on as an error: the handlers after
/// this one are told the input closed (no request follows), so nothing logs an error for what any client may send
/// unauthenticated.
final class BadRequestAnswerer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Requests passed on whose response has not ended.
    private var unanswered = 0
    /// Set once the decoder failed: nothing more is passed on, and the 400 goes out when `unanswered` is 0.
    private var failed = false
    /// Whether a response to the unreadable request went out (ours, or the router's own when it saw the error).
    private var answered = false
    /// Whether a request's head was passed on and its end was not yet: the decoder failed in its body.
    private var isInRequest = false
    /// What the unreadable request is answered with.
    private var status: HTTPResponseStatus = .badRequest

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        guard case .head(let head) = unwrapInboundIn(data) else {
            if case .end = unwrapInboundIn(data) {
                isInRequest = false
                context.triggerUserOutboundEvent(ConnectionGuard.Progress.requestRead, promise: nil)
            }
            context.fireChannelRead(data)
            return
        }
        unanswered += 1
        isInRequest = true
        context.triggerUserOutboundEvent(ConnectionGuard.Progress.headRead, promise: nil)
        context.fireChannelRead(data)
        if head.headers.contains(name: "upgrade") {
            context.triggerUserOutboundEvent(ConnectionGuard.Progress.upgradeRequested, promise: nil)
            // The connection may become a WebSocket: once the decoder leaves, what arrives is not HTTP, so this
            // handler leaves first. (The upgrade handler answers what it cannot upgrade itself.)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        switch part {
        case .head:
            if failed, unanswered == 0 { answered = true }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            context.write(data, promise: promise)
            context.triggerUserOutboundEvent(ConnectionGuard.Progress.responseEnded, promise: nil)
            unanswered = max(0, unanswered - 1)
            guard failed, unanswered == 0 else { return }
            if answered {
                context.flush()
                context.close(promise: nil)
            } else {
                answer(context: context)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError, !failed else {
            context.fireErrorCaught(error)
            return
        }
        failed = true
        status = error == .invalidMethod ? .notImplemented : .badRequest
        // A request whose body the decoder could not finish must fail where it is read.
        if isInRequest { context.fireErrorCaught(error) }
        if unanswered == 0 { answer(context: context) }
    }

    private func answer(context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: ["Connection": "close", "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let closesInput = !isInRequest
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            // The WebSocket upgrade handler, still waiting for a first request, gives up quietly on this (and logs an
            // error on a closed channel).
            if closesInput { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
            context.close(promise: nil)
        }
    }
}

/// Any child channel with a ``BadRequestAnswerer`` right after its HTTP decoder (which also tells the
/// ``ConnectionGuard`` where each request the decoder reads is).
struct BadRequestAnsweringChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(BadRequestAnswerer(), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
