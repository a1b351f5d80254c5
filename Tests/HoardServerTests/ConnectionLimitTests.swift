import Foundation
import HTTPTypes
import HoardServer
import HummingbirdTesting
import Logging
import Testing

/// ``ConnectionGuard`` and ``FailedJoins``: slow clients are closed, connections are capped per address, wrong join
/// codes are limited per address. Each waits on the connection's end (with the socket's own 10 s receive timeout as
/// the bound), never on a clock of its own.
@Suite(.timeLimit(.minutes(2))) struct ConnectionLimitTests {
    /// Limits short enough for a test, long enough that a loaded machine still sends a whole head in time.
    static func quick(_ configuration: inout ServerConfiguration) {
        configuration.limits.headTimeout = .seconds(4)
        configuration.limits.idleTimeout = .seconds(4)
        configuration.limits.bodyRateWindow = .seconds(1)
        configuration.limits.minBodyRate = 10_000
    }

    @Test(arguments: [true, false])
    func aClientThatSendsHalfAHeadIsClosed(fastPath: Bool) async throws {
        try await Fixture.with(packs: false, { Self.quick(&$0); $0.hasBlobFastPath = fastPath }) { fixture in
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let silent = try await RawSocket.connect(port: port)
                defer { silent.close() }
                let slow = try await RawSocket.connect(port: port)
                defer { slow.close() }
                try await slow.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n".utf8))
                #expect(try await silent.isClosedByServer(), "a connection that sends nothing")
                #expect(try await slow.isClosedByServer(), "a connection that sends half a head")
                // A head that comes in time is answered, then the kept-alive connection idles out.
                let prompt = try await RawSocket.connect(port: port)
                defer { prompt.close() }
                try await prompt.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                #expect(try await prompt.receiveHead().hasPrefix("HTTP/1.1 200"))
                #expect(try await prompt.isClosedByServer(), "an idle kept-alive connection")
            }
        }
    }

    @Test func aClientThatSendsItsBodyTooSlowlyIsClosed() async throws {
        try await Fixture.with(packs: false, { Self.quick(&$0) }) { fixture in
            try await fixture.run(.live) { client in
                let socket = try await RawSocket.connect(port: try #require(client.port))
                defer { socket.close() }
                try await socket.send(Array(
                    "POST /v1/sessions/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"code\":".utf8))
                #expect(try await socket.isClosedByServer())
                // The same request with its body sent at once is read and answered.
                let body = "{\"code\":\"ZZZZ-ZZZZ\",\"name\":\"Bo\"}"
                let prompt = try await RawSocket.connect(port: try #require(client.port))
                defer { prompt.close() }
                try await prompt.send(Array(
                    "POST /v1/sessions/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
                #expect(try await prompt.receiveHead().hasPrefix("HTTP/1.1 404"))
            }
        }
    }

    @Test func connectionsPastTheCapOfOneAddressAreRefusedAndLoggedOnce() async throws {
        let logs = CapturedLogs()
        try await Fixture.with(packs: false, { $0.limits.maxConnectionsPerAddress = 3; $0.logLevel = .warning }) { fixture in
            let app = try await buildApplication(fixture.configuration, logger: Logger(label: "hoard") { _ in CapturingLogHandler(logs: logs) })
            try await app.test(.live) { client in
                let port = try #require(client.port)
                // The test client's own connection is the first of the three.
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                let held = [try await RawSocket.connect(port: port), try await RawSocket.connect(port: port)]
                for socket in held { try await socket.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8)) }
                for socket in held { #expect(try await socket.receiveHead().hasPrefix("HTTP/1.1 200")) }
                for _ in 0..<3 {
                    let refused = try await RawSocket.connect(port: port)
                    defer { refused.close() }
                    #expect(try await refused.isClosedByServer(), "a fourth connection from the same address")
                }
                held[0].close()
                // Once one closes, a new connection is served again.
                #expect(try await Fixture.eventually(seconds: 10) {
                    let socket = try await RawSocket.connect(port: port)
                    defer { socket.close() }
                    try? await socket.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
                    return (try? await socket.receiveHead().hasPrefix("HTTP/1.1 200")) == true
                })
                held[1].close()
            }
        }
        let lines = logs.entries.filter { $0.message.contains("refusing new connections") }
        #expect(lines.count == 1, "three refusals within the log interval make one line: \(lines)")
        #expect(lines.first?.level == .warning && lines.first?.message.contains("--max-connections-per-address 3") == true)
    }

    @Test func anUpgradedLiveSocketOutlivesTheHandshakeAndIdleLimits() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        // The session and its participant are made by a server with the usual limits: a loaded machine may leave
        // more than a second between two setup requests, and the short idle limit would close the test client's
        // connection under them.
        let (session, participant) = try await buildApplication(fixture.configuration).test(.router) { client in
            try await LiveChannelTests.start(client, fixture)
        }
        var configuration = fixture.configuration
        configuration.limits.webSocketHandshakeTimeout = .seconds(1)
        configuration.limits.idleTimeout = .seconds(1)
        let app = try await buildApplication(configuration)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // On a loaded machine the upgrade itself may take longer than the 1 s handshake limit, which then rightly
            // closes the connection: try again until one upgrade is answered in time; what is tested comes after it.
            var upgraded: RawWebSocket?
            for _ in 0..<10 where upgraded == nil {
                upgraded = try? await RawWebSocket.open(port: port, session: session, token: participant)
            }
            let socket = try #require(upgraded, "no upgrade was answered within the 1 s handshake limit in 10 tries")
            defer { socket.socket.close() }
            // Past both limits (nothing else to wait for: the socket must simply still be there), it closes normally.
            try await Task.sleep(for: .seconds(3))
            try await socket.socket.send(RawWebSocket.frame(0x8, [0x03, 0xE8]))
            #expect(try await socket.closeCode() == 1000)
        }
    }

    /// Behind a trusted proxy wrong codes count per client it forwarded for, and its own connections are not capped
    /// per address; from an untrusted address `X-Forwarded-For` changes nothing (a client cannot pick its address).
    @Test(arguments: [true, false])
    func behindATrustedProxyLimitsApplyPerClient(_ trusted: Bool) async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        var configuration = fixture.configuration
        configuration.failedJoinsPerMinute = 2
        configuration.limitWindowSeconds = 86_400
        configuration.limits.maxConnectionsPerAddress = 2
        if trusted { configuration.trustedProxies = try TrustedProxies(["127.0.0.1", "::1"]) }
        let app = try await buildApplication(configuration)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // The status of one join; a connection the per-address cap refuses (the server has not yet seen an
            // earlier one close) is closed without an answer and reaches no route: it is tried again.
            func join(from forwarded: String) async throws -> Int {
                let body = #"{"code":"ZZZZ-ZZZZ","name":"Bo"}"#
                for _ in 0..<100 {
                    let socket = try await RawSocket.connect(port: port)
                    defer { socket.close() }
                    try? await socket.send(Array("""
                        POST /v1/sessions/join HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: \(forwarded)\r\nContent-Type: application/json\r\n\
                        Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)
                        """.utf8))
                    let words = ((try? await socket.receiveHead()) ?? "").split(separator: " ")
                    if words.count > 1, let status = Int(words[1]) { return status }
                    try await Task.sleep(for: .milliseconds(50))
                }
                Issue.record("no join was answered in 100 tries")
                return 0
            }
            var answers: [Int] = []
            for _ in 0..<3 { answers.append(try await join(from: "198.51.100.1, 203.0.113.5")) }
            answers.append(try await join(from: "203.0.113.9"))
            // The client's prepended 198.51.100.1 is not believed: the three are one client's, the fourth another's.
            #expect(answers == (trusted ? [404, 404, 429, 404] : [404, 404, 429, 429]))
            // The proxy's connections: past the per-address cap when trusted, refused after it otherwise.
            var held: [RawSocket] = []
            defer { for socket in held { socket.close() } }
            var served = 0
            for _ in 0..<4 {
                let socket = try await RawSocket.connect(port: port)
                held.append(socket)
                try? await socket.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                if (try? await socket.receiveHead().hasPrefix("HTTP/1.1 200")) == true { served += 1 }
            }
            // Untrusted, the cap of 2 holds (connections closing from the joins above may still count).
            #expect(trusted ? served == 4 : served <= 2, "\(served) of 4 served")
        }
    }

    @Test func wrongJoinCodesFromOneAddressAreLimitedWithRetryAfter() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        var configuration = fixture.configuration
        configuration.failedJoinsPerMinute = 3
        configuration.limitWindowSeconds = 86_400  // no window turns during the test
        let app = try await buildApplication(configuration)
        try await app.test(.live) { client in
            let created = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Crypt", "map": [:] as [String: Any]])
            let code = try #require(created.json["code"] as? String)
            let right = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "Ana"])
            #expect(right.status == .ok, "a right code does not count")
            var answers: [(status: Int, retryAfter: String?)] = []
            for wrong in [true, true, true, true, false] {
                let body = ["code": wrong ? "ZZZZ-ZZZZ" : code, "name": "Bo"]
                let data = try JSONSerialization.data(withJSONObject: body)
                answers.append(try await client.execute(
                    uri: "/v1/sessions/join", method: .post, headers: [.contentType: "application/json"],
                    body: buffer(String(decoding: data, as: UTF8.self))
                ) { ($0.status.code, $0.headers[.retryAfter]) })
            }
            // Three wrong codes are answered 404, then the address gets 429, even with the right code.
            #expect(answers.map(\.status) == [404, 404, 404, 429, 429])
            #expect(answers.suffix(2).allSatisfy { $0.retryAfter.flatMap(Int.init).map { (1...86_400).contains($0) } == true })
            // Other routes are not limited.
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
        }
    }
}

extension RawSocket {
    /// Reads (and drops) whatever comes until the server closes the connection: true when it did, false when the
    /// socket's receive timeout (10 s) passed first.
    func isClosedByServer() async throws -> Bool {
        let fd = self.fd
        return try await Self.offload {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n > 0 { continue }
                return n == 0 || errno == ECONNRESET
            }
        }
    }
}

extension ConnectionLimits {
    /// Time limits no test that is not about them reaches: HummingbirdTesting's live client holds one connection for a
    /// whole test, which may wait on other things longer than a request head is given in production.
    static var forTests: ConnectionLimits {
        var limits = ConnectionLimits()
        limits.headTimeout = .seconds(300)
        limits.idleTimeout = .seconds(300)
        limits.webSocketHandshakeTimeout = .seconds(300)
        return limits
    }
}
