import Foundation
import HoardClient
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP/1.1 for the command line's client over SwiftNIO (`http://`, and `https://` through NIOSSL): keep-alive connections, at most
/// `maxConnections` per server, and every body read from the socket only as fast as the caller takes it (the
/// channel reads on demand). On Linux, URLSession hands each 16 KiB of a body through libcurl, a timer reset and an
/// operation queue; a cold join of 1,000 assets spent more CPU there than on the blobs.
public final class NIOHTTPExchange: HTTPExchange {
    private let group: any EventLoopGroup
    private let pool: ConnectionPool
    private let timeout: TimeAmount
    /// What `https://` connections trust; nil when the system's certificates could not be read.
    private let tls: NIOSSLContext?

    /// An exchange with at most `maxConnections` connections per server, failing a request after `timeout` seconds
    /// in which no byte went either way; `https://` servers are trusted by the system's certificates.
    public init(maxConnections: Int, timeout: TimeInterval, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.group = group
        self.timeout = .milliseconds(Int64(timeout * 1000))
        pool = ConnectionPool(limit: max(1, maxConnections))
        tls = try? NIOSSLContext(configuration: .hoardClient(caCertificates: nil))
    }

    /// The same, trusting for `https://` only the certificates of the PEM file `caCertificates`; throws when it
    /// cannot be read.
    public init(
        maxConnections: Int, timeout: TimeInterval, caCertificates: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.group = group
        self.timeout = .milliseconds(Int64(timeout * 1000))
        pool = ConnectionPool(limit: max(1, maxConnections))
        tls = try NIOSSLContext(configuration: .hoardClient(caCertificates: caCertificates))
    }

    deinit { pool.closeAll() }

    public func stream(_ request: URLRequest, uploadFile: URL?) async throws -> HTTPStreamedResponse {
        guard let url = request.url, url.scheme == "http" || url.scheme == "https", let host = url.host else {
            throw NIOHTTPExchangeError("only http:// and https:// addresses are supported here, not \(request.url?.absoluteString ?? "none")")
        }
        let isTLS = url.scheme == "https"
        guard !isTLS || tls != nil else { throw NIOHTTPExchangeError("this system's trusted certificates cannot be read; name them with --cacert") }
        let key = ConnectionPool.Key(host: host, port: url.port ?? (isTLS ? 443 : 80), isTLS: isTLS)
        // A kept-alive connection the server closed meanwhile fails before any answer: one more try on a new one.
        for attempt in 1...2 {
            let lease = try await pool.lease(key)
            let connection: Connection
            switch lease {
            case .reuse(let idle): connection = idle
            case .open:
                do {
                    connection = try await Connection.open(key, group: group, timeout: timeout, tls: tls)
                } catch {
                    pool.release(key, keeping: nil)
                    throw error
                }
            }
            do {
                let head = try await connection.send(request, url: url, host: key, uploadFile: uploadFile)
                return HTTPStreamedResponse(response: head, body: connection.body { [pool] reusable in
                    pool.release(key, keeping: reusable ? connection : nil)
                })
            } catch let error as ConnectionClosedEarly where attempt == 1 && lease.isReuse {
                _ = error
                pool.release(key, keeping: nil)
            } catch {
                connection.close()
                pool.release(key, keeping: nil)
                throw error
            }
        }
        throw NIOHTTPExchangeError("the server closed the connection twice before answering")
    }
}

/// A transport failure of ``NIOHTTPExchange`` (the client reports it as a network error).
public struct NIOHTTPExchangeError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The connection closed before the response head arrived.
private struct ConnectionClosedEarly: Error, CustomStringConvertible {
    var description: String { "the server closed the connection before answering" }
}

/// Open connections per server: idle ones to reuse, and a bound on how many exist, with callers waiting in turn.
private final class ConnectionPool: Sendable {
    struct Key: Hashable, Sendable {
        var host: String
        var port: Int
        var isTLS: Bool
    }

    enum Lease {
        case reuse(Connection)
        case open

        var isReuse: Bool { if case .reuse = self { true } else { false } }
    }

    private struct State {
        var idle: [Key: [Connection]] = [:]
        var open: [Key: Int] = [:]
        var waiting: [Key: [CheckedContinuation<Lease, any Error>]] = [:]
    }

    private let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int) { self.limit = limit }

    /// An idle connection, or leave to open one, waiting while `limit` connections are busy.
    func lease(_ key: Key) async throws -> Lease {
        try await withCheckedThrowingContinuation { continuation in
            let lease: Lease? = state.withLockedValue { state in
                while let idle = state.idle[key]?.popLast() {
                    if idle.isActive { return .reuse(idle) }
                    state.open[key, default: 1] -= 1
                }
                if state.open[key, default: 0] < limit {
                    state.open[key, default: 0] += 1
                    return .open
                }
                state.waiting[key, default: []].append(continuation)
                return nil
            }
            if let lease { continuation.resume(returning: lease) }
        }
    }

    /// A lease ends: `connection` goes back for reuse (to a waiting caller first), or, when nil, its place is freed.
    func release(_ key: Key, keeping connection: Connection?) {
        let handOver: (CheckedContinuation<Lease, any Error>, Lease)? = state.withLockedValue { state in
            if let waiter = state.waiting[key]?.first {
                state.waiting[key]?.removeFirst()
                return (waiter, connection.map(Lease.reuse) ?? .open)
            }
            if let connection {
                state.idle[key, default: []].append(connection)
            } else {
                state.open[key, default: 1] -= 1
            }
            return nil
        }
        if let (waiter, lease) = handOver { waiter.resume(returning: lease) }
    }

    func closeAll() {
        let idle = state.withLockedValue { state in
            defer { state.idle = [:] }
            return state.idle.values.flatMap { $0 }
        }
        for connection in idle { connection.close() }
    }
}

/// One HTTP/1.1 connection: one request at a time, its answer read on demand.
private final class Connection: Sendable {
    let channel: any Channel
    let reader: ResponseReader

    init(channel: any Channel, reader: ResponseReader) {
        self.channel = channel
        self.reader = reader
    }

    var isActive: Bool { channel.isActive }

    static func open(_ key: ConnectionPool.Key, group: any EventLoopGroup, timeout: TimeAmount, tls: NIOSSLContext?) async throws -> Connection {
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.autoRead, value: false)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if key.isTLS, let tls {
                        try channel.pipeline.syncOperations.addHandlers([
                            NIOSSLClientHandler(context: tls, serverHostname: key.isIPAddress ? nil : key.host), HandshakeReader(),
                        ])
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandlers([IdleStateHandler(allTimeout: timeout), ResponseReader()])
                }
            }
            .connect(host: key.host, port: key.port)
            .get()
        if key.isTLS {
            do {
                try await channel.pipeline.handler(type: HandshakeReader.self).get().finished(on: channel.eventLoop).get()
            } catch {
                channel.close(promise: nil)
                throw error
            }
        }
        let reader = try await channel.pipeline.handler(type: ResponseReader.self).get()
        return Connection(channel: channel, reader: reader)
    }

    func close() { channel.close(promise: nil) }

    /// Writes the request and waits for the response head.
    func send(_ request: URLRequest, url: URL, host: ConnectionPool.Key, uploadFile: URL?) async throws -> HTTPURLResponse {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"), uri: target)
        head.headers.add(name: "Host", value: host.port == (host.isTLS ? 443 : 80) ? host.host : "\(host.host):\(host.port)")
        for (name, value) in request.allHTTPHeaderFields ?? [:] where name.lowercased() != "host" {
            head.headers.add(name: name, value: value)
        }
        var upload: FileHandle?
        if let uploadFile {
            let size = try FileManager.default.attributesOfItem(atPath: uploadFile.path)[.size] as? NSNumber
            head.headers.replaceOrAdd(name: "Content-Length", value: "\(size?.int64Value ?? 0)")
            upload = try FileHandle(forReadingFrom: uploadFile)
        } else if let body = request.httpBody {
            head.headers.replaceOrAdd(name: "Content-Length", value: "\(body.count)")
        } else if head.method != .GET && head.method != .HEAD {
            head.headers.replaceOrAdd(name: "Content-Length", value: "0")
        }
        defer { try? upload?.close() }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let upload {
            // Streamed in pieces, each written before the next is read: memory stays bounded whatever the file.
            while let piece = try upload.read(upToCount: 1 << 20), !piece.isEmpty {
                try await channel.writeAndFlush(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: piece)))).get()
            }
        } else if let body = request.httpBody, !body.isEmpty {
            channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        }
        do {
            try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        } catch {
            throw ConnectionClosedEarly()
        }
        guard case .head(let response) = try await reader.next(on: channel.eventLoop) else {
            throw NIOHTTPExchangeError("the server's answer did not start with a status line")
        }
        var fields: [String: String] = [:]
        for (name, value) in response.headers {
            fields[name] = fields[name].map { $0 + ", " + value } ?? value
        }
        guard let answer = HTTPURLResponse(url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1", headerFields: fields)
        else { throw NIOHTTPExchangeError("the server's answer could not be read") }
        return answer
    }

    /// The body as a stream that reads the socket only when asked for the next chunk. `finished(reusable)` runs once:
    /// at the body's end (reusable when the server keeps the connection), on a failure, or when the stream is dropped
    /// before its end (the connection is then closed: its unread rest cannot be skipped cheaply).
    func body(finished: @escaping @Sendable (Bool) -> Void) -> AsyncThrowingStream<Data, any Error> {
        let end = BodyEnd(connection: self, finished: finished)
        return AsyncThrowingStream {
            do {
                switch try await end.connection.reader.next(on: end.connection.channel.eventLoop) {
                case .body(let buffer): return Data(buffer.readableBytesView)
                case .end(let keepAlive):
                    end.finish(reusable: keepAlive && end.connection.isActive)
                    return nil
                case .head: throw NIOHTTPExchangeError("a second status line inside an answer")
                }
            } catch {
                end.connection.close()
                end.finish(reusable: false)
                throw error
            }
        }
    }
}

/// Runs a body's `finished` exactly once; a body dropped before its end closes its connection and frees its place.
private final class BodyEnd: Sendable {
    let connection: Connection
    private let finished: NIOLockedValueBox<(@Sendable (Bool) -> Void)?>

    init(connection: Connection, finished: @escaping @Sendable (Bool) -> Void) {
        self.connection = connection
        self.finished = NIOLockedValueBox(finished)
    }

    func finish(reusable: Bool) {
        let action = finished.withLockedValue { action in
            defer { action = nil }
            return action
        }
        action?(reusable)
    }

    deinit {
        if finished.withLockedValue({ $0 != nil }) {
            connection.close()
            finish(reusable: false)
        }
    }
}

/// The last handler of a connection: keeps the response parts that arrived, and asks the socket for more only while
/// someone waits for them (the channel does not read on its own).
private final class ResponseReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart

    enum Part {
        case head(HTTPResponseHead)
        case body(ByteBuffer)
        /// The answer is complete; whether the server keeps the connection for another request.
        case end(keepAlive: Bool)
    }

    // Touched on the channel's event loop only.
    private var parts = CircularBuffer<Part>()
    private var waiter: EventLoopPromise<Part>?
    private var failure: (any Error)?
    private var context: ChannelHandlerContext?
    private var sawHead = false
    private var keepAlive = false

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// The next part of the answer, reading from the socket if none is waiting.
    func next(on loop: any EventLoop) async throws -> Part {
        try await loop.flatSubmit { [self] () -> EventLoopFuture<Part> in
            if !parts.isEmpty { return loop.makeSucceededFuture(parts.removeFirst()) }
            if let failure { return loop.makeFailedFuture(failure) }
            let promise = loop.makePromise(of: Part.self)
            waiter = promise
            context?.read()
            return promise.futureResult
        }.get()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part: Part
        switch unwrapInboundIn(data) {
        case .head(let head):
            sawHead = true
            keepAlive = head.isKeepAlive
            part = .head(head)
        case .body(let buffer): part = .body(buffer)
        case .end:
            sawHead = false
            part = .end(keepAlive: keepAlive)
        }
        if let waiter {
            self.waiter = nil
            waiter.succeed(part)
        } else {
            parts.append(part)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The decoder needed more bytes than one read gave: keep reading while someone waits.
        if waiter != nil { context.read() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(sawHead ? NIOHTTPExchangeError("the server closed the connection in the middle of its answer") : ConnectionClosedEarly())
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .all {
            // No bytes either way for the timeout: a stalled answer fails, an idle kept-alive connection is let go.
            fail(NIOHTTPExchangeError("no data from the server for too long"))
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func fail(_ error: any Error) {
        if failure == nil { failure = error }
        if let waiter {
            self.waiter = nil
            waiter.fail(error)
        }
    }
}

extension ConnectionPool.Key {
    /// Whether the host is an address rather than a name (TLS sends no server name for an address).
    var isIPAddress: Bool { (try? SocketAddress(ipAddress: host, port: 0)) != nil }
}

extension TLSConfiguration {
    /// What the command line's clients trust: the system's certificates, or only those of `caCertificates` (PEM).
    public static func hoardClient(caCertificates: String?) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caCertificates { configuration.trustRoots = .file(caCertificates) }
        configuration.applicationProtocols = ["http/1.1"]
        return configuration
    }
}

/// Reads while the TLS handshake goes on (the channel reads only on demand, by ``ResponseReader``, and the
/// handshake's records produce no HTTP part that would ask for more), and tells how the handshake ended.
private final class HandshakeReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    // Touched on the channel's event loop only.
    private var isDone = false
    private var done: EventLoopPromise<Void>?

    /// Succeeds once the handshake is done; fails with the reason it was not (an untrusted certificate, …).
    func finished(on loop: any EventLoop) -> EventLoopFuture<Void> {
        loop.flatSubmit { [self] in
            if isDone { return loop.makeSucceededVoidFuture() }
            if let failure { return loop.makeFailedFuture(failure) }
            let promise = done ?? loop.makePromise()
            done = promise
            return promise.futureResult
        }
    }

    private func end(_ result: Result<Void, any Error>) {
        guard !isDone else { return }
        if case .success = result { isDone = true }
        if let done {
            self.done = nil
            done.completeWith(result)
        } else if case .failure(let error) = result {
            failure = error
        }
    }

    private var failure: (any Error)?

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { context.read() }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.read()
        context.fireChannelActive()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !isDone { context.read() }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { end(.success(())) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(.failure(NIOHTTPExchangeError("the TLS handshake failed: \(error)")))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(.failure(failure ?? NIOHTTPExchangeError("the server closed the connection during the TLS handshake")))
        context.fireChannelInactive()
    }
}
