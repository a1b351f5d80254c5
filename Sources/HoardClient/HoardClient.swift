import Foundation
import HoardCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an app uses to talk to a Hoard server: join a game session, sync its art into a local cache, follow its
/// live channel, and (for a host) create sessions, uploading the custom art the server lacks.
///
/// One client keeps one connection pool (a `URLSession` unless the configuration brings another ``HTTPExchange``),
/// so its requests share keep-alive connections; clients made with
/// ``authenticated(with:)`` (and the one a ``JoinedSession`` carries) share them too. A client is `Sendable`:
/// use it from any task.
public final class HoardClient: Sendable {
    /// Tuning knobs; the defaults suit a tablet on Wi-Fi.
    public struct Configuration: Sendable {
        /// Blobs fetched at once (and connections per host).
        public var maxParallelFetches = 8
        /// Blobs smaller than this travel in batch requests rather than one GET each.
        public var batchThreshold: Int64 = 256 << 10
        /// Most digests in one batch request (the server allows 1000).
        public var batchMaxCount = 1000
        /// Most bytes in one batch request, so that several batches can run side by side.
        public var batchMaxBytes: Int64 = 4 << 20
        /// Tries per blob or batch when the network fails (a partial download resumes where it stopped).
        public var attempts = 3
        /// Seconds a request may wait for data before it fails.
        public var timeout: TimeInterval = 60
        /// The resolution a sync fetches every asset at, in device pixels a grid tile; nil for the @1x variants (the
        /// art as drawn). Sharper pictures come on demand: ``HoardClient/variant(for:pixelsPerTile:in:)``.
        public var pixelsPerTile: Double?
        /// Called with every HTTP request just before it is sent (for logging and tests).
        public var onRequest: (@Sendable (URLRequest) -> Void)?
        /// How requests go over the wire; nil for a ``URLSessionExchange`` with ``maxParallelFetches`` connections.
        public var exchange: (any HTTPExchange)?

        /// The defaults.
        public init() {}
    }

    /// The server's base URL, e.g. `http://nas.local:8080`.
    public let baseURL: URL
    /// The bearer token sent with every request (a member's or a participant's), if any.
    public let token: String?
    /// The tuning in force.
    public let configuration: Configuration
    let transport: HTTPTransport

    /// A client for the server at `baseURL`, acting with `token` (nil for a player who has not joined yet).
    public convenience init(baseURL: URL, token: String? = nil, configuration: Configuration = Configuration()) {
        let exchange = configuration.exchange
            ?? URLSessionExchange(maxConnections: max(1, configuration.maxParallelFetches), timeout: configuration.timeout)
        let transport = HTTPTransport(exchange: exchange, observer: configuration.onRequest)
        self.init(baseURL: baseURL, token: token, configuration: configuration, transport: transport)
    }

    init(baseURL: URL, token: String?, configuration: Configuration, transport: HTTPTransport) {
        self.baseURL = baseURL
        self.token = token
        self.configuration = configuration
        self.transport = transport
    }

    /// A client on the same connections that sends `token` instead.
    public func authenticated(with token: String?) -> HoardClient {
        HoardClient(baseURL: baseURL, token: token, configuration: configuration, transport: transport)
    }

    /// HTTP requests sent so far by this client and every client sharing its connections.
    public var requestCount: Int { transport.requestCount }

    // MARK: Sessions

    /// Joins the session with this code under `name`, then fetches it (two requests).
    ///
    /// With a `cache` that a finished ``JoinedSession/sync(into:progress:)`` of the same map filled before, the
    /// server leaves the map and its manifest out of its answer: the session's ``SessionState/map`` and
    /// ``SessionState/manifest`` are then read from the cache on first use, and the sync checks the cache without
    /// reading them (a warm join).
    ///
    /// Throws with ``HoardClientError/status`` 404 and ``HoardClientError/serverCode`` `UNKNOWN_CODE` when no
    /// session has that code.
    ///
    /// `playerKey` is the ``JoinedSession/playerKey`` an earlier join answered: the player's dice statistics continue
    /// across the group's sessions (without one, the server makes a new key).
    public func join(code: String, name: String, playerKey: String? = nil, cache: BlobCacheDirectory? = nil) async throws -> JoinedSession {
        struct Joined: Decodable {
            var sessionId: String
            var participantId: String
            var participantToken: String
            var mapDigest: Digest?
            var playerKey: String?
        }
        var body = ["code": code, "name": name]
        body["playerKey"] = playerKey
        let joined: Joined = try await call("POST", "/v1/sessions/join", json: body, retrying: true)
        let participant = authenticated(with: joined.participantToken)
        let known = joined.mapDigest.flatMap { cache?.snapshot(of: $0) }
        let (session, received) = try await participant.fetchSession(id: joined.sessionId, known: known)
        return JoinedSession(
            sessionId: joined.sessionId, participantId: joined.participantId, participantToken: joined.participantToken,
            playerKey: joined.playerKey, session: session, client: participant, snapshot: received == nil ? known : nil, received: received)
    }

    /// Takes a kept seat again (``KeptSeats``): the session as its participant sees it now, with its token; nil when
    /// the server no longer knows the seat (the game ended, or the host removed the player: 401 or 404), and a new
    /// join is then in order. `seat.server` is the server asked, whatever this client's.
    public func rejoin(_ seat: KeptSeats.Seat, cache: BlobCacheDirectory? = nil) async throws -> JoinedSession? {
        let participant = HoardClient(baseURL: seat.server, token: seat.participantToken, configuration: configuration, transport: transport)
        do {
            let (session, received) = try await participant.fetchSession(id: seat.sessionId, known: nil)
            return JoinedSession(
                sessionId: seat.sessionId, participantId: seat.participantId, participantToken: seat.participantToken, session: session,
                client: participant, snapshot: nil, received: received)
        } catch let error as HoardClientError where error.status == 401 || error.status == 404 {
            return nil
        }
    }

    /// The session with this id: map, manifest and sequence number (one request).
    public func session(id: String) async throws -> SessionState {
        try await fetchSession(id: id, known: nil).state
    }

    /// The session; when `known` is the snapshot of its current map, the server leaves the map and manifest out and
    /// they come from the snapshot. `received` holds the map's and manifest's JSON when they came from the server.
    func fetchSession(id: String, known: SessionSnapshot?) async throws -> (state: SessionState, received: (map: Data, manifest: Data)?) {
        let path = "/v1/sessions/\(Self.pathSegment(id))"
        let (response, data) = try await exchange("GET", path + (known.map { "?known=\($0.mapDigest)" } ?? ""))
        return try Self.reading("GET", path, response) {
            let (value, members) = try JSONValue.parsingMembers(data)
            guard let mapRange = members["map"], let manifestRange = members["manifest"] else {
                guard let known else { throw HoardClientError(.badResponse, "the session came without its map") }
                let state = try SessionState(fieldsOf: value, map: { (try? JSONValue(parsing: known.map)) ?? .null }, manifest: {
                    (try? JSONValueDecoder.decode(SessionManifest.self, from: known.manifest)) ?? SessionManifest()
                })
                guard state.mapDigest == known.mapDigest else { throw HoardClientError(.badResponse, "the session came without its new map") }
                return (state, nil)
            }
            let base = data.startIndex
            let received = (map: data[(base + mapRange.lowerBound)..<(base + mapRange.upperBound)],
                            manifest: data[(base + manifestRange.lowerBound)..<(base + manifestRange.upperBound)])
            return (try JSONValueDecoder.decode(SessionState.self, from: value), received)
        }
    }

    /// Creates a game session from a map (needs a member's token). When the server lacks blobs the map
    /// references, uploads each one from `localBlobs` and retries, like a git push.
    ///
    /// Throws ``HoardClientError/Code-swift.struct/missingBlobs`` (with their digests) when the server lacks
    /// blobs that `localBlobs` does not have either; nothing is uploaded then.
    public func createSession(
        name: String, visibility: SessionVisibility = .group, map: JSONValue, localBlobs: (any LocalBlobSource)? = nil
    ) async throws -> CreatedSession {
        let body: JSONValue = .object(["name": .string(name), "visibility": .string(visibility.rawValue), "map": map])
        var uploaded: [Digest] = []
        var attempted = Set<Digest>()
        while true {
            do {
                var created: CreatedSession = try await call("POST", "/v1/sessions", json: body)
                created.uploaded = uploaded
                return created
            } catch let error as HoardClientError where error.serverCode == "MISSING_BLOBS" && !error.digests.isEmpty {
                let missing = error.digests
                let retried = missing.filter { attempted.contains($0) }
                guard retried.isEmpty else {
                    throw HoardClientError(.missingBlobs, "the server still lacks \(retried.count) blob(s) after they were uploaded",
                                           status: error.status, serverCode: error.serverCode, digests: retried, cause: error)
                }
                let files = missing.map { digest in (digest, localBlobs?.file(for: digest)) }
                let absent = files.filter { $0.1 == nil }.map(\.0)
                guard absent.isEmpty else {
                    throw HoardClientError(.missingBlobs, "the map references \(absent.count) blob(s) that neither the server nor the local "
                        + "blobs have; add them to the blobs folder or fix the map", status: error.status, serverCode: error.serverCode,
                        digests: absent, cause: error)
                }
                for (digest, file) in files {
                    guard let file else { continue }
                    try await upload(fileAt: file, as: digest)
                    attempted.insert(digest)
                    uploaded.append(digest)
                }
            }
        }
    }

    /// Uploads a file as the blob `digest` (needs a member's token), after checking that it hashes to it.
    public func upload(fileAt file: URL, as digest: Digest) async throws {
        let actual: Digest
        do {
            actual = try BlobHasher.digest(ofFileAt: file).digest
        } catch {
            throw HoardClientError(.io, "cannot read \(file.path) to upload it", digests: [digest], cause: SendableError(error))
        }
        guard actual == digest else {
            throw HoardClientError(.digestMismatch, "\(file.path) hashes to \(actual), not \(digest); it was not uploaded", digests: [digest])
        }
        var request = request("PUT", "/v1/blobs/\(digest)")
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let (response, data) = try await transport.send(request, uploadFile: file)
        try Self.check(response, data, request)
    }

    /// Uploads bytes as a blob (needs a member's token) and returns their digest.
    @discardableResult
    public func upload(_ bytes: Data) async throws -> Digest {
        let digest = BlobHasher.digest(of: bytes)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hoard-upload-\(UUID().uuidString.lowercased())")
        do {
            try bytes.write(to: file)
        } catch {
            throw HoardClientError(.io, "cannot write a temporary file for the upload", cause: SendableError(error))
        }
        defer { try? FileManager.default.removeItem(at: file) }
        try await upload(fileAt: file, as: digest)
        return digest
    }

    // MARK: Requests

    /// A request to `path` (which starts with `/`) with the token.
    func request(_ method: String, _ path: String, query: String? = nil) -> URLRequest {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path
        if let query { text += "?" + query }
        // The path is built from digests, ids and fixed words only; a nil URL would mean a broken base URL.
        var request = URLRequest(url: URL(string: text) ?? baseURL)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        return request
    }

    /// Sends a JSON request and decodes a JSON answer; any non-2xx answer becomes a ``HoardClientError``.
    ///
    /// A request `retrying` (every GET, and the join) is sent again when the network fails (no connection, a
    /// timeout), up to ``Configuration/attempts`` tries, half a second apart and then doubling: a server swamped by a
    /// crowd of joining players, or a Wi-Fi that drops for a moment, costs a wait rather than the join. A join
    /// whose answer was lost may leave an unused participant behind; nothing else changes twice.
    func call<T: Decodable>(
        _ method: String, _ path: String, json: (any Encodable & Sendable)? = nil, retrying: Bool? = nil
    ) async throws -> T {
        let (response, data) = try await exchange(method, path, json: json, retrying: retrying)
        return try Self.reading(method, path, response) { try JSONValueDecoder.decode(T.self, from: data) }
    }

    /// Sends a request (retrying network failures: GETs always, others when `retrying`) and gives the 2xx answer's
    /// bytes; throws the server's error for any other status.
    func exchange(
        _ method: String, _ path: String, json: (any Encodable & Sendable)? = nil, retrying: Bool? = nil
    ) async throws -> (HTTPURLResponse, Data) {
        var request = request(method, path)
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            do {
                request.httpBody = try JSONEncoder().encode(json)
            } catch {
                throw HoardClientError(.invalidArgument, "cannot encode the request body", cause: SendableError(error))
            }
        }
        let tries = retrying ?? (method == "GET") ? max(1, configuration.attempts) : 1
        var attempt = 1
        var pause = 0.5
        let (response, data) = try await {
            while true {
                do {
                    return try await transport.send(request)
                } catch let error as HoardClientError where error.code == .network && attempt < tries {
                    attempt += 1
                    try await Task.sleep(for: .seconds(pause))
                    pause *= 2
                }
            }
        }()
        try Self.check(response, data, request)
        return (response, data)
    }

    /// Runs `read` on an answer's bytes; a failure means the server speaks another version of the API.
    static func reading<T>(_ method: String, _ path: String, _ response: HTTPURLResponse, _ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch {
            throw HoardClientError(.badResponse, "cannot read the answer to \(method) \(path): is this a Hoard server of a matching version?",
                                   status: response.statusCode, cause: SendableError(error))
        }
    }

    /// Throws the server's error when the status is not 2xx.
    static func check(_ response: HTTPURLResponse, _ data: Data, _ request: URLRequest) throws {
        guard !(200..<300).contains(response.statusCode) else { return }
        throw serverError(response.statusCode, data, request)
    }

    /// The ``HoardClientError`` for an error answer, from its `{"error":{"code","message","missing"}}` body.
    static func serverError(_ status: Int, _ data: Data, _ request: URLRequest) -> HoardClientError {
        struct Body: Decodable {
            struct Inner: Decodable {
                var code: String
                var message: String
                var missing: [String]?
            }
            var error: Inner
        }
        let what = "\(request.httpMethod ?? "GET") \(request.url?.path ?? "")"
        guard let body = try? JSONDecoder().decode(Body.self, from: data) else {
            return HoardClientError(.server, "\(what) failed", status: status)
        }
        return HoardClientError(
            .server, "\(what): \(body.error.message)", status: status, serverCode: body.error.code,
            digests: (body.error.missing ?? []).compactMap(Digest.init))
    }

    /// Percent-encodes one path segment.
    static func pathSegment(_ text: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
