import Foundation
import HoardCore
import HoardRepository
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// The table the server holds, over real sockets: the current state on join, per-participant views, who may act,
/// client op ids, big ops, folding and restarts.
@Suite("The table", .timeLimit(.minutes(3)))
struct TableSocketTests {
    /// A 16 × 12 map: goblin (token art 0) at (1, 1), a hidden ogre (art 1), a wolf (art 2).
    static func map(_ art: [String]) -> [String: Any] {
        [
            "schema": "hoard.map/v1", "grid": ["width": 16, "height": 12],
            "background": ["tiles": []], "drawing": ["walls": [], "strokes": []], "objects": [],
            "tokens": [
                ["id": "goblin", "asset": art[0], "x": 1, "y": 1, "number": 1],
                ["id": "ogre", "asset": art[1], "x": 2, "y": 2, "number": 2, "hidden": true],
                ["id": "wolf", "asset": art[2], "x": 3, "y": 3, "number": 3],
            ],
        ]
    }

    struct Table: Sendable {
        let client: any TestClientProtocol
        let fixture: SessionFixture
        let port: Int
        let session: String
        let code: String
        let art: [String]

        /// Joins as a new participant: (token, participant id).
        func join(_ name: String) async throws -> (String, String) {
            let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": name])
            return (try #require(joined.json["participantToken"] as? String), try #require(joined.json["participantId"] as? String))
        }

        /// What `token` sees: the session document and its raw bytes.
        func show(_ token: String) async throws -> (json: [String: Any], text: String) {
            try await client.execute(uri: "/v1/sessions/\(session)", method: .get, headers: [.authorization: "Bearer \(token)"]) {
                response in
                #expect(response.status == .ok)
                let text = String(buffer: response.body)
                return ((try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:], text)
            }
        }

        /// Sends messages on a socket of `token` and collects what arrives, starting after `since`.
        /// `timeout` bounds a test on a loaded machine; a passing test stops at `until` messages, well before it.
        func live(
            _ token: String, since: Int64? = nil, send: [String] = [], until: Int, stop: String? = nil, timeout: Duration = .seconds(20)
        ) async throws -> [String] {
            try await LiveClient.exchange(
                port: port, session: session, token: token, since: since, send: send, until: until, stop: stop, timeout: timeout)
        }

        func seq(_ token: String) async throws -> Int64 {
            Int64(try #require(try await show(token).json["seq"] as? Int))
        }

        func status(_ path: String, _ token: String) async throws -> HTTPResponse.Status {
            try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer \(token)"]) { $0.status }
        }
    }

    /// Runs `body` against a server with a session on `map` (built from three token assets' digests).
    static func with(map: @Sendable ([String]) -> [String: Any] = map, _ body: @Sendable (Table) async throws -> Void) async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let art = Array(try fixture.assets("token").prefix(3))
        try #require(art.count == 3)
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.live) { client in
            let created = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Crypt", "map": map(art)])
            try #require(created.status == .created)
            try await body(
                Table(
                    client: client, fixture: fixture, port: try #require(client.port), session: try #require(created.json["id"] as? String),
                    code: try #require(created.json["code"] as? String), art: art))
        }
    }

    static func op(_ op: String, id: String? = nil) -> String {
        #"{"type":"op","op":\#(op)"# + (id.map { #","opId":"\#($0)""# } ?? "") + "}"
    }

    static func tokens(_ document: [String: Any]) -> [String: [String: Any]] {
        let list = ((document["map"] as? [String: Any])?["tokens"] as? [[String: Any]]) ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as? String ?? "", $0) })
    }

    @Test func aLateJoinerSeesTheTableAsItIsNowAndContinuesExactly() async throws {
        try await Self.with { table in
            let host = table.fixture.hostToken
            _ = try await table.live(host, send: [Self.op(#"{"kind":"move","token":"goblin","x":5,"y":6}"#)], until: 3)
            let (player, _) = try await table.join("Ana")
            let document = try await table.show(player)
            #expect(Self.tokens(document.json)["goblin"]?["x"] as? Int == 5, "the move before the join is in the map")
            let seq = Int64(try #require(document.json["seq"] as? Int))
            async let seen = table.live(player, since: seq, until: 3)
            try await Task.sleep(for: .milliseconds(300))
            _ = try await table.live(host, send: [Self.op(#"{"kind":"move","token":"goblin","x":7,"y":8}"#)], until: 3)
            let events = LiveClient.objects(try await seen)
            let moves = events.filter { $0["type"] as? String == "op" }.compactMap { $0["op"] as? [String: Any] }
            #expect(moves.count == 1 && moves.first?["x"] as? Int == 7, "exactly what came after \(seq): \(events)")
            #expect(events.allSatisfy { ($0["seq"] as? Int).map { Int64($0) > seq } ?? false })
        }
    }

    @Test func aHiddenTokenNeverReachesAPlayerUntilItIsRevealed() async throws {
        try await Self.with { table in
            let host = table.fixture.hostToken
            let (player, _) = try await table.join("Ana")
            let hostView = try await table.show(host)
            #expect(Self.tokens(hostView.json)["ogre"] != nil, "the host sees everything")
            let hidden = table.art[1]
            let hiddenBlobs = try #require(
                ((hostView.json["manifest"] as? [String: Any])?["assets"] as? [[String: Any]])?
                    .first { $0["digest"] as? String == hidden }?["variants"] as? [[String: Any]]
            ).compactMap { $0["digest"] as? String }
            let view = try await table.show(player)
            #expect(!view.text.contains("ogre") && !view.text.contains(hidden), "not in the map, not in the manifest")
            for blob in hiddenBlobs + [hidden] {
                #expect(try await table.status("/v1/blobs/\(blob)", player) == .notFound, "its art answers 404 like an absent blob")
            }
            let seq = Int64(try #require(view.json["seq"] as? Int))
            async let seen = table.live(player, since: seq, until: 6)
            try await Task.sleep(for: .milliseconds(300))
            _ = try await table.live(
                host,
                send: [
                    Self.op(#"{"kind":"move","token":"ogre","x":9,"y":9}"#), Self.op(#"{"kind":"set","token":"ogre","label":"Grug"}"#),
                    Self.op(#"{"kind":"move","token":"wolf","x":4,"y":4}"#), Self.op(#"{"kind":"reveal","token":"ogre"}"#),
                ], until: 7)
            let texts = try await seen
            let events = LiveClient.objects(texts)
            let beforeReveal = texts.prefix { !$0.contains(#""type":"assets""#) }
            #expect(
                !beforeReveal.contains { $0.contains("ogre") || $0.contains(hidden) }, "no event names it while hidden: \(beforeReveal)")
            let assets = try #require(events.firstIndex { $0["type"] as? String == "assets" })
            let added = try #require(events.firstIndex { ($0["op"] as? [String: Any])?["kind"] as? String == "add" })
            #expect(assets < added, "its manifest entry comes first, so the art is fetched before it is drawn")
            #expect(((events[added]["op"] as? [String: Any])?["token"] as? [String: Any])?["label"] as? String == "Grug")
            for blob in hiddenBlobs {
                #expect(try await table.status("/v1/blobs/\(blob)", player) == .ok, "revealed art can be fetched")
            }
        }
    }

    @Test func playersMoveTheirOwnTokensAndNothingElse() async throws {
        try await Self.with { table in
            let host = table.fixture.hostToken
            let (player, id) = try await table.join("Ana")
            _ = try await table.live(host, send: [Self.op(#"{"kind":"assign","token":"goblin","owner":"\#(id)"}"#)], until: 3)
            let answers = LiveClient.objects(
                try await table.live(
                    player,
                    send: [
                        Self.op(#"{"kind":"move","token":"goblin","x":4,"y":4}"#, id: "a1"),
                        Self.op(#"{"kind":"move","token":"wolf","x":4,"y":4}"#, id: "a2"),
                        Self.op(#"{"kind":"hide","token":"goblin"}"#, id: "a3"),
                        Self.op(#"{"kind":"move","token":"ogre","x":4,"y":4}"#, id: "a4"),
                        Self.op(#"{"kind":"move","token":"goblin","x":40,"y":4}"#, id: "a5"),
                        Self.op(#"{"kind":"teleport","token":"goblin"}"#, id: "a6"),
                    ], until: 8))
            let errors = Dictionary(
                uniqueKeysWithValues: answers.filter { $0["type"] as? String == "error" }.map {
                    ($0["opId"] as? String ?? "", $0["code"] as? String ?? "")
                })
            #expect(
                errors == ["a2": "UNKNOWN_ENTITY", "a3": "FORBIDDEN", "a4": "UNKNOWN_ENTITY", "a5": "OUT_OF_GRID", "a6": "BAD_OP"], "\(answers)")
            #expect(answers.contains { $0["opId"] as? String == "a1" && $0["type"] as? String == "op" })
            let tokens = Self.tokens(try await table.show(host).json)
            #expect(tokens["goblin"]?["x"] as? Int == 4 && tokens["wolf"]?["x"] as? Int == 3, "refused ops changed nothing")
        }
    }

    @Test func aResentOpIsAppliedOnceAndABigStrokeDoesNotDisconnect() async throws {
        try await Self.with { table in
            let host = table.fixture.hostToken
            let move = Self.op(#"{"kind":"move","token":"wolf","x":6,"y":6}"#, id: "same")
            let points = (0..<10_000).map { "[\(Double($0 % 12) + 0.123456789012),\(11.987654321098)]" }.joined(separator: ",")
            let stroke = Self.op(
                ##"{"kind":"stroke","stroke":{"id":"long","color":"#aa0000","width":0.25,"points":[\##(points)]}}"##, id: "big")
            #expect(stroke.utf8.count > 64 << 10, "larger than the old message limit")
            let answers = LiveClient.objects(try await table.live(host, send: [move, move, stroke], until: 5))
            #expect(answers.filter { $0["opId"] as? String == "same" }.map { $0["type"] as? String } == ["op", "ack"])
            #expect(answers.contains { $0["opId"] as? String == "big" && $0["type"] as? String == "op" }, "the stroke was applied and sent")
            let (player, _) = try await table.join("Ana")
            let strokes =
                ((try await table.show(player).json["map"] as? [String: Any])?["drawing"] as? [String: Any])?["strokes"] as? [[String: Any]]
            #expect((strokes?.first?["points"] as? [Any])?.count == 10_000)
        }
    }

    @Test func aMessageReachesOnlyThoseItNames() async throws {
        try await Self.with { table in
            let (ana, _) = try await table.join("Ana")
            let (bo, boId) = try await table.join("Bo")
            let (cy, _) = try await table.join("Cy")
            let seq = try await table.seq(ana)
            _ = try await table.live(ana, send: [Self.op(#"{"kind":"message","text":"the-secret-word","to":["\#(boId)"]}"#)], until: 2)
            // After seq: Ana joined, her message, Ana left, then the reader's own arrival: 4 events, 3 for Cy.
            for (token, shouldSee) in [(bo, true), (cy, false), (table.fixture.hostToken, true)] {
                let texts = try await table.live(token, since: seq, until: 4, timeout: .seconds(shouldSee ? 20 : 2))
                #expect(texts.contains { $0.contains("the-secret-word") } == shouldSee)
            }
        }
    }

    @Test func savingASessionSavesTheGameInProgressAndARestartContinuesIt() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let art = Array(try fixture.assets("token").prefix(3))
        let first = try await buildApplication(fixture.configuration)
        let session = try await first.test(.live) { client in
            let created = try await client.json(
                .post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Crypt", "map": Self.map(art)])
            let session = try #require(created.json["id"] as? String)
            _ = try await LiveClient.exchange(
                port: try #require(client.port), session: session, token: fixture.hostToken,
                send: [Self.op(#"{"kind":"move","token":"goblin","x":9,"y":2}"#, id: "m1")], until: 2)
            let saved = try await client.json(.post, "/v1/maps", token: fixture.hostToken, body: ["name": "midgame", "session": session])
            #expect(saved.status == .created)
            let loaded = try await client.json(.get, "/v1/maps/midgame", token: fixture.hostToken)
            #expect(Self.tokens(loaded.json)["goblin"]?["x"] as? Int == 9)
            return session
        }
        let second = try await buildApplication(fixture.configuration)
        try await second.test(.live) { client in
            let shown = try await client.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken)
            #expect(Self.tokens(shown.json)["goblin"]?["x"] as? Int == 9, "a restarted server continues from the same state")
            let answers = LiveClient.objects(
                try await LiveClient.exchange(
                    port: try #require(client.port), session: session, token: fixture.hostToken,
                    send: [Self.op(#"{"kind":"move","token":"goblin","x":1,"y":1}"#, id: "m1")], until: 3))
            #expect(answers.contains { $0["type"] as? String == "ack" }, "an op id applied before the restart is not applied again")
        }
    }

    @Test func theLogIsFoldedSoAJoinNeverReplaysIt() async throws {
        try await Self.with { table in
            let host = table.fixture.hostToken
            // Six rounds of 100 moves: past the fold, each within the participant's burst (refilled between rounds).
            for round in 0..<6 {
                let moves = (0..<100).map { Self.op(#"{"kind":"move","token":"wolf","x":\#($0 % 16),"y":\#(round)}"#) }
                // Open until the round's ops came back (after the snapshot and the presence event).
                _ = try await table.live(host, send: moves, until: 102, timeout: .seconds(10))
                try await Task.sleep(for: .milliseconds(2100))
            }
            let hoard = try Hoard(dataDirectory: table.fixture.directory)
            let record = try #require(try hoard.catalog.session(id: table.session))
            #expect(record.lastSeq > 600 && record.baseSeq > 0, "folded: base \(record.baseSeq) of \(record.lastSeq)")
            let kept = try hoard.catalog.events(session: table.session, after: 0)
            #expect(kept.count <= 500 + (Int(record.lastSeq - record.baseSeq)), "the log is cut: \(kept.count) events kept")
            let (player, _) = try await table.join("Ana")
            let wolf = Self.tokens(try await table.show(player).json)["wolf"]
            #expect(wolf?["x"] as? Int == 99 % 16, "the last move of some socket is the state: \(String(describing: wolf))")
        }
    }
}
