import Foundation
import HoardCore
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// Line of sight over real sockets: a player behind a closed door never receives the ogre in the next room; the door
/// opens and the ogre arrives, art first; the player steps out of sight and the ogre leaves their view while the floor
/// and walls they saw stay explored.
@Suite("Vision over real sockets", .timeLimit(.minutes(3)))
struct VisionSocketTests {
    typealias Table = TableSocketTests.Table

    /// A 12 × 12 map split along x = 6 by a wall with a closed door at row 5; the hero (art 0, sight 20) at (1, 5), the
    /// ogre (art 1) at (11, 5) in the other room; vision on.
    static func map(_ art: [String]) -> [String: Any] {
        [
            "schema": "hoard.map/v2", "grid": ["width": 12, "height": 12], "vision": ["enabled": true],
            "drawing": [
                "walls": [
                    ["id": "north", "from": [6, 0], "to": [6, 5]], ["id": "south", "from": [6, 6], "to": [6, 12]],
                    ["id": "door", "from": [6, 5], "to": [6, 6], "door": true, "open": false],
                ],
                "strokes": [],
            ],
            "objects": [] as [Any],
            "tokens": [
                ["id": "hero", "asset": art[0], "x": 1, "y": 5, "number": 1, "sight": ["range": 20]],
                ["id": "ogre", "asset": art[1], "x": 11, "y": 5, "number": 2],
            ],
        ]
    }

    @Test func thePlayerBehindAClosedDoorNeverReceivesTheOgreUntilItOpensAndLosesItWhenStepsTakeItOutOfSight() async throws {
        try await TableSocketTests.with(map: Self.map) { table in
            let host = table.fixture.hostToken
            let (player, id) = try await table.join("Ana")
            _ = try await table.live(host, send: [TableSocketTests.op(#"{"kind":"assign","token":"hero","owner":"\#(id)"}"#)], until: 3)
            let hostView = try await table.show(host)
            let ogreBlobs = FogSocketTests.blobs(of: table.art[1], in: hostView.json)
            let view = try await table.show(player)
            #expect(view.text.contains("hero"))
            for secret in ["ogre", table.art[1]] { #expect(!view.text.contains(secret), "\(secret) is behind the door") }
            for blob in ogreBlobs { #expect(try await table.status("/v1/blobs/\(blob)", player) == .notFound) }

            // The door opens: the ogre's art, then what her view gained.
            let seq = Int64(try #require(view.json["seq"] as? Int))
            async let seen = table.live(player, since: seq, until: 20, stop: #""kind":"view""#)
            try await Task.sleep(for: .milliseconds(300))
            _ = try await table.live(host, send: [TableSocketTests.op(#"{"kind":"door","wall":"door","open":true}"#)], until: 3)
            let texts = try await seen
            let beforeArt = texts.prefix { !$0.contains(#""type":"assets""#) }
            #expect(!beforeArt.contains { $0.contains("ogre") || $0.contains(table.art[1]) }, "nothing names the ogre before its art")
            let events = LiveClient.objects(texts)
            let assets = try #require(events.firstIndex { $0["type"] as? String == "assets" }, "\(texts)")
            #expect(!events.contains { $0["type"] as? String == "snapshot" }, "not her whole view again")
            let gained = try #require(events.firstIndex { ($0["op"] as? [String: Any])?["kind"] as? String == "view" })
            #expect(assets < gained)
            let arrived = (events[gained]["op"] as? [String: Any])?["tokens"] as? [[String: Any]] ?? []
            #expect(arrived.map { $0["id"] as? String } == ["ogre"], "the ogre arrives")
            for blob in ogreBlobs { #expect(try await table.status("/v1/blobs/\(blob)", player) == .ok) }

            // The hero steps out of the doorway's line: the ogre is removed from Ana's view; what she explored stays.
            let moved = try await table.live(
                player, send: [TableSocketTests.op(#"{"kind":"move","token":"hero","x":1,"y":0}"#, id: "step")], until: 10, stop: "step")
            let lost = try #require(LiveClient.objects(moved).first { $0["opId"] as? String == "step" }, "\(moved)")
            let change = (lost["op"] as? [String: Any]) ?? [:]
            #expect(change["kind"] as? String == "view" && change["removed"] as? [String] == ["ogre"], "\(lost)")
            #expect((change["tokens"] as? [[String: Any]])?.first?["x"] as? Int == 1, "her hero's step is in the same event")
            let after = try await table.show(player)
            let map = (after.json["map"] as? [String: Any]) ?? [:]
            #expect(TableSocketTests.tokens(["map": map])["ogre"] == nil, "out of sight")
            #expect(!after.text.contains(table.art[1]), "its art is gone from her manifest too")
            let explored = ((map["vision"] as? [String: Any])?["explored"] as? [String: Any])?[id] as? [[Int]] ?? []
            #expect(explored.contains { $0[0] <= 11 && 11 < $0[0] + $0[2] && $0[1] <= 5 && 5 < $0[1] + $0[3] }, "\(explored)")
            #expect(try await table.show(player).text.contains("\"door\""), "the door she saw stays on her map")
            for blob in ogreBlobs { #expect(try await table.status("/v1/blobs/\(blob)", player) == .notFound) }

            // Back in the doorway's line: a move changes the fetch rights of those it concerns alone, and hers follow.
            _ = try await table.live(
                player, send: [TableSocketTests.op(#"{"kind":"move","token":"hero","x":1,"y":5}"#, id: "back")], until: 10, stop: "back")
            for blob in ogreBlobs { #expect(try await table.status("/v1/blobs/\(blob)", player) == .ok) }
        }
    }
}
