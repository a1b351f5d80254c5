import Foundation
import HummingbirdTesting
import Testing

@testable import HoardServer

/// What the browser's table page needs of the server: a WebSocket cannot carry an Authorization header there, so the
/// token comes as a subprotocol, and the session document says who the caller is.
@Suite("The live channel for browsers", .timeLimit(.minutes(2)))
struct BrowserLiveTests {
    static func handshake(_ live: LiveChannelTests.Live, protocols: String) async throws -> String {
        let socket = try await RawSocket.connect(port: live.port)
        defer { socket.close() }
        let request = "GET /v1/sessions/\(live.session)/live HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: \(protocols)\r\n\r\n"
        try await socket.send(Array(request.utf8))
        return try await socket.receiveHeadAndRest().0
    }

    @Test func aTokenInTheSubprotocolListOpensTheChannelAndTheAnswerNamesThePagesProtocol() async throws {
        try await LiveChannelTests.withSession { live in
            let head = try await Self.handshake(live, protocols: "hoard.live, hoard.bearer.\(live.participant)")
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(head.prefix(200))")
            #expect(head.lowercased().contains("sec-websocket-protocol: hoard.live"))
            #expect(!head.contains(live.participant), "the token is never echoed")
        }
    }

    @Test func anUnknownTokenInTheSubprotocolListIsRefused() async throws {
        try await LiveChannelTests.withSession { live in
            let head = try await Self.handshake(live, protocols: "hoard.live, hoard.bearer.hoard_p_nope")
            #expect(head.hasPrefix("HTTP/1.1 401"), "\(head.prefix(200))")
        }
    }

    @Test func theSessionDocumentSaysWhoTheCallerIs() async throws {
        try await LiveChannelTests.withSession { live in
            let asPlayer = try await live.client.json(.get, "/v1/sessions/\(live.session)", token: live.participant)
            let you = try #require(asPlayer.json["you"] as? [String: Any])
            #expect(you["host"] as? Bool == false)
            #expect((you["participantId"] as? String).map { !$0.hasPrefix("host:") } == true)
            let asHost = try await live.client.json(.get, "/v1/sessions/\(live.session)", token: live.fixture.hostToken)
            let host = try #require(asHost.json["you"] as? [String: Any])
            #expect(host["host"] as? Bool == true)
            #expect((host["joinCode"] as? String)?.count == 9, "the host is given the join code")
            #expect(you["joinCode"] == nil, "a player is not")
        }
    }
}
