import Foundation
import HoardCore
import HoardRepository
import HoardServer
import HoardTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Generated maps and op sequences against the real server (issue 34's class, not its instances): maps of every
/// shape the schema allows (per-tile floors, diagonal walls, places off the grid, strokes without ids, ids with NUL and
/// separators), then random ops from the host and two players. The server never answers 5xx nor dies, a map is
/// admitted (201) or refused (400) and nothing else, no byte a player receives names the hidden token, its art or the
/// host's secret stroke, a player's refusals read the same for a hidden id and an absent one, and a server restarted
/// after every quarter of the cases loads every stored table. Fixed seed and budget: the same cases every run, in a few seconds.
@Suite("Generated maps and ops keep the table's secrets", .timeLimit(.minutes(3)))
struct TableSecretsPropertyTests {
    static let seed: UInt64 = 34
    static let maps = 16
    /// How many servers play the cases in turn, each loading what the ones before stored.
    static let restarts = 4
    static let adversarialIds = ["a\u{0}s:b", "t:1,2", "s0", "x y", "sh,t", "\u{0}", "p:nobody:x"]

    /// A map that may or may not pass the door; `secret` is a hidden token with art `art[1]` (no other entity uses it)
    /// and a stroke on the host's layer.
    static func map(_ art: [String], _ random: inout SeededRandom) -> [String: Any] {
        let (width, height) = (Int.random(in: 3...14, using: &random), Int.random(in: 3...14, using: &random))
        func corner(_ side: Int) -> Int { Int.random(in: 0...(side + (Int.random(in: 0..<5, using: &random) == 0 ? 3 : 0)), using: &random) }
        var ids = ["goblin", "wolf"] + adversarialIds.shuffled(using: &random).prefix(2)
        if Int.random(in: 0..<6, using: &random) == 0 { ids.append("goblin") }  // an id used twice
        var tokens: [[String: Any]] = [["id": "secret", "asset": art[1], "x": 0, "y": 0, "number": 9, "hidden": true]]
        for (index, id) in [ids[0], ids[2]].enumerated() {
            let x = Int.random(in: 0..<(width + (Int.random(in: 0..<8, using: &random) == 0 ? 2 : 0)), using: &random)
            tokens.append(["id": id, "asset": art[index == 0 ? 0 : 2], "x": x, "y": Int.random(in: 0..<height, using: &random), "number": index])
        }
        var walls: [[String: Any]] = []
        for index in 0..<Int.random(in: 0...3, using: &random) {
            var wall: [String: Any] = ["id": "w\(index)", "from": [corner(width), corner(height)], "to": [corner(width), corner(height)]]
            if Bool.random(using: &random) { wall["texture"] = art[2] }
            walls.append(wall)
        }
        var strokes: [[String: Any]] = [
            ["id": "secret-stroke", "layer": "host", "color": "#123456", "width": 0.5, "points": [[0, 0], [1, 1]]]
        ]
        for index in 0..<Int.random(in: 0...3, using: &random) {
            var stroke: [String: Any] = ["color": "#00ff00", "width": 0.5, "points": [[0, 0], [Double(width) / 2, Double(height) / 2]]]
            if Bool.random(using: &random) { stroke["id"] = ids.count > 3 + index ? ids[3 + index] : "stroke-\(index)" }
            strokes.append(stroke)
        }
        var map: [String: Any] = [
            "schema": Bool.random(using: &random) ? "hoard.map/v1" : "hoard.map/v2", "grid": ["width": width, "height": height],
            "fog": ["enabled": Bool.random(using: &random), "revealed": [[0, 0, max(1, width / 2), max(1, height / 2)]]],
            "drawing": ["walls": walls, "strokes": strokes, "layers": ["monsters": []]], "objects": [], "tokens": tokens,
        ]
        if Bool.random(using: &random) {
            map["background"] = ["tiles": (0..<3).map { _ in ["x": corner(width - 1), "y": corner(height - 1), "texture": art[2]] }]
        }
        return map
    }

    static func op(_ text: String, id: String? = nil) -> String { TableSocketTests.op(text, id: id) }

    /// Host ops that never show the secret token or stroke to a player.
    static func hostOps(_ random: inout SeededRandom) -> [String] {
        (0..<6).map { _ in
            switch Int.random(in: 0..<7, using: &random) {
            case 0: op(#"{"kind":"move","token":"secret","x":\#(Int.random(in: 0...2, using: &random)),"y":1}"#)
            case 1: #"{"type":"grab","entity":"secret"}"#
            case 2: #"{"type":"release","entity":"secret"}"#
            case 3: op(#"{"kind":"layer","layer":"monsters","visibleTo":"*"}"#)
            case 4: op(#"{"kind":"fog","reveal":[[0,0,2,2]]}"#)
            case 5: op(#"{"kind":"move","token":"goblin","x":1,"y":1}"#)
            default: op(#"{"kind":"ping","x":1,"y":1}"#)
            }
        }
    }

    @Test func generatedMapsAndOpsNeverLeakNorCrashAndARestartLoadsEveryTable() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let art = Array(try fixture.assets("token").prefix(3))
        try #require(art.count == 3)
        var sessions: [String] = []
        // Four servers in turn on the same data: each starts by loading every table stored so far (a restart after
        // each quarter of the cases), then plays its quarter.
        for round in 0..<Self.restarts {
            let app = try await buildApplication(fixture.configuration)
            sessions = try await app.test(.live) { [sessions] client in
                var sessions = sessions
                for session in sessions {
                    let shown = try await client.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken)
                    #expect(shown.status == .ok, "round \(round): \(session) loads again: \(shown.json)")
                }
                var random = SeededRandom(seed: Self.seed &+ UInt64(round))
                let port = try #require(client.port)
                let perRound = Self.maps / Self.restarts
                for index in round * perRound..<(round + 1) * perRound {
                    let map = Self.map(art, &random)
                    let created = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Gen \(index)", "map": map])
                    #expect([.created, .badRequest].contains(created.status), "case \(index): \(created.status) \(created.json)")
                    guard created.status == .created else { continue }
                    let session = try #require(created.json["id"] as? String)
                    let code = try #require(created.json["code"] as? String)
                    sessions.append(session)
                    var players: [String] = []
                    for name in ["Ana", "Bo"] {
                        let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": name])
                        #expect(joined.status == .ok, "case \(index): \(joined.json)")
                        players.append(try #require(joined.json["participantToken"] as? String))
                    }
                    let listener = players[1]
                    async let heard = LiveClient.exchange(
                        port: port, session: session, token: listener, since: 0, until: 200, stop: "gen-end", timeout: .seconds(15))
                    try await Task.sleep(for: .milliseconds(200))
                    let hostOps = Self.hostOps(&random) + [Self.op(#"{"kind":"message","text":"host-done"}"#)]
                    _ = try await LiveClient.exchange(
                        port: port, session: session, token: fixture.hostToken, send: hostOps, until: 200, stop: "host-done", timeout: .seconds(10))
                    let probes = [
                        Self.op(#"{"kind":"move","token":"secret","x":1,"y":1}"#, id: "p-hidden"),
                        Self.op(#"{"kind":"move","token":"absent-one","x":1,"y":1}"#, id: "p-absent"),
                        Self.op(#"{"kind":"erase","stroke":"secret-stroke"}"#, id: "e-hidden"),
                        Self.op(#"{"kind":"erase","stroke":"absent-one"}"#, id: "e-absent"),
                        Self.op(##"{"kind":"stroke","stroke":{"id":"secret-stroke","color":"#0000ff","width":0.5,"points":[[0,0],[900,1]]}}"##, id: "s-hidden"),
                        Self.op(##"{"kind":"stroke","stroke":{"id":"absent-one","color":"#0000ff","width":0.5,"points":[[0,0],[900,1]]}}"##, id: "s-absent"),
                    ]
                    let answered = try await LiveClient.exchange(
                        port: port, session: session, token: players[0], since: 0, send: probes, until: 200, stop: "s-absent", timeout: .seconds(10))
                    let refusals = TableSecretsTests.refusals(answered, ids: ["secret-stroke", "secret", "absent-one"])
                    for pair in [("p-hidden", "p-absent"), ("e-hidden", "e-absent"), ("s-hidden", "s-absent")] {
                        #expect(refusals[pair.0] == refusals[pair.1], "case \(index): \(pair) \(refusals)")
                    }
                    _ = try await LiveClient.exchange(
                        port: port, session: session, token: fixture.hostToken, send: [Self.op(#"{"kind":"message","text":"gen-end"}"#)], until: 3)
                    var received = try await heard + answered.filter { !$0.contains("\"error\"") }
                    for player in players {
                        let shown = try await client.execute(uri: "/v1/sessions/\(session)", method: .get, headers: [.authorization: "Bearer \(player)"]) {
                            #expect($0.status == .ok)
                            return String(buffer: $0.body)
                        }
                        received.append(shown)
                        let headers: HTTPFields = [.authorization: "Bearer \(player)"]
                        #expect(try await client.execute(uri: "/v1/blobs/\(art[1])", method: .get, headers: headers) { $0.status } == .notFound)
                    }
                    for text in received {
                        #expect(!text.contains("\"secret") && !text.contains(art[1]), "case \(index): a player received \(text.prefix(400))")
                    }
                }
                return sessions
            }
        }
        #expect(sessions.count >= Self.maps / 4, "\(sessions.count) of \(Self.maps) generated maps were admitted")
        let stored = sessions
        let restarted = try await buildApplication(fixture.configuration)
        try await restarted.test(.live) { client in
            for session in stored {
                let shown = try await client.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken)
                #expect(shown.status == .ok, "\(session) loads again: \(shown.json)")
            }
        }
    }
}
