import Foundation
import HoardRepository
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

@Suite("Live channel")
struct LiveChannelTests {
    /// Creates a session and returns its id and a participant token.
    static func start(_ client: some TestClientProtocol, _ fixture: SessionFixture, map: [String: Any] = [:]) async throws -> (String, String) {
        let created = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Live", "map": map])
        let code = try #require(created.json["code"] as? String)
        let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "Ana"])
        return (try #require(created.json["id"] as? String), try #require(joined.json["participantToken"] as? String))
    }

    /// An app's own op (`custom`), numbered.
    static func op(_ n: Int) -> String { #"{"type":"op","op":{"kind":"custom","payload":{"n":\#(n)}}}"# }

    /// The number of a `custom` op event made by ``op(_:)``.
    static func number(_ event: [String: Any]) -> Int? { ((event["op"] as? [String: Any])?["payload"] as? [String: Any])?["n"] as? Int }

    /// A live server with a fresh session (this map) and one participant.
    struct Live: Sendable {
        let client: any TestClientProtocol
        let fixture: SessionFixture
        let port: Int
        let session: String
        let participant: String
    }

    static func withSession(map: [String: any Sendable] = [:], _ body: @Sendable (Live) async throws -> Void) async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let (session, participant) = try await Self.start(client, fixture, map: map)
            try await body(Live(client: client, fixture: fixture, port: port, session: session, participant: participant))
        }
    }

    @Test func hostOpsReachParticipantsInOrderAndAReconnectGetsExactlyWhatItMissed() async throws {
        try await Self.withSession { live in
            // The host sends ten ops; presence of the host is event 1, its ops 2...11.
            _ = try await LiveClient.exchange(
                port: live.port, session: live.session, token: live.fixture.hostToken, send: (1...10).map(Self.op), until: 11)
            let first = LiveClient.objects(try await LiveClient.exchange(port: live.port, session: live.session, token: live.participant, since: 0, until: 8))
            let seqs = first.compactMap { $0["seq"] as? Int }
            #expect(seqs == Array(1...8), "in order, no gaps: \(seqs)")
            let resumed = LiveClient.objects(try await LiveClient.exchange(port: live.port, session: live.session, token: live.participant, since: 8, until: 3))
            let ops = resumed.filter { $0["type"] as? String == "op" }.compactMap(Self.number)
            #expect(ops == [8, 9, 10])
        }
    }

    @Test func twentyReconnectsLoseAndReorderNothing() async throws {
        try await Self.withSession { live in
            var lastSeq: Int64 = 0
            var seen: [Int] = []
            for round in 0..<20 {
                _ = try await LiveClient.exchange(port: live.port, session: live.session, token: live.fixture.hostToken, send: [Self.op(round)], until: 1)
                let events = LiveClient.objects(try await LiveClient.exchange(
                    port: live.port, session: live.session, token: live.participant, since: lastSeq, until: 1, timeout: .seconds(10)))
                for event in events {
                    let seq = Int64(event["seq"] as? Int ?? 0)
                    #expect(seq == lastSeq + 1, "round \(round): expected \(lastSeq + 1), got \(seq)")
                    lastSeq = seq
                    if let n = Self.number(event) { seen.append(n) }
                }
            }
            let rest = LiveClient.objects(try await LiveClient.exchange(
                port: live.port, session: live.session, token: live.participant, since: lastSeq, until: 1000, timeout: .seconds(5)))
            seen += rest.compactMap(Self.number)
            #expect(seen == Array(0..<20))
        }
    }

    @Test func twoClientsGrabbingOneTokenSeeTheSameWinner() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            // A player grabs only what is on the table and theirs to see (a hidden id reads like an absent one).
            let (session, ana) = try await Self.start(client, fixture, map: ["tokens": [["id": "goblin-1", "x": 0, "y": 0]]])
            let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": try Self.code(client, fixture, session), "name": "Bo"])
            let bo = try #require(joined.json["participantToken"] as? String)
            let grab = #"{"type":"grab","entity":"goblin-1"}"#
            async let a = LiveClient.exchange(port: port, session: session, token: ana, since: 0, send: [grab], until: 6, timeout: .seconds(10))
            async let b = LiveClient.exchange(port: port, session: session, token: bo, since: 0, send: [grab], until: 6, timeout: .seconds(10))
            let (seenByAna, seenByBo) = try await (LiveClient.objects(a), LiveClient.objects(b))
            let winners = [seenByAna, seenByBo].map { events in events.filter { $0["type"] as? String == "grab" }.compactMap { $0["by"] as? String } }
            #expect(winners[0].count == 1 && winners[1].count == 1, "exactly one grab event: \(winners)")
            #expect(winners[0] == winners[1], "both see the same winner")
            let denied = (seenByAna + seenByBo).filter { $0["code"] as? String == "GRAB_DENIED" }
            #expect(denied.count == 1)
        }
    }

    static func code(_ client: some TestClientProtocol, _ fixture: SessionFixture, _ session: String) async throws -> String {
        try #require(try Hoard(dataDirectory: fixture.directory).catalog.session(id: session)?.code)
    }

    @Test func aParticipantCannotChangeTheMapAndAFloodIsRateLimited() async throws {
        try await Self.withSession { live in
            let refused = LiveClient.objects(try await LiveClient.exchange(
                port: live.port, session: live.session, token: live.participant, send: [Self.op(1)], until: 3))
            #expect(refused.contains { $0["code"] as? String == "FORBIDDEN" })
            // More than the burst and a few seconds of the rate even when a loaded machine reads them slowly (the rate
            // is judged as messages are read).
            let flood = (0..<1_000).map { _ in #"{"type":"grab","entity":"x"}"# }
            let answers = LiveClient.objects(try await LiveClient.exchange(
                port: live.port, session: live.session, token: live.participant, send: flood, until: 400, timeout: .seconds(5)))
            #expect(answers.contains { $0["code"] as? String == "RATE_LIMITED" })
        }
    }

    @Test func aClientFarBehindGetsASnapshotOfTheCurrentMap() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let textures = try fixture.assets("texture")
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let (session, participant) = try await Self.start(client, fixture, map: ["floor": textures[0]])
            _ = try await LiveClient.exchange(port: port, session: session, token: fixture.hostToken, send: [Self.op(1)], until: 2)
            let replaced = try await client.json(.put, "/v1/sessions/\(session)/map", token: fixture.hostToken, body: ["floor": textures[1]])
            #expect(replaced.status == .ok)
            let events = LiveClient.objects(try await LiveClient.exchange(port: port, session: session, token: participant, since: 1, until: 1))
            let snapshot = try #require(events.first)
            #expect(snapshot["type"] as? String == "snapshot")
            #expect((snapshot["map"] as? [String: Any])?["floor"] as? String == textures[1])
        }
    }

    @Test func sessionsAndTheirLogSurviveARestart() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let first = try await buildApplication(fixture.configuration)
        let (session, participant) = try await first.test(.live) { client in
            let port = try #require(client.port)
            let (session, participant) = try await Self.start(client, fixture)
            _ = try await LiveClient.exchange(port: port, session: session, token: fixture.hostToken, send: [Self.op(1), Self.op(2)], until: 3)
            return (session, participant)
        }
        let second = try await buildApplication(fixture.configuration)
        try await second.test(.live) { client in
            let port = try #require(client.port)
            let events = LiveClient.objects(try await LiveClient.exchange(port: port, session: session, token: participant, since: 0, until: 4))
            let ops = events.compactMap(Self.number)
            #expect(ops == [1, 2])
        }
    }
}
