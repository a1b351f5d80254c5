import Foundation
import HoardCore
import HoardRepository
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// A hex map over real sockets: the server reads the troll's footprint (3 × 3: seven hexes) from the catalog, refuses
/// a move that puts one of its hexes off the map, shows it to a player once fog reveals any of its hexes, and shows a
/// wall along a hex side once fog reveals either cell it separates.
@Suite("Hex maps over real sockets", .timeLimit(.minutes(3)))
struct HexSocketTests {
    typealias Table = TableSocketTests.Table

    /// A flat-odd 12 × 9 map under fog with columns 0 to 3 revealed: the goblin at (1, 1), the troll at (6, 4) (its
    /// hexes in columns 5 to 7), a wall along side 0 of (8, 4) (between it and (9, 4)).
    static func map(troll: String, goblin: String) -> [String: Any] {
        [
            "schema": "hoard.map/v2", "grid": ["width": 12, "height": 9, "type": "hex", "orientation": "flat", "offset": "odd"],
            "fog": ["enabled": true, "revealed": [[0, 0, 4, 9]]],
            "drawing": ["walls": [["id": "w-east", "cell": [8, 4], "side": 0]], "strokes": []],
            "objects": [] as [Any],
            "tokens": [
                ["id": "goblin", "asset": goblin, "x": 1, "y": 1, "number": 1],
                ["id": "troll", "asset": troll, "x": 6, "y": 4, "number": 2],
            ],
        ]
    }

    @Test func theServerJudgesAHexTokenByEveryHexItCoversAndAWallByTheCellsItSeparates() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let tokens = try Hoard(dataDirectory: fixture.directory).catalog.assets(kind: .token)
        let troll = try #require(tokens.first { $0.footprint.width == 3 }, "the dungeon pack's 3 × 3 troll").digest.description
        let goblin = try #require(tokens.first { $0.footprint.width == 1 }).digest.description
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.live) { client in
            let created = try await client.json(
                .post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Hexcrawl", "map": Self.map(troll: troll, goblin: goblin)])
            try #require(created.status == .created, "\(created.json)")
            let table = Table(
                client: client, fixture: fixture, port: try #require(client.port), session: try #require(created.json["id"] as? String),
                code: try #require(created.json["code"] as? String), art: [troll, goblin])
            let host = fixture.hostToken
            let (player, _) = try await table.join("Ana")
            let before = try await table.show(player).text
            #expect(!before.contains("troll") && !before.contains(troll) && !before.contains("w-east"), "fogged: \(before.prefix(300))")

            // One hex to the left of the map's edge: refused with the hexes counted.
            let refused = LiveClient.objects(try await table.live(
                host, send: [TableSocketTests.op(#"{"kind":"move","token":"troll","x":0,"y":4}"#, id: "off")], until: 5,
                stop: "OUT_OF_GRID"))
            let error = try #require(refused.first { $0["opId"] as? String == "off" }, "\(refused)")
            #expect(error["code"] as? String == "OUT_OF_GRID")
            #expect((error["message"] as? String)?.contains("7 hexes leave the 12×9 grid") == true, "\(error)")

            // To (4, 4): the troll's hexes reach column 3, which fog reveals: the player is shown it. On squares its
            // tile (4, 4) would decide, and that is under fog.
            let seq = try await table.seq(player)
            async let seen = table.live(player, since: seq, until: 20, stop: "\"troll\"")
            try await Task.sleep(for: .milliseconds(300))
            _ = try await table.live(host, send: [TableSocketTests.op(#"{"kind":"move","token":"troll","x":4,"y":4}"#)], until: 3)
            #expect(try await seen.contains { $0.contains("\"troll\"") }, "the troll reaches the player")
            #expect(try await table.show(player).text.contains(troll), "and its art is in their manifest")

            // The wall between (8, 4) and (9, 4) shows once (9, 4) is revealed.
            _ = try await table.live(host, send: [TableSocketTests.op(#"{"kind":"fog","reveal":[[9,4,1,1]]}"#)], until: 3)
            #expect(try await table.show(player).text.contains("w-east"), "the wall along a revealed cell's side")
        }
    }

    /// A map's first places are judged as moves are: by every hex of the art's footprint. Replacing the map with
    /// another orientation keeps each token's size (it is its art's, never reset): the troll still covers seven hexes.
    @Test func aMapsFirstPlacesAreJudgedByEveryHexAndAnOrientationChangeKeepsTheSizes() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let tokens = try Hoard(dataDirectory: fixture.directory).catalog.assets(kind: .token)
        let troll = try #require(tokens.first { $0.footprint.width == 3 }).digest.description
        let goblin = try #require(tokens.first { $0.footprint.width == 1 }).digest.description
        @Sendable func map(trollAt x: Int, _ y: Int, orientation: String = "flat") -> [String: Any] {
            var map = Self.map(troll: troll, goblin: goblin)
            map["grid"] = ["width": 12, "height": 9, "type": "hex", "orientation": orientation, "offset": "odd"]
            map["tokens"] = [
                ["id": "goblin", "asset": goblin, "x": 0, "y": 0, "number": 1], ["id": "troll", "asset": troll, "x": x, "y": y, "number": 2],
            ]
            return map
        }
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.live) { client in
            let host = fixture.hostToken
            // Its anchor (0, 4) is on the map, its ring is not; the goblin's one hex at (0, 0) is.
            let off = try await client.json(.post, "/v1/sessions", token: host, body: ["name": "Off", "map": map(trollAt: 0, 4)])
            #expect(off.status == .badRequest)
            let error = off.json["error"] as? [String: Any]
            #expect(error?["code"] as? String == "BAD_MAP")
            let message = error?["message"] as? String ?? ""
            #expect(message.contains("\"troll\" in tokens") && message.contains("7 hexes leave the 12×9 grid"), "\(message)")

            let created = try await client.json(.post, "/v1/sessions", token: host, body: ["name": "On", "map": map(trollAt: 1, 4)])
            try #require(created.status == .created, "\(created.json)")
            let id = try #require(created.json["id"] as? String)
            // The same map turned pointy: (1, 4) in pointy-odd has its ring on the map too; (1, 0) would not.
            let turned = try await client.json(.put, "/v1/sessions/\(id)/map", token: host, body: map(trollAt: 1, 4, orientation: "pointy"))
            #expect(turned.status == .ok, "\(turned.json)")
            let table = Table(
                client: client, fixture: fixture, port: try #require(client.port), session: id,
                code: try #require(created.json["code"] as? String), art: [troll, goblin])
            let refused = LiveClient.objects(try await table.live(
                host, send: [TableSocketTests.op(#"{"kind":"move","token":"troll","x":5,"y":0}"#, id: "top")], until: 5, stop: "OUT_OF_GRID"))
            let answer = try #require(refused.first { $0["opId"] as? String == "top" }, "\(refused)")
            #expect((answer["message"] as? String)?.contains("7 hexes") == true, "the troll keeps its seven hexes: \(answer)")
            let moved = LiveClient.objects(try await table.live(
                host, send: [TableSocketTests.op(#"{"kind":"move","token":"troll","x":5,"y":1}"#, id: "in")], until: 5, stop: "\"in\""))
            let done = moved.first { $0["opId"] as? String == "in" }
            #expect(done?["type"] as? String == "op" || done?["type"] as? String == "ack", "one row down it fits: \(moved)")
        }
    }
}
