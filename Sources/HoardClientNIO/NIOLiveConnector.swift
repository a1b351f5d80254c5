import Foundation
import HoardClient
import HummingbirdWSClient
import Logging
import NIOSSL

/// A live-channel transport over SwiftNIO's WebSocket client, for systems whose URLSession has no WebSocket
/// support (Linux with libcurl before 8.11): `ws://`, and `wss://` trusting what ``NIOHTTPExchange``'s HTTPS trusts.
/// Pings are answered by the client; a connection that ends without ``LiveConnection/close()`` ends `receive()`,
/// and the live channel reconnects.
public struct NIOLiveConnector: LiveConnector {
    /// The PEM file of the only certificates trusted (`--cacert`); nil for the system's.
    public var caCertificates: String?

    /// A connector trusting the certificates in `caCertificates` (a PEM file), or the system's.
    public init(caCertificates: String? = nil) {
        self.caCertificates = caCertificates
    }

    public func connect(to url: URL, token: String?) async throws -> any LiveConnection {
        let connection = NIOLiveConnection()
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 22)
        if let token { configuration.additionalHeaders[.authorization] = "Bearer \(token)" }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.scheme = url.scheme == "https" ? "wss" : "ws"
        let address = components?.string ?? url.absoluteString
        let tls = TLSConfiguration.hoardClient(caCertificates: caCertificates)
        connection.task = Task {
            do {
                _ = try await WebSocketClient.connect(
                    url: address, configuration: configuration, tlsConfiguration: tls, logger: Logger(label: "hoard.live")
                ) {
                    inbound, outbound, _ in
                    await connection.attach(outbound)
                    for try await message in inbound.messages(maxSize: 1 << 22) {
                        if case .text(let text) = message { connection.continuation.yield(text) }
                    }
                }
                connection.continuation.finish()
            } catch {
                connection.continuation.finish(throwing: error)
            }
        }
        return connection
    }
}

/// One NIO WebSocket seen as a ``LiveConnection``: received texts flow through a stream; sends wait for the handshake.
final class NIOLiveConnection: LiveConnection, @unchecked Sendable {
    let continuation: AsyncThrowingStream<String, any Error>.Continuation
    /// `receive()` is called by one task at a time, so one iterator serves them all.
    private var iterator: AsyncThrowingStream<String, any Error>.AsyncIterator
    private let writer = Writer()
    var task: Task<Void, Never>?

    init() {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: String.self)
        self.continuation = continuation
        iterator = stream.makeAsyncIterator()
    }

    actor Writer {
        var outbound: WebSocketOutboundWriter?
        var waiting: [CheckedContinuation<WebSocketOutboundWriter, Never>] = []

        func attach(_ outbound: WebSocketOutboundWriter) {
            self.outbound = outbound
            for waiter in waiting { waiter.resume(returning: outbound) }
            waiting = []
        }

        func get() async -> WebSocketOutboundWriter {
            if let outbound { return outbound }
            return await withCheckedContinuation { waiting.append($0) }
        }
    }

    func attach(_ outbound: WebSocketOutboundWriter) async { await writer.attach(outbound) }

    func receive() async throws -> String? {
        try await iterator.next()
    }

    func send(_ text: String) async throws {
        try await writer.get().write(.text(text))
    }

    func close() {
        task?.cancel()
        continuation.finish()
    }
}
