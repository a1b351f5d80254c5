import Foundation
import HoardRepository
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// A participant's access ends: the host removes them or changes the join code, and art the table stopped showing
/// answers 404 to them.
@Suite(.timeLimit(.minutes(2))) struct ParticipantAccessTests {
    static func participantId(_ client: some TestClientProtocol, _ fixture: SessionFixture, session: String, named name: String) async throws -> String {
        let shown = try await client.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken)
        let participants = try #require(shown.json["participants"] as? [[String: Any]])
        return try #require(participants.first { $0["name"] as? String == name }?["id"] as? String)
    }

    @Test func aRemovedParticipantsTokenStopsAndTheirSocketClosesWith4403() async throws {
        try await LiveChannelTests.withSession { live in
            let (client, fixture, session) = (live.client, live.fixture, live.session)
            let created = try await client.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken)
            #expect(created.status == .ok)
            let code = try #require(try Hoard(dataDirectory: fixture.directory).catalog.session(id: session)?.code)
            let bob = try #require(
                try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "Bob"]).json["participantToken"] as? String)
            let ana = try await Self.participantId(client, fixture, session: session, named: "Ana")
            let bobId = try await Self.participantId(client, fixture, session: session, named: "Bob")
            let socket = try await RawWebSocket.open(port: live.port, session: session, token: live.participant)
            let remove = { (token: String?, id: String) in
                try await client.json(.delete, "/v1/sessions/\(session)/participants/\(id)", token: token).status
            }
            // Only the host removes, and only a participant of this session.
            #expect(try await remove(bob, ana) == .forbidden)
            #expect(try await remove(nil, ana) == .unauthorized)
            #expect(try await remove(fixture.hostToken, "no-such-participant") == .notFound)
            #expect(try await remove(fixture.hostToken, ana) == .noContent)
            #expect(try await socket.closeCode() == 4403)
            #expect(try await client.json(.get, "/v1/sessions/\(session)", token: live.participant).status == .unauthorized)
            #expect(try await remove(fixture.hostToken, ana) == .notFound, "removed once")
            // The others play on, and see Ana leave.
            #expect(try await client.json(.get, "/v1/sessions/\(session)", token: bob).status == .ok)
            let shown = try await client.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken)
            #expect((shown.json["participants"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [bobId])
            let exchange = try await LiveClient.exchange(
                port: live.port, session: session, token: bob, since: 0, until: 100, stop: "left", timeout: .seconds(10))
            let events = LiveClient.objects(exchange)
            #expect(events.contains { $0["event"] as? String == "left" && ($0["participant"] as? [String: Any])?["id"] as? String == ana })
        }
    }

    @Test func aNewJoinCodeRetiresTheOldOne() async throws {
        try await LiveChannelTests.withSession { live in
            let (client, fixture, session) = (live.client, live.fixture, live.session)
            let old = try #require(try Hoard(dataDirectory: fixture.directory).catalog.session(id: session)?.code)
            #expect(try await client.json(.post, "/v1/sessions/\(session)/code", token: live.participant).status == .forbidden)
            let rotated = try await client.json(.post, "/v1/sessions/\(session)/code", token: fixture.hostToken)
            #expect(rotated.status == .ok)
            let code = try #require(rotated.json["code"] as? String)
            #expect(code != old && code.count == 9)
            let stale = try await client.json(.post, "/v1/sessions/join", body: ["code": old, "name": "Late"])
            #expect(stale.status == .notFound && (stale.json["error"] as? [String: Any])?["code"] as? String == "UNKNOWN_CODE")
            #expect(try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "Late"]).status == .ok)
            #expect(try await client.json(.get, "/v1/sessions/\(session)", token: live.participant).status == .ok, "who joined stays")
        }
    }

    @Test func artTheTableStoppedShowingAnswers404ToParticipants() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let textures = try fixture.assets("texture")
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.live) { client in
            let (session, participant) = try await LiveChannelTests.start(client, fixture, map: ["floor": textures[0]])
            #expect(try await client.json(.get, "/v1/blobs/\(textures[0])", token: participant).status == .ok)
            #expect(try await client.json(.put, "/v1/sessions/\(session)/map", token: fixture.hostToken, body: ["floor": textures[1]]).status == .ok)
            #expect(try await client.json(.get, "/v1/blobs/\(textures[1])", token: participant).status == .ok)
            let old = try await client.json(.get, "/v1/blobs/\(textures[0])", token: participant)
            #expect(old.status == .notFound, "the old map's art is no longer theirs")
            #expect(try await client.json(.get, "/v1/blobs/\(textures[0])", token: fixture.hostToken).status == .ok, "the host's group still reads it")
        }
    }
}
