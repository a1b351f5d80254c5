import Foundation
import HoardCore
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// Map edits, fog of war and glimpses over real sockets: what a player is sent, what they may fetch, and the server's
/// clock ending a glimpse.
@Suite("Fog, map edits and glimpses", .timeLimit(.minutes(3)))
struct FogSocketTests {
    typealias Table = TableSocketTests.Table

    /// A 16 × 12 v2 map under fog, the top-left 4 × 4 revealed: the goblin (art 0) at (1, 1); the ogre (art 1) at
    /// (10, 10) and a chest (art 2) at (12, 5), both under fog; the floor painted with art 2 under fog only; a door at
    /// the top-left.
    static func foggy(_ art: [String]) -> [String: Any] {
        [
            "schema": "hoard.map/v2", "grid": ["width": 16, "height": 12],
            "background": ["palette": [art[2]], "rects": [[8, 8, 4, 4, 0]]],
            "fog": ["enabled": true, "revealed": [[0, 0, 4, 4]]],
            "drawing": ["walls": [["id": "d1", "from": [2, 0], "to": [2, 1], "door": true]], "strokes": []],
            "objects": [["id": "chest", "asset": art[2], "x": 12, "y": 5]],
            "tokens": [
                ["id": "goblin", "asset": art[0], "x": 1, "y": 1, "number": 1],
                ["id": "ogre", "asset": art[1], "x": 10, "y": 10, "number": 2],
            ],
        ]
    }

    static func op(_ text: String, id: String? = nil) -> String { TableSocketTests.op(text, id: id) }

    /// The blobs the host's manifest lists for an asset digest (its variants), and the digest itself.
    static func blobs(of digest: String, in view: [String: Any]) -> [String] {
        let assets = ((view["manifest"] as? [String: Any])?["assets"] as? [[String: Any]]) ?? []
        let variants = assets.first { $0["digest"] as? String == digest }?["variants"] as? [[String: Any]] ?? []
        return [digest] + variants.compactMap { $0["digest"] as? String }
    }

    @Test func whatFogCoversNeverReachesAPlayerUntilItIsRevealed() async throws {
        try await TableSocketTests.with(map: Self.foggy) { table in
            let host = table.fixture.hostToken
            let (player, _) = try await table.join("Ana")
            let hostView = try await table.show(host)
            #expect(hostView.text.contains("ogre") && hostView.text.contains("chest"), "the host sees everything")
            let hidden = Self.blobs(of: table.art[1], in: hostView.json) + Self.blobs(of: table.art[2], in: hostView.json)
            let view = try await table.show(player)
            for secret in ["ogre", "chest", table.art[1], table.art[2]] {
                #expect(!view.text.contains(secret), "\(secret) is under fog: not in the map, not in the manifest")
            }
            for blob in hidden { #expect(try await table.status("/v1/blobs/\(blob)", player) == .notFound) }
            let seq = Int64(try #require(view.json["seq"] as? Int))
            async let seen = table.live(player, since: seq, until: 20, stop: #""type":"snapshot""#)
            try await Task.sleep(for: .milliseconds(300))
            _ = try await table.live(
                host, send: [Self.op(#"{"kind":"move","token":"ogre","x":11,"y":11}"#), Self.op(#"{"kind":"fog","reveal":[[8,4,8,8]]}"#)],
                until: 4)
            let texts = try await seen
            let beforeReveal = texts.prefix { !$0.contains(#""type":"assets""#) }
            #expect(!beforeReveal.contains { $0.contains("ogre") || $0.contains(table.art[1]) }, "no event names it under fog")
            let events = LiveClient.objects(texts)
            let assets = try #require(events.firstIndex { $0["type"] as? String == "assets" }, "\(texts)")
            let snapshot = try #require(events.firstIndex { $0["type"] as? String == "snapshot" })
            #expect(assets < snapshot, "the manifest entries come before the view that shows them")
            let shown = (events[snapshot]["map"] as? [String: Any]) ?? [:]
            #expect(TableSocketTests.tokens(["map": shown])["ogre"]?["x"] as? Int == 11)
            #expect(((shown["background"] as? [String: Any])?["palette"] as? [String]) == [table.art[2]])
            for blob in hidden { #expect(try await table.status("/v1/blobs/\(blob)", player) == .ok, "revealed art can be fetched") }
        }
    }

    @Test func aMapWhoseRectanglesWouldPaintForeverIsRefused() async throws {
        try await TableSocketTests.with(map: Self.foggy) { table in
            var map = Self.foggy(table.art)
            map["background"] = ["palette": [table.art[2]], "rects": Array(repeating: [0, 0, 512, 512, 0], count: 17)]
            let refused = try await table.client.json(.post, "/v1/sessions", token: table.fixture.hostToken, body: ["name": "Forever", "map": map])
            #expect(refused.status == .badRequest)
            #expect(String(describing: refused.json).contains("at most 4194304"), "\(refused.json)")
            // Within the budget, on a grid the rectangles fit (the map door refuses rectangles off the grid).
            map["grid"] = ["width": 512, "height": 512]
            map["background"] = ["palette": [table.art[2]], "rects": Array(repeating: [0, 0, 512, 512, 0], count: 15)]
            let accepted = try await table.client.json(.post, "/v1/sessions", token: table.fixture.hostToken, body: ["name": "Big", "map": map])
            #expect(accepted.status == .created)
        }
    }

    @Test func paintReachesPlayersOnlyWhereTheySeeAndDoorsOpenWhenTheHostAllows() async throws {
        try await TableSocketTests.with(map: Self.foggy) { table in
            let host = table.fixture.hostToken
            let (player, _) = try await table.join("Ana")
            let seq = try await table.seq(player)
            async let seen = table.live(player, since: seq, until: 20, stop: "the-end")
            try await Task.sleep(for: .milliseconds(300))
            let refused = LiveClient.objects(
                try await table.live(player, send: [Self.op(#"{"kind":"door","wall":"d1","open":true}"#, id: "door")], until: 9, stop: "FORBIDDEN"))
            #expect(refused.contains { $0["opId"] as? String == "door" && $0["code"] as? String == "FORBIDDEN" }, "\(refused)")
            _ = try await table.live(
                host,
                send: [
                    Self.op(#"{"kind":"paint","rects":[[2,2,4,2]],"texture":"\#(table.art[0])"}"#),
                    Self.op(#"{"kind":"paint","rects":[[9,9,2,2]],"texture":null}"#),
                    Self.op(#"{"kind":"settings","playersOpenDoors":true}"#),
                ], until: 9, stop: "playersOpenDoors")
            let opened = LiveClient.objects(
                try await table.live(player, send: [Self.op(#"{"kind":"door","wall":"d1","open":true}"#, id: "door2")], until: 9, stop: "door2"))
            #expect(opened.contains { $0["opId"] as? String == "door2" && $0["type"] as? String == "op" }, "\(opened)")
            _ = try await table.live(host, send: [Self.op(#"{"kind":"message","text":"the-end"}"#)], until: 2)
            let texts = try await seen
            let ops = LiveClient.objects(texts).compactMap { $0["op"] as? [String: Any] }
            let paints = ops.filter { $0["kind"] as? String == "paint" }
            #expect(paints.count == 1, "the paint under fog is not sent: \(paints)")
            #expect((paints.first?["rects"] as? [[Int]]) == [[2, 2, 2, 1], [2, 3, 2, 1]], "clipped to what the player sees")
            let walls = (((try await table.show(player).json["map"] as? [String: Any])?["drawing"] as? [String: Any])?["walls"]
                as? [[String: Any]]) ?? []
            #expect(walls.first?["open"] as? Bool == true)
        }
    }

    @Test func aGlimpseEndsOnTheServersClockAndTheOwnerLearnsWhoSawIt() async throws {
        try await TableSocketTests.with(map: Self.foggy) { table in
            let host = table.fixture.hostToken
            let (ana, anaId) = try await table.join("Ana")
            let (bo, boId) = try await table.join("Bo")
            _ = try await table.live(host, send: [Self.op(#"{"kind":"assign","token":"goblin","owner":"\#(anaId)"}"#)], until: 3)
            _ = try await table.live(ana, send: [Self.op(#"{"kind":"move","token":"goblin","x":14,"y":10}"#)], until: 3)
            #expect(TableSocketTests.tokens(try await table.show(bo).json)["goblin"] == nil, "the goblin is under fog for Bo")
            let seq = try await table.seq(bo)
            async let boSaw = table.live(bo, since: seq, until: 30, stop: #""kind":"remove""#, timeout: .seconds(30))
            try await Task.sleep(for: .milliseconds(300))
            let taunt = try await table.live(
                ana, send: [Self.op(#"{"kind":"reveal","token":"goblin","to":["\#(boId)"],"seconds":1}"#)], until: 5, stop: #""kind":"seen""#)
            let seen = LiveClient.objects(taunt).compactMap { $0["op"] as? [String: Any] }.first { $0["kind"] as? String == "seen" }
            #expect(seen?["by"] as? [String] == [boId], "Ana is told who saw her token: \(taunt)")
            let events = LiveClient.objects(try await boSaw)
            let added = events.firstIndex { ($0["op"] as? [String: Any])?["kind"] as? String == "add" }
            let removed = events.firstIndex { ($0["op"] as? [String: Any])?["kind"] as? String == "remove" }
            #expect(added != nil && removed != nil && added! < removed!, "Bo saw it appear, then vanish: \(events)")
            #expect(removed.map { events[$0]["from"] as? String } == "server", "the server's clock ended it")
            #expect(TableSocketTests.tokens(try await table.show(bo).json)["goblin"] == nil, "after the glimpse Bo's view has no goblin")
            #expect(TableSocketTests.tokens(try await table.show(ana).json)["goblin"] != nil)
        }
    }
}
