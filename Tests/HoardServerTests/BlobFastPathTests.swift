import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HoardStore
import HummingbirdTesting
import Testing

/// ``BlobFastPath`` answers hot blobs before the router: it must answer exactly as the router does, hand everything
/// else on, and never reorder the responses of one connection.
@Suite(.timeLimit(.minutes(2))) struct BlobFastPathTests {
    struct Answer: Equatable, CustomStringConvertible {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var description: String { "\(status) \(headers) \(body.count) bytes" }
    }

    /// Every request of `requests` over a real socket, after one GET has made the blob hot; and how many of them
    /// the fast path answered (from /metrics).
    static func answers(
        _ fixture: Fixture, fastPath: Bool, digest: Digest, _ requests: [(HTTPRequest.Method, HTTPFields)]
    ) async throws -> (answers: [Answer], fast: Int) {
        var configured = fixture
        configured.configuration.hasBlobFastPath = fastPath
        let red = fixture.red
        return try await configured.run(.live) { client in
            try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(red)) { #expect($0.status == .ok) }
            var answers: [Answer] = []
            for (method, headers) in requests {
                let answer = try await client.execute(uri: "/v1/blobs/\(digest)", method: method, headers: headers) { response in
                    var fields: [String: String] = [:]
                    for field in response.headers where field.name != .date { fields[field.name.canonicalName] = field.value }
                    return Answer(status: response.status.code, headers: fields, body: response.bytes)
                }
                answers.append(answer)
            }
            return (answers, try await fastAnswers(client, admin: fixture.admin))
        }
    }

    /// How many answers the fast path has given so far (from /metrics, which needs an admin token).
    static func fastAnswers(_ client: some TestClientProtocol, admin: String) async throws -> Int {
        let metrics = try await client.execute(uri: "/metrics", method: .get, headers: auth(admin)) { $0.text }
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("hoard_blob_fast_path_total ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    /// One response read off a raw connection.
    struct RawResponse {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    /// Sends `pieces` over one raw connection (pausing between them; before piece `n` of `awaiting`, until it holds),
    /// then a `/healthz` that closes it; returns every response but that last one, and how many the fast path
    /// answered.
    static func exchange(
        _ fixture: Fixture, hot digest: Digest, _ pieces: [[UInt8]], heads: Set<Int> = [], pause: Duration = .milliseconds(5),
        awaiting: (piece: Int, condition: @Sendable (any TestClientProtocol) async throws -> Bool)? = nil
    ) async throws -> (responses: [RawResponse], fast: Int) {
        try await fixture.run(.live) { client in
            try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red)) { #expect($0.status == .ok) }
            let before = try await fastAnswers(client, admin: fixture.admin)
            let socket = try await RawSocket.connect(port: try #require(client.port))
            defer { socket.close() }
            for (index, piece) in pieces.enumerated() {
                if let awaiting, awaiting.piece == index {
                    #expect(try await Fixture.eventually(seconds: 60) { try await awaiting.condition(client) })
                }
                try await socket.send(piece)
                try await Task.sleep(for: pause)
            }
            try await socket.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            var responses = try parse(try await socket.receiveAll(), heads: heads)
            #expect(responses.last?.status == 200 && String(decoding: responses.last?.body ?? [], as: UTF8.self).contains("ok"))
            responses.removeLast()
            return (responses, try await fastAnswers(client, admin: fixture.admin) - before)
        }
    }

    /// Splits a byte stream of HTTP/1.1 responses (bodies framed by Content-Length; none for 304 and for the
    /// responses numbered in `heads`, answers to HEAD).
    static func parse(_ bytes: [UInt8], heads: Set<Int> = []) throws -> [RawResponse] {
        var responses: [RawResponse] = []
        var rest = bytes[...]
        while !rest.isEmpty {
            let end = try #require(rest.firstRange(of: Array("\r\n\r\n".utf8)), "an unfinished response head")
            let lines = String(decoding: rest[rest.startIndex..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let status = try #require(Int(lines[0].split(separator: " ")[1]))
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
            }
            let isHead = heads.contains(responses.count) || status == 304
            let length = isHead ? 0 : Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = end.upperBound
            try #require(rest.distance(from: bodyStart, to: rest.endIndex) >= length, "a body cut short")
            responses.append(RawResponse(status: status, headers: headers, body: Array(rest[bodyStart..<bodyStart + length])))
            rest = rest[(bodyStart + length)...]
        }
        return responses
    }

    /// Sends `request` on a new connection and returns every response, read until the server closes it.
    static func responses(port: Int, to request: [UInt8]) async throws -> [RawResponse] {
        let socket = try await RawSocket.connect(port: port)
        defer { socket.close() }
        try await socket.send(request)
        return try parse(try await socket.receiveAll())
    }

    static func get(_ digest: Digest, _ headers: String = "", method: String = "GET") -> [UInt8] {
        Array("\(method) /v1/blobs/\(digest) HTTP/1.1\r\nHost: localhost\r\n\(headers)\r\n".utf8)
    }

    @Test func headsCutAcrossReadsAndPipelinedHeadsAreAnsweredInOrder() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let bearer = "Authorization: Bearer \(fixture.red)\r\n"
            // One head in pieces of 7 bytes, then three heads in one piece: lowercase names, an empty body's
            // Content-Length, a HEAD and a range.
            let cut = Self.get(digest, bearer)
            let pieces = stride(from: 0, to: cut.count, by: 7).map { Array(cut[$0..<min($0 + 7, cut.count)]) }
            let pipelined = Self.get(digest, "authorization: Bearer \(fixture.red)\r\ncontent-length: 0\r\n")
                + Self.get(digest, bearer, method: "HEAD") + Self.get(digest, bearer + "RANGE:  bytes=-10 \r\n")
            let (responses, fast) = try await Self.exchange(fixture, hot: digest, pieces + [pipelined], heads: [2])
            try #require(responses.count == 4)
            #expect(responses.map(\.status) == [200, 200, 200, 206])
            #expect(responses[0].body == bytes && responses[1].body == bytes)
            #expect(responses[2].body.isEmpty && responses[2].headers["content-length"] == String(bytes.count))
            #expect(responses[3].body == Array(bytes.suffix(10)))
            #expect(responses[3].headers["content-range"] == "bytes \(bytes.count - 10)-\(bytes.count - 1)/\(bytes.count)")
            #expect(responses.allSatisfy { $0.headers["etag"] == "\"\(digest)\"" && $0.headers["date"] != nil })
            #expect(fast == 4)
        }
    }

    @Test func uploadsAreHandedOnWholeAndTheFastPathAnswersAfterThem() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let bearer = "Authorization: Bearer \(fixture.red)\r\n"
            func put(_ upload: [UInt8], framing: String) -> [UInt8] {
                Array("PUT /v1/blobs/\(HoardServerTests.digest(of: upload)) HTTP/1.1\r\nHost: x\r\n\(bearer)\(framing)\r\n".utf8)
            }
            // A body framed by Content-Length, in two pieces; then, once it is answered, a hot blob: the fast path's.
            let upload = randomBytes(1000)
            let (responses, fast) = try await Self.exchange(
                fixture, hot: digest,
                [put(upload, framing: "Content-Length: 1000\r\n") + upload.prefix(300), Array(upload.dropFirst(300)), Self.get(digest, bearer)],
                // The GET goes once the upload is stored and readable (its answer follows at once), however loaded the
                // machine: sent before that answer, it is the decoder's, not the fast path's.
                pause: .milliseconds(200),
                awaiting: (2, { client in
                    try await client.execute(
                        uri: "/v1/blobs/\(HoardServerTests.digest(of: upload))", method: .get, headers: auth(fixture.red)
                    ) { $0.status == .ok }
                }))
            #expect(responses.map(\.status) == [201, 200])
            #expect(responses.last?.body == bytes)
            #expect(fast == 1)
            // A chunked body: the rest of the connection is the decoder's.
            let chunked = randomBytes(100)
            let body = Array("64\r\n".utf8) + chunked + Array("\r\n0\r\n\r\n".utf8)
            let (afterChunks, chunkedFast) = try await Self.exchange(
                fixture, hot: digest, [put(chunked, framing: "Transfer-Encoding: chunked\r\n") + body + Self.get(digest, bearer)])
            #expect(afterChunks.map(\.status) == [201, 200])
            #expect(afterChunks.last?.body == bytes)
            #expect(chunkedFast == 0)
        }
    }

    @Test func headsTheFastPathDoesNotReadExactlyGoToTheRouter() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let bearer = "Authorization: Bearer \(fixture.red)\r\n"
            // A repeated header it keeps: answered by the router (which combines the values), not by guesswork.
            let (repeated, repeatedFast) = try await Self.exchange(fixture, hot: digest, [Self.get(digest, bearer + bearer)])
            #expect(repeated.count == 1 && repeatedFast == 0)
            // A query and an escape: the router's.
            let query = Array("GET /v1/blobs/\(digest)?x=1 HTTP/1.1\r\nHost: x\r\n\(bearer)\r\n".utf8)
            let (queried, queriedFast) = try await Self.exchange(fixture, hot: digest, [query])
            #expect(queried.map(\.status) == [200] && queried.first?.body == bytes && queriedFast == 0)
            // Lines ending in a bare LF: handed to the decoder, which refuses them: 400, connection closed (see
            // malformedRequestsAreAnswered400AndClosed); the server keeps serving.
            let bare = Array("GET /v1/blobs/\(digest) HTTP/1.1\nHost: x\n\(bearer.dropLast(2))\n\n".utf8)
            try await fixture.run(.live) { client in
                let socket = try await RawSocket.connect(port: try #require(client.port))
                try await socket.send(bare)
                #expect(try Self.parse(try await socket.receiveAll()).map(\.status) == [400])
                socket.close()
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red)) { #expect($0.bytes == bytes) }
                #expect(try await Self.fastAnswers(client, admin: fixture.admin) == 0)
            }
        }
    }

    /// What NIO's decoder cannot read gets a 400 and a closed connection, after the answers to the requests before
    /// it — with and without the fast path. (Before, the WebSocket upgrade handler swallowed the decoder's error and
    /// the client waited for an answer that never came.)
    @Test(arguments: [true, false])
    func malformedRequestsAreAnswered400AndClosed(fastPath: Bool) async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            var configured = fixture
            configured.configuration.hasBlobFastPath = fastPath
            let get = Array("GET /v1/blobs/\(digest) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(fixture.red)\r\n\r\n".utf8)
            let cases: [(bytes: [UInt8], statuses: [Int])] = [
                (Array("GARBAGE\r\n\r\n".utf8), [501]),  // read as a method the decoder does not know
                (Array("GET /healthz HTTP/1.1\nHost: x\n\n".utf8), [400]),
                (Array("GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n".utf8), [400]),
                (get + get + Array("GET / HTTP/9.9\r\n\r\n".utf8), [200, 200, 400]),
            ]
            try await configured.run(.live) { client in
                for (request, statuses) in cases {
                    let responses = try await Self.responses(port: try #require(client.port), to: request)
                    #expect(responses.map(\.status) == statuses, "\(String(decoding: request.prefix(40), as: UTF8.self))")
                    #expect(responses.last?.headers["connection"] == "close")
                    #expect(responses.dropLast().allSatisfy { $0.body == bytes })
                }
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func aClientThatSendsManyRequestsBeforeReadingGetsEveryAnswer() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let count = 300
            let many = (0..<count).flatMap { _ in Self.get(digest, "Authorization: Bearer \(fixture.red)\r\n") }
            let (responses, fast) = try await Self.exchange(fixture, hot: digest, [many])
            #expect(responses.count == count)
            #expect(responses.allSatisfy { $0.status == 200 && $0.body == bytes })
            #expect(fast == count)
        }
    }

    @Test func hotBlobsGetTheSameAnswersWithAndWithoutTheFastPath() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let requests: [(HTTPRequest.Method, HTTPFields)] = [
                (.get, auth(fixture.red)),
                (.head, auth(fixture.red)),
                (.get, auth(fixture.red, [.range: "bytes=100-199"])),
                (.get, auth(fixture.red, [.range: "bytes=-10"])),
                (.get, auth(fixture.red, [.range: "bytes=\(bytes.count)-"])),
                (.get, auth(fixture.red, [.ifNoneMatch: "\"\(digest)\""])),
                (.get, auth(fixture.red, [.range: "bytes=0-9", .ifRange: "\"sha256:other\""])),
                (.get, auth(fixture.blue)),
                (.get, auth("not-a-token")),
                (.get, [:]),
            ]
            let fast = try await Self.answers(fixture, fastPath: true, digest: digest, requests)
            let routed = try await Self.answers(fixture, fastPath: false, digest: digest, requests)
            for (index, pair) in zip(fast.answers, routed.answers).enumerated() {
                #expect(pair.0 == pair.1, "request \(index): fast path \(pair.0) vs router \(pair.1)")
            }
            #expect(fast.answers.map(\.status) == [200, 200, 206, 206, 416, 304, 200, 404, 401, 404])
            #expect(fast.answers[0].body == bytes)
            #expect(fast.fast == 6, "the warming GET goes to disk; the six readable answers come from the fast path")
            #expect(routed.fast == 0)
        }
    }

    @Test func pipelinedRequestsKeepTheirOrderAcrossBothPaths() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            try await fixture.run(.live) { client in
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red)) { #expect($0.status == .ok) }
                let socket = try await RawSocket.connect(port: try #require(client.port))
                defer { socket.close() }
                func request(_ path: String, _ extra: String = "") -> String {
                    "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(fixture.red)\r\n\(extra)\r\n"
                }
                // The first goes to the router; the hot blob behind it must wait for it rather than overtake it.
                try await socket.send(Array((request("/v1/packs") + request("/v1/blobs/\(digest)") + request("/healthz", "Connection: close\r\n")).utf8))
                let text = String(decoding: try await socket.receiveAll(), as: UTF8.self)
                let packs = try #require(text.range(of: Fixture.dungeon)).lowerBound
                let blob = try #require(text.range(of: "ETag: \"\(digest)\"", options: .caseInsensitive)).lowerBound
                let health = try #require(text.range(of: #""status":"ok""#)).lowerBound
                #expect(packs < blob && blob < health, "responses out of order")
                #expect(text.components(separatedBy: "HTTP/1.1 200").count == 4)
                #expect(bytes.count > 0)
            }
        }
    }

    @Test func largeHotBlobsAreSentFromTheirVerifiedFileUntilItChanges() async throws {
        try await Fixture.with { fixture in
            let bytes = randomBytes(600 << 10)
            let name = digest(of: bytes)
            let path = try #require(fixture.hoard.store as? FileBlobStore).path(of: name)
            try await fixture.run(.live) { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) {
                    #expect($0.status == .created)
                }
                // The first read verifies the file and keeps it open; the next ones are the fast path's, from it.
                for _ in 0..<3 {
                    try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red)) { #expect($0.bytes == bytes) }
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red, [.range: "bytes=300000-500000"])) {
                    #expect($0.status == .partialContent)
                    #expect($0.bytes == Array(bytes[300_000...500_000]))
                }
                let fastSoFar = try await Self.fastAnswers(client, admin: fixture.admin)
                #expect(fastSoFar == 3)
                // Someone writes into the stored file: it is no longer sent; the verified bytes in memory are.
                chmod(path, 0o644)
                let handle = try #require(FileHandle(forWritingAtPath: path))
                try handle.seek(toOffset: 1000)
                try handle.write(contentsOf: Data(repeating: 0, count: 1000))
                try handle.close()
                try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red)) { #expect($0.bytes == bytes) }
                #expect(try await Self.fastAnswers(client, admin: fixture.admin) == 4)
            }
        }
    }
}
