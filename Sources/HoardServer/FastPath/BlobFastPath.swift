import Foundation
import HTTPTypes
import HoardCore
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// Answers `GET` and `HEAD /v1/blobs/{digest}` for hot blobs straight from the connection's bytes, in front of
/// NIO's HTTP decoder: no decoding into NIO's types and back, no task, no hop to Swift concurrency's pool, no
/// router. It is the first handler of every HTTP/1 connection (``FastPathChildChannel`` puts it there).
///
/// It reads request heads with ``RequestHead`` and, for each `GET` or `HEAD` without a body:
/// - answers it itself when it can answer exactly as the router would: a blob in the ``BlobCache`` (verified
///   bytes), readable by the bearer token, path `/v1/blobs/sha256:<hex>` with no query or escape, no
///   `Connection` header but `keep-alive`, no header it keeps sent twice, and no earlier request of the
///   connection still with the router (so responses keep their order);
/// - otherwise hands exactly that request's bytes to the decoder and counts it until ``ResponseTracker`` sees its
///   response end. Every other request (an upload, a `POST`) is handed on the same way, head and
///   `Content-Length` bytes of body, streamed as they arrive. Unknown tokens, missing or private blobs, unsatisfiable ranges and cold blobs all go to the
///   router, which owns every error and every disk read. Both paths build the answer with ``BlobResponsePlan``.
/// A head it does not understand (``RequestHead/Parse/foreign``: a body, an upgrade, another method or version,
/// any odd byte) hands the rest of the connection to the decoder, untouched, for good.
///
/// It stops answering while the socket is not writable and then stops reading too, so a client that sends
/// requests and never reads their answers holds a bounded amount of the server's memory.
final class BlobFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private static let cork = ChannelOptions.tcpOption(.init(rawValue: TCP_CORK))

    private let access: AccessIndex
    private let cache: BlobCache
    private let metrics: ServerMetrics
    private let serverName: String
    /// Bytes received and not yet answered or handed on: at most part of one head, or more while not writable.
    private var pending: ByteBuffer?
    /// Everything goes to the decoder from now on.
    private var isHandedOver = false
    /// Requests handed to the decoder whose response has not ended yet.
    private var routed = 0
    /// Bytes of the body of the request being handed on that are still to come.
    private var bodyToHandOn = 0
    /// Waiting for the socket to drain before answering more.
    private var isStalled = false
    /// A `read` held back while stalled.
    private var heldRead = false
    private var needsFlush = false
    /// Succeeds with true when the decoder gets its first bytes, with false when the connection ends before.
    var decoderStarted: EventLoopPromise<Bool>?

    init(access: AccessIndex, cache: BlobCache, metrics: ServerMetrics, serverName: String) {
        self.access = access
        self.cache = cache
        self.metrics = metrics
        self.serverName = serverName
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if isHandedOver { return forward(unwrapInboundIn(data), context: context) }
        var bytes = unwrapInboundIn(data)
        if pending == nil || pending?.readableBytes == 0 {
            pending = bytes
        } else {
            pending!.writeBuffer(&bytes)
        }
        drain(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if isStalled, context.channel.isWritable {
            isStalled = false
            drain(context: context)
            flushIfNeeded(context: context)
            if heldRead, !isStalled {
                heldRead = false
                context.read()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if isStalled {
            heldRead = true
        } else {
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending = nil
        decoderStarted?.succeed(false)
        decoderStarted = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        decoderStarted?.succeed(false)
        decoderStarted = nil
    }

    /// Hands bytes to the decoder.
    private func forward(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        decoderStarted?.succeed(true)
        decoderStarted = nil
        context.fireChannelRead(wrapInboundOut(bytes))
    }

    /// Called by ``ResponseTracker`` when the router's response to a handed-on request has ended.
    func responseEnded() {
        routed = max(0, routed - 1)
    }

    /// Answers or hands on every whole head in `pending`.
    private func drain(context: ChannelHandlerContext) {
        while !isHandedOver, !isStalled, let buffer = pending, buffer.readableBytes > 0 {
            if bodyToHandOn > 0 {
                let part = min(bodyToHandOn, buffer.readableBytes)
                bodyToHandOn -= part
                forward(pending!.readSlice(length: part)!, context: context)
                continue
            }
            let parse = buffer.withUnsafeReadableBytes { RequestHead.parse($0) }
            switch parse {
            case .incomplete:
                return
            case .foreign:
                handOver(context: context)
            case .request(let head, let length):
                guard context.channel.isWritable else {
                    isStalled = true
                    return
                }
                if routed > 0 || head.bodyLength > 0 || !answer(head, context: context) {
                    routed += 1
                    bodyToHandOn = head.bodyLength
                    forward(pending!.readSlice(length: length)!, context: context)
                } else {
                    pending!.moveReaderIndex(forwardBy: length)
                    context.triggerUserOutboundEvent(ConnectionGuard.Progress.served, promise: nil)
                }
            }
        }
    }

    /// Gives the rest of the connection to the decoder.
    private func handOver(context: ChannelHandlerContext) {
        isHandedOver = true
        isStalled = false
        if let rest = pending, rest.readableBytes > 0 { forward(rest, context: context) }
        pending = nil
        if heldRead {
            heldRead = false
            context.read()
        }
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    /// Writes the whole response and returns true, or returns false and writes nothing.
    private func answer(_ head: RequestHead, context: ChannelHandlerContext) -> Bool {
        let start = ContinuousClock.now
        guard head.method != .other, !head.hasRepeats, head.connection.map(Self.isKeepAlive) ?? true, let digest = head.blob,
            let principal = try? access.principal(authorization: head.authorization),
            let entry = access.readable(digest, by: principal),
            let hot = cache.hot(digest)
        else { return false }
        let status: Int
        let responseHead: ByteBuffer
        var part: ClosedRange<Int64>?
        if head.range == nil, head.ifNoneMatch == nil, head.ifRange == nil {
            // A plain 200: its head, the same for GET and HEAD, is made once per blob and kept with it.
            if let cached = hot.head, cached.mediaType == entry.mediaType {
                responseHead = cached.bytes
            } else {
                guard let plan = try? BlobResponsePlan.make(digest, entry, request: [:], isHead: false) else { return false }
                responseHead = serialize(plan, length: entry.size, context: context)
                cache.keep(BlobCache.Head(mediaType: entry.mediaType, bytes: responseHead), for: digest)
            }
            status = 200
            if !head.isHead, entry.size > 0 { part = 0...(entry.size - 1) }
        } else {
            var request = HTTPFields()
            if let range = head.range { request[.range] = range }
            if let ifNoneMatch = head.ifNoneMatch { request[.ifNoneMatch] = ifNoneMatch }
            if let ifRange = head.ifRange { request[.ifRange] = ifRange }
            guard let plan = try? BlobResponsePlan.make(digest, entry, request: request, isHead: head.isHead) else { return false }
            if plan.hasBody { part = plan.part ?? 0...(entry.size - 1) }
            responseHead = serialize(plan, length: part.map { Int64($0.count) } ?? 0, context: context)
            status = plan.status.code
        }
        var body: IOData?
        if let part {
            if let region = hot.file?.region(part) {
                body = .fileRegion(region)
            } else if let slice = hot.bytes.getSlice(at: hot.bytes.readerIndex + Int(part.lowerBound), length: Int(part.count)) {
                body = .byteBuffer(slice)
            } else {
                return false
            }
        }
        // Nothing reaches the socket before the flush, so the cork set below still holds the head back.
        context.write(wrapOutboundOut(.byteBuffer(responseHead)), promise: nil)
        context.write(wrapOutboundOut(.byteBuffer(HTTPDate.endOfHead)), promise: nil)
        switch body {
        case .fileRegion(let region):
            // Head and body leave in full segments (TCP_CORK, as nginx's tcp_nopush), and the region's descriptor,
            // its own, is closed once the kernel has sent it or the connection failed.
            let options = context.channel.syncOptions
            try? options?.setOption(Self.cork, value: 1)
            let sent = context.eventLoop.makePromise(of: Void.self)
            sent.futureResult.assumeIsolated().whenComplete { _ in
                try? options?.setOption(Self.cork, value: 0)
                try? region.fileHandle.close()
            }
            context.write(wrapOutboundOut(.fileRegion(region)), promise: sent)
        case .byteBuffer(let slice):
            context.write(wrapOutboundOut(.byteBuffer(slice)), promise: nil)
        case nil:
            break
        }
        if let part { metrics.bytesServed.increment(by: Int64(part.count)) }
        needsFlush = true
        metrics.cacheHits.increment()
        metrics.fastPathAnswers.increment()
        metrics.record(method: head.isHead ? "HEAD" : "GET", status: status, since: start)
        return true
    }

    /// The status line and headers of `plan`, up to and without `Date` and the empty line.
    private func serialize(_ plan: BlobResponsePlan, length: Int64, context: ChannelHandlerContext) -> ByteBuffer {
        var out = context.channel.allocator.buffer(capacity: 384)
        out.writeString("HTTP/1.1 \(plan.status.code) \(plan.status.reasonPhrase)\r\n")
        for field in plan.headers {
            out.writeString(field.name.rawName)
            out.writeStaticString(": ")
            out.writeString(field.value)
            out.writeStaticString("\r\n")
        }
        if plan.hasBody { out.writeString("Content-Length: \(length)\r\n") }
        out.writeString("Server: \(serverName)\r\n")
        return out
    }

    /// Whether a `Connection` value is exactly `keep-alive` (anything else is left to the router, which closes).
    static func isKeepAlive(_ connection: String) -> Bool {
        RequestHead.equalsIgnoringCase(connection.utf8, "keep-alive")
    }
}

/// Sits after the HTTP codec and tells ``BlobFastPath`` when a response of the router has ended, so the fast path
/// knows when it may answer again without overtaking it.
final class ResponseTracker: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var fastPath: BlobFastPath?

    func handlerAdded(context: ChannelHandlerContext) {
        fastPath = try? context.pipeline.syncOperations.handler(type: BlobFastPath.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fastPath = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { fastPath?.responseEnded() }
        context.write(data, promise: promise)
    }
}

/// Hummingbird's HTTP/1 and WebSocket child channel with a ``BlobFastPath`` in front of everything.
///
/// The inner channel's handling starts only once the fast path has handed the decoder a request: a connection
/// whose every request the fast path answered never starts HTTP negotiation, and the inner channel would log its
/// close as a failed upgrade.
struct FastPathChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let inner: Inner.Value
        let decoderStarted: EventLoopFuture<Bool>
        var channel: any Channel { inner.channel }
    }

    let inner: Inner
    let makeFastPath: @Sendable () -> BlobFastPath

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // The fast path completes `started` exactly once: on its first forwarded bytes, or when it leaves the
        // pipeline (the channel closed, also after a failed setup).
        let started = channel.eventLoop.makePromise(of: Bool.self)
        let fastPath = makeFastPath()
        do {
            try channel.pipeline.syncOperations.addHandler(fastPath, position: .first)
        } catch {
            started.succeed(false)
            return channel.eventLoop.makeFailedFuture(error)
        }
        fastPath.decoderStarted = started
        return inner.setup(channel: channel, logger: logger).map { Value(inner: $0, decoderStarted: started.futureResult) }
    }

    func handle(value: Value, logger: Logger) async {
        guard (try? await value.decoderStarted.get()) == true else {
            logger.trace("Connection closed; the fast path answered every request")
            return
        }
        await inner.handle(value: value.inner, logger: logger)
    }
}

/// The `Date` header and the empty line that ends a response head, made once a second (RFC 9110 IMF-fixdate).
enum HTTPDate {
    private static let cached = NIOLockedValueBox((second: -1, bytes: ByteBuffer()))
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Date: <now>\r\n\r\n`.
    static var endOfHead: ByteBuffer {
        let second = time(nil)
        return cached.withLockedValue { cached in
            if cached.second != second { cached = (second, ByteBuffer(string: "Date: \(format(second))\r\n\r\n")) }
            return cached.bytes
        }
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for seconds since 1970.
    static func format(_ seconds: Int) -> String {
        var value = seconds
        var parts = tm()
        gmtime_r(&value, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[(seconds / 86400 % 7 + 7) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
