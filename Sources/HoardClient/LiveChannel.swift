import Foundation
import HoardCore

/// How a live channel connects and reconnects.
public struct LiveOptions: Sendable {
    /// The wait before the first reconnection; it doubles after each failure in a row.
    public var firstRetryDelay: Duration = .milliseconds(250)
    /// The longest wait between reconnections.
    public var maxRetryDelay: Duration = .seconds(10)
    /// Failed connections in a row after which the channel gives up and throws; nil retries forever.
    public var maxConsecutiveFailures: Int?
    /// The WebSocket transport; nil uses `URLSessionWebSocketTask` (``URLSessionLiveConnector``).
    public var connector: (any LiveConnector)?
    /// A member's display name at the table, sent at each connection: the host's is what the players see them by
    /// (without it, "Host"; a token's label is never shown). A participant is the name they joined with; this is ignored.
    public var displayName: String?

    /// The defaults: retry forever, from ¼ s up to 10 s apart, over URLSession.
    public init() {}
}

/// Opens WebSocket connections for a live channel: the seam that lets an app (or a test) bring another transport.
public protocol LiveConnector: Sendable {
    /// Opens a WebSocket to `url`, sending `Authorization: Bearer <token>` when a token is given.
    ///
    /// May return before the handshake completes; a refused handshake then surfaces from the first `receive()`.
    /// A refusal by HTTP status should throw a ``HoardClientError`` with ``HoardClientError/status`` set.
    func connect(to url: URL, token: String?) async throws -> any LiveConnection
}

/// One open WebSocket carrying JSON text messages.
public protocol LiveConnection: Sendable {
    /// The next text message; nil when the server closed the connection. Throws when it failed.
    func receive() async throws -> String?
    /// Sends a text message.
    func send(_ text: String) async throws
    /// Closes the connection; a pending `receive()` then returns or throws.
    func close()
}

/// A session's live channel: ordered events, automatic reconnection from the last sequence number, and
/// (given a cache) prefetching of the art that new events reference.
///
/// Iterate ``events``; the channel runs until the iteration stops, ``close()`` is called, or it gives up
/// (``LiveOptions/maxConsecutiveFailures``, or a refusal that retrying cannot fix: unknown session, bad token,
/// no WebSocket support on this platform), which the stream throws.
public final class LiveChannel: Sendable {
    struct State {
        var connection: (any LiveConnection)?
        var lastSeq: Int64?
        var driver: Task<Void, Never>?
        var prefetcher: Task<Void, Never>?
        var isClosed = false
        /// Ops sent and not yet answered, oldest first: sent again after a reconnection (the server applies each
        /// `opId` once), dropped when their `op` event, `ack` or `error` arrives.
        var pending: [(opId: String, text: String)] = []
    }

    /// The events, in order.
    public let events: AsyncThrowingStream<LiveEvent, any Error>
    private let state: Locked<State>

    init(client: HoardClient, sessionId: String, since: Int64?, prefetchInto cache: BlobCacheDirectory?, options: LiveOptions) {
        let state = Locked(State(lastSeq: since))
        self.state = state
        let (events, continuation) = AsyncThrowingStream.makeStream(of: LiveEvent.self, throwing: (any Error).self)
        self.events = events
        let (jobs, jobQueue) = AsyncStream.makeStream(of: PrefetchJob.self)
        let prefetcher: Task<Void, Never>? = cache.map { cache in
            Task<Void, Never> {
                for await job in jobs {
                    do {
                        let manifest: SessionManifest
                        switch job {
                        case .manifest(let given): manifest = given
                        case .wholeSession: manifest = try await client.session(id: sessionId).manifest
                        }
                        continuation.yield(.prefetched(try await client.sync(manifest, into: cache)))
                    } catch let error as HoardClientError {
                        continuation.yield(.prefetchFailed(error))
                    } catch {
                        if Task.isCancelled { return }
                        continuation.yield(.prefetchFailed(HoardClientError(.network, "prefetching failed", cause: SendableError(error))))
                    }
                }
            }
        }
        var prefetch: (@Sendable (PrefetchJob) -> Void)?
        if cache != nil {
            prefetch = { @Sendable job in _ = jobQueue.yield(job) }
        }
        let prefetchJob = prefetch
        let driver = Task<Void, Never> {
            await Self.drive(
                client: client, sessionId: sessionId, state: state, options: options, continuation: continuation, prefetch: prefetchJob)
            jobQueue.finish()
        }
        state.withLock {
            $0.driver = driver
            $0.prefetcher = prefetcher
        }
        continuation.onTermination = { _ in
            let (driver, prefetcher, connection) = state.withLock { state in
                state.isClosed = true
                return (state.driver, state.prefetcher, state.connection)
            }
            driver?.cancel()
            prefetcher?.cancel()
            jobQueue.finish()
            connection?.close()
        }
    }

    /// The sequence number of the last event received: where a reconnection continues.
    public var lastSeq: Int64? { state.current.lastSeq }

    /// Whether a connection is open right now.
    public var isConnected: Bool { state.current.connection != nil }

    /// Sends a change to the table and returns its client op id. While the channel is reconnecting the op waits, and
    /// it is sent again after every reconnection until the server answers it: its `op` event (as this client's view
    /// shows it), or an `error` event naming the op id (`FORBIDDEN`, `UNKNOWN_ENTITY`, …). The server applies an op id
    /// once, however often it arrives.
    @discardableResult
    public func send(_ op: TableOp) async throws -> String {
        try await send(op: op.json)
    }

    /// Sends an op in its wire form (``send(_:)`` for typed ones); an app's own payload goes as
    /// `TableOp.custom(payload)`.
    @discardableResult
    public func send(op: JSONValue) async throws -> String {
        let opId = UUID().uuidString.lowercased()
        let message = JSONValue.object(["type": .string("op"), "opId": .string(opId), "op": op])
        let text = String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
        let connection = state.withLock { state in
            state.pending.append((opId, text))
            return state.connection
        }
        // Sent now when connected; otherwise, and when this send fails, the reconnection sends it.
        try? await connection?.send(text)
        return opId
    }

    /// Client op ids of ops sent and not answered yet.
    public var pendingOps: [String] { state.current.pending.map(\.opId) }

    /// Asks to take hold of an entity; the answer is a `grab` event (or an `error` event `GRAB_DENIED`).
    public func grab(_ entity: String) async throws {
        try await send(.object(["type": .string("grab"), "entity": .string(entity)]))
    }

    /// Lets go of an entity.
    public func release(_ entity: String) async throws {
        try await send(.object(["type": .string("release"), "entity": .string(entity)]))
    }

    /// Stops the channel: closes the connection and finishes ``events``.
    public func close() {
        let (driver, prefetcher, connection) = state.withLock { state in
            state.isClosed = true
            return (state.driver, state.prefetcher, state.connection)
        }
        driver?.cancel()
        prefetcher?.cancel()
        connection?.close()
    }

    private func send(_ message: JSONValue) async throws {
        guard let connection = state.current.connection else {
            throw HoardClientError(.notConnected, "the live channel is reconnecting; send again once it is connected")
        }
        let text = String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
        try await connection.send(text)
    }

    enum PrefetchJob: Sendable {
        case manifest(SessionManifest)
        case wholeSession
    }

    /// Connects, forwards events, and reconnects from the last sequence number until cancelled or refused.
    private static func drive(
        client: HoardClient, sessionId: String, state: Locked<State>, options: LiveOptions,
        continuation: AsyncThrowingStream<LiveEvent, any Error>.Continuation, prefetch: (@Sendable (PrefetchJob) -> Void)?
    ) async {
        let connector = options.connector ?? URLSessionLiveConnector()
        var failures = 0
        while !Task.isCancelled {
            let since = state.current.lastSeq
            var connection: (any LiveConnection)?
            do {
                let url = try client.liveURL(sessionId: sessionId, since: since, displayName: options.displayName)
                let opened = try await connector.connect(to: url, token: client.token)
                connection = opened
                let closed = state.withLock { state in
                    if !state.isClosed { state.connection = opened }
                    return state.isClosed
                }
                if closed { opened.close(); break }
                continuation.yield(.connected(since: since))
                for waiting in state.current.pending { try await opened.send(waiting.text) }
                while let text = try await opened.receive() {
                    failures = 0
                    guard let (event, opId) = try? LiveEvent.decodeWithOpId(text) else { continue }
                    state.withLock { state in
                        if let seq = event.seq { state.lastSeq = seq }
                        if let opId { state.pending.removeAll { $0.opId == opId } }
                    }
                    if case .unknown("ack", _, _) = event { continue }
                    continuation.yield(event)
                    switch event {
                    case .assets(_, let manifest), .map(_, _, _, let manifest): prefetch?(.manifest(manifest))
                    case .snapshot: prefetch?(.wholeSession)
                    default: break
                    }
                }
                throw HoardClientError(.network, "the server closed the live channel")
            } catch {
                connection?.close()
                state.withLock { $0.connection = nil }
                if Task.isCancelled || state.current.isClosed { break }
                let failure = error as? HoardClientError
                    ?? HoardClientError(.network, "the live channel failed", cause: SendableError(error))
                let isPermanent = failure.code == .webSocketUnsupported || failure.code == .invalidArgument
                    || [401, 403, 404].contains(failure.status ?? 0)
                failures += 1
                if isPermanent || options.maxConsecutiveFailures.map({ failures > $0 }) == true {
                    continuation.finish(throwing: failure)
                    return
                }
                var delay = options.firstRetryDelay * (1 << min(failures - 1, 16))
                if delay > options.maxRetryDelay { delay = options.maxRetryDelay }
                continuation.yield(.disconnected(failure, retryIn: delay))
                try? await Task.sleep(for: delay)
            }
        }
        continuation.finish()
    }
}

extension HoardClient {
    /// The session's live channel, continuing after `since` (the `seq` of the session as last fetched; nil for a
    /// snapshot first). Given a cache, art that `assets`, `map` and `snapshot` events reference is fetched into it
    /// in the background, reported by `prefetched` events.
    public func liveChannel(
        sessionId: String, since: Int64?, prefetchInto cache: BlobCacheDirectory? = nil, options: LiveOptions = LiveOptions()
    ) -> LiveChannel {
        LiveChannel(client: self, sessionId: sessionId, since: since, prefetchInto: cache, options: options)
    }

    /// The session's live events, reconnecting by itself (see ``liveChannel(sessionId:since:prefetchInto:options:)``,
    /// which can also send).
    public func live(
        sessionId: String, since: Int64?, prefetchInto cache: BlobCacheDirectory? = nil, options: LiveOptions = LiveOptions()
    ) -> AsyncThrowingStream<LiveEvent, any Error> {
        liveChannel(sessionId: sessionId, since: since, prefetchInto: cache, options: options).events
    }

    /// `ws(s)://…/v1/sessions/{id}/live?since=N&name=NAME`.
    func liveURL(sessionId: String, since: Int64?, displayName: String? = nil) throws -> URL {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), ["http", "https", "ws", "wss"].contains(scheme)
        else { throw HoardClientError(.invalidArgument, "the server URL \(baseURL) is not http(s)") }
        components.scheme = scheme == "https" || scheme == "wss" ? "wss" : "ws"
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        components.percentEncodedPath = path + "/v1/sessions/\(Self.pathSegment(sessionId))/live"
        let query = [since.map { "since=\($0)" }, displayName.map { "name=\(Self.queryValue($0))" }].compactMap { $0 }
        components.percentEncodedQuery = query.isEmpty ? nil : query.joined(separator: "&")
        guard let url = components.url else { throw HoardClientError(.invalidArgument, "cannot build the live URL from \(baseURL)") }
        return url
    }
}
