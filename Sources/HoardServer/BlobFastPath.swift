import HTTPTypes
import HoardCore
import NIOCore
import NIOHTTPTypes

/// Answers `GET` and `HEAD /v1/blobs/{digest}` for hot blobs on the connection's event loop, before the request
/// reaches the router: no task, no hop to Swift concurrency's pool and back, no router or middleware. It sits in
/// every HTTP/1 connection's pipeline, right after the HTTP codec.
///
/// It answers only what it can answer exactly as the router would, and passes everything else on untouched:
/// - a request whose blob is in the ``BlobCache`` (verified bytes), readable by its bearer token, with no query
///   string and no percent-encoding in its path, and without an upgrade or any `Connection` header but `keep-alive`;
/// - only while no earlier request of the connection is still with the router, so responses keep their order.
/// Unknown tokens, missing or private blobs, unsatisfiable ranges and cold blobs all go to the router, which owns
/// every error and every disk read. Both paths build their answer with ``BlobResponsePlan``.
final class BlobFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private static let prefix = Array("/v1/blobs/".utf8)

    private let access: AccessIndex
    private let cache: BlobCache
    private let metrics: ServerMetrics
    private let serverName: String
    /// Requests handed to the router whose response has not ended yet.
    private var routed = 0
    /// The request being answered here: its body parts are dropped.
    private var isAnswering = false
    private var needsFlush = false

    init(access: AccessIndex, cache: BlobCache, metrics: ServerMetrics, serverName: String) {
        self.access = access
        self.cache = cache
        self.metrics = metrics
        self.serverName = serverName
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if routed == 0, answer(head, context: context) {
                isAnswering = true
            } else {
                routed += 1
                context.fireChannelRead(data)
            }
        case .body:
            if !isAnswering { context.fireChannelRead(data) }
        case .end:
            if isAnswering { isAnswering = false } else { context.fireChannelRead(data) }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed = max(0, routed - 1) }
        context.write(data, promise: promise)
    }

    /// Writes the whole response and returns true, or returns false and writes nothing.
    private func answer(_ head: HTTPRequest, context: ChannelHandlerContext) -> Bool {
        let start = ContinuousClock.now
        let isHead = head.method == .head
        guard isHead || head.method == .get, let digest = Self.digest(in: head.path),
            !Self.closes(head.headerFields[.connection]), head.headerFields[.upgrade] == nil,
            let principal = try? access.principal(authorization: head.headerFields[.authorization]),
            let entry = access.readable(digest, by: principal),
            let bytes = cache.get(digest),
            var plan = try? BlobResponsePlan.make(digest, entry, request: head.headerFields, isHead: isHead)
        else { return false }
        plan.headers[HTTPField.Name.server] = serverName
        var body: ByteBuffer?
        if plan.hasBody {
            let part = plan.part ?? 0...(entry.size - 1)
            guard let slice = bytes.getSlice(at: bytes.readerIndex + Int(part.lowerBound), length: Int(part.count)) else { return false }
            plan.headers[HTTPField.Name.contentLength] = String(slice.readableBytes)
            body = slice
        }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: plan.status, headerFields: plan.headers))), promise: nil)
        if let body {
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            metrics.bytesServed.increment(by: Int64(body.readableBytes))
        }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        needsFlush = true
        metrics.cacheHits.increment()
        metrics.fastPathAnswers.increment()
        metrics.record(method: head.method.rawValue, status: plan.status.code, since: start)
        return true
    }

    /// Whether a `Connection` header asks to close after the response (left to the router, which closes).
    static func closes(_ connection: String?) -> Bool {
        guard let connection else { return false }
        return connection.utf8.count != 10 || connection.lowercased() != "keep-alive"
    }

    /// The digest in a path `/v1/blobs/sha256:<hex>`; nil for any other path, a query or percent-encoding.
    static func digest(in path: String?) -> Digest? {
        guard let path else { return nil }
        let utf8 = path.utf8
        guard utf8.count == prefix.count + 71, utf8.starts(with: prefix) else { return nil }
        return Digest(String(Substring(path.utf8.dropFirst(prefix.count))))
    }
}
