import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import HoardTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Issue 34, over real sockets: the ways a player learned what is hidden from them, and a map that killed the server,
/// each closed as a class (the map door, one refusal rule, audiences for grabs, timed art enforced on read).
@Suite("The table keeps its secrets", .timeLimit(.minutes(3)))
struct TableSecretsTests {
    typealias Table = TableSocketTests.Table

    static func op(_ text: String, id: String? = nil) -> String { TableSocketTests.op(text, id: id) }

    /// Errors a socket was sent, by op id: (code, message with the entity's id taken out).
    static func refusals(_ texts: [String], ids: [String]) -> [String: [String]] {
        var answers: [String: [String]] = [:]
        for event in LiveClient.objects(texts) where event["type"] as? String == "error" {
            guard let opId = event["opId"] as? String else { continue }
            var message = event["message"] as? String ?? ""
            for id in ids { message = message.replacingOccurrences(of: id, with: "<id>") }
            answers[opId] = [event["code"] as? String ?? "", message]
        }
        return answers
    }

    /// A 10 × 10 map with fog on and nothing revealed.
    static func fogged(_ art: [String]) -> [String: Any] {
        [
            "schema": "hoard.map/v2", "grid": ["width": 10, "height": 10], "fog": ["enabled": true, "revealed": []],
            "drawing": ["walls": [], "strokes": []], "objects": [],
            "tokens": [["id": "goblin", "asset": art[0], "x": 1, "y": 1, "number": 1]],
        ]
    }

    // MARK: 1, 5, 6: the map door

    @Test func aMapThePlacesOfWhichLeaveTheGridIsRefusedAtTheDoorAndTheServerStaysUp() async throws {
        try await TableSocketTests.with(map: Self.fogged) { table in
            let host = table.fixture.hostToken
            var refused: [[String: Any]] = []
            // A wall corner off the grid (with a texture: it once killed the server at every start), a v1 tile off the
            // grid, a floor rectangle off the grid, a token off the grid, one id used by two kinds.
            var wall = Self.fogged(table.art)
            wall["drawing"] = ["walls": [["id": "w", "from": [0, 15], "to": [0, 16], "texture": table.art[1]]], "strokes": []]
            refused.append(wall)
            var tile = Self.fogged(table.art)
            tile["schema"] = "hoard.map/v1"
            tile["background"] = ["tiles": [["x": 10, "y": 2, "texture": table.art[2]]]]
            refused.append(tile)
            var rect = Self.fogged(table.art)
            rect["background"] = ["palette": [table.art[2]], "rects": [[8, 8, 4, 4, 0]]]
            refused.append(rect)
            var token = Self.fogged(table.art)
            token["tokens"] = [["id": "t", "asset": table.art[0], "x": 12, "y": 1, "number": 1]]
            refused.append(token)
            var twice = Self.fogged(table.art)
            twice["objects"] = [["id": "goblin", "asset": table.art[1], "x": 2, "y": 2]]
            refused.append(twice)
            for map in refused {
                let answer = try await table.client.json(.post, "/v1/sessions", token: host, body: ["name": "Bad", "map": map])
                #expect(answer.status == .badRequest, "\(answer.json)")
                #expect((answer.json["error"] as? [String: Any])?["code"] as? String == "BAD_MAP", "\(answer.json)")
                let replaced = try await table.client.json(.put, "/v1/sessions/\(table.session)/map", token: host, body: map)
                #expect(replaced.status == .badRequest)
            }
            let (player, _) = try await table.join("Ana")
            #expect(try await table.show(player).json["seq"] != nil, "the server is still up and the session still served")
        }
    }

    @Test func aPerTileFloorIsReadTileByTileSoFogCoversIt() async throws {
        try await TableSocketTests.with(map: Self.fogged) { table in
            var map = Self.fogged(table.art)
            map["background"] = ["tiles": [["x": 5, "y": 5, "texture": table.art[2]]]]
            let created = try await table.client.json(.post, "/v1/sessions", token: table.fixture.hostToken, body: ["name": "v2", "map": map])
            #expect(created.status == .created, "\(created.json)")
            let session = try #require(created.json["id"] as? String)
            let code = try #require(created.json["code"] as? String)
            let joined = try await table.client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "Ana"])
            let player = try #require(joined.json["participantToken"] as? String)
            let view = try await table.client.json(.get, "/v1/sessions/\(session)", token: player)
            #expect(!String(describing: view.json).contains(table.art[2]), "the fogged floor tile is not sent: \(view.json)")
            #expect(try await table.status("/v1/blobs/\(table.art[2])", player) == .notFound)
        }
    }

    @Test func aDiagonalWallIsJudgedByTheTilesItTouches() async throws {
        let map: @Sendable ([String]) -> [String: Any] = { art in
            [
                "schema": "hoard.map/v2", "grid": ["width": 20, "height": 10], "fog": ["enabled": true, "revealed": [[12, 6, 1, 1]]],
                "drawing": ["walls": [["id": "slant", "from": [12, 0], "to": [19, 7], "texture": art[1]]], "strokes": []],
                "objects": [], "tokens": [],
            ]
        }
        try await TableSocketTests.with(map: map) { table in
            let (player, _) = try await table.join("Ana")
            let view = try await table.show(player)
            #expect(!view.text.contains("slant") && !view.text.contains(table.art[1]), "the wall touches no revealed tile: \(view.text)")
            #expect(try await table.status("/v1/blobs/\(table.art[1])", player) == .notFound)
        }
    }

    @Test func aStoredMapThatNoLongerPassesTheDoorNeverStopsTheServer() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let art = Array(try fixture.assets("token").prefix(3))
        let first = try await buildApplication(fixture.configuration)
        let (good, bad) = try await first.test(.live) { client in
            var ids: [String] = []
            for name in ["Good", "Bad"] {
                let created = try await client.json(
                    .post, "/v1/sessions", token: fixture.hostToken, body: ["name": name, "map": Self.fogged(art)])
                ids.append(try #require(created.json["id"] as? String))
            }
            return (ids[0], ids[1])
        }
        // As an older server stored it: a textured wall off a fogged grid.
        var broken = Self.fogged(art)
        broken["drawing"] = ["walls": [["id": "w", "from": [0, 15], "to": [0, 16], "texture": art[1]]], "strokes": []]
        let hoard = try Hoard(dataDirectory: fixture.directory)
        let bytes = try CanonicalJSON.encode(try JSONValue(parsing: try JSONSerialization.data(withJSONObject: broken)))
        _ = try await hoard.write(.bytes(bytes)) { incoming in
            let blob = BlobRecord(digest: incoming.digest, size: incoming.size, mediaType: "application/vnd.hoard.map+json")
            let seq = try #require(try hoard.catalog.session(id: bad)).lastSeq + 1
            try hoard.catalog.setMap(session: bad, mapBlob: blob, reachable: [], baseSeq: seq)
            return blob
        }
        let second = try await buildApplication(fixture.configuration)
        try await second.test(.live) { client in
            #expect(try await client.json(.get, "/v1/sessions/\(good)", token: fixture.hostToken).status == .ok, "the others are served")
            let answer = try await client.json(.get, "/v1/sessions/\(bad)", token: fixture.hostToken)
            #expect(answer.status == .badRequest && (answer.json["error"] as? [String: Any])?["code"] as? String == "BAD_MAP", "\(answer.json)")
        }
    }

    // MARK: 2: one refusal rule

    @Test func refusalsReadTheSameForHiddenNotYoursAndAbsent() async throws {
        try await TableSocketTests.with { table in
            let host = table.fixture.hostToken
            let (ana, _) = try await table.join("Ana")
            let (bo, _) = try await table.join("Bo")
            _ = try await table.live(
                host, send: [Self.op(##"{"kind":"stroke","stroke":{"id":"gm-trap-notes","layer":"host","color":"#ff0000","width":0.5,"points":[[1,1],[2,2]]}}"##)],
                until: 3)
            _ = try await table.live(
                bo, send: [Self.op(##"{"kind":"stroke","stroke":{"id":"bo-1","color":"#00ff00","width":0.5,"points":[[1,1],[2,2]]}}"##)], until: 3)
            let offGrid = { (id: String, opId: String) in
                Self.op(##"{"kind":"stroke","stroke":{"id":"\##(id)","color":"#0000ff","width":0.5,"points":[[1,1],[40,2]]}}"##, id: opId)
            }
            let texts = try await table.live(
                ana,
                send: [
                    offGrid("gm-trap-notes", "s-host"), offGrid("bo-1", "s-bo"), offGrid("free-id", "s-free"),
                    Self.op(#"{"kind":"move","token":"ogre","x":4,"y":4}"#, id: "m-hidden"),
                    Self.op(#"{"kind":"move","token":"wolf","x":4,"y":4}"#, id: "m-notyours"),
                    Self.op(#"{"kind":"move","token":"nobody","x":4,"y":4}"#, id: "m-absent"),
                    Self.op(#"{"kind":"erase","stroke":"gm-trap-notes"}"#, id: "e-hidden"),
                    Self.op(#"{"kind":"erase","stroke":"nothing"}"#, id: "e-absent"),
                    #"{"type":"grab","entity":"ogre"}"#, #"{"type":"grab","entity":"nobody"}"#,
                ], until: 14, stop: "UNKNOWN_ENTITY\",\"message\":\"no entity nobody")
            let answers = Self.refusals(texts, ids: ["gm-trap-notes", "bo-1", "free-id", "ogre", "wolf", "nobody", "nothing"])
            #expect(answers["s-host"] == answers["s-free"] && answers["s-bo"] == answers["s-free"], "\(answers)")
            #expect(answers["s-free"]?.first == "OUT_OF_GRID")
            #expect(answers["m-hidden"] == answers["m-absent"] && answers["m-notyours"] == answers["m-absent"], "\(answers)")
            #expect(answers["e-hidden"] == answers["e-absent"] && answers["e-absent"] != nil, "\(answers)")
            let grabs = LiveClient.objects(texts).filter { $0["type"] as? String == "error" && $0["opId"] == nil }
                .map { ($0["message"] as? String ?? "").replacingOccurrences(of: "ogre", with: "<id>").replacingOccurrences(of: "nobody", with: "<id>") }
            #expect(grabs.count == 2 && grabs[0] == grabs[1], "a hidden id is grabbed like an absent one: \(texts)")
            // Ana's stroke under a hidden stroke's id is hers, kept in her own namespace.
            let drawn = LiveClient.objects(
                try await table.live(
                    ana, send: [Self.op(##"{"kind":"stroke","stroke":{"id":"gm-trap-notes","color":"#0000ff","width":0.5,"points":[[1,1],[2,2]]}}"##)],
                    until: 3, stop: "p:"))
            #expect(drawn.contains { $0["type"] as? String == "op" }, "\(drawn)")
        }
    }

    // MARK: 3: grabs

    @Test func grabsOfHiddenThingsReachOnlyThoseWhoSeeThem() async throws {
        try await TableSocketTests.with { table in
            let host = table.fixture.hostToken
            let (player, _) = try await table.join("Ana")
            let seq = try await table.seq(player)
            async let seen = table.live(player, since: seq, until: 30, stop: "the-end")
            try await Task.sleep(for: .milliseconds(300))
            _ = try await table.live(
                host,
                send: [
                    #"{"type":"grab","entity":"ogre"}"#, #"{"type":"release","entity":"ogre"}"#, #"{"type":"grab","entity":"wolf"}"#,
                    Self.op(#"{"kind":"message","text":"the-end"}"#),
                ], until: 8, stop: "the-end")
            let texts = try await seen
            #expect(!texts.contains { $0.contains("ogre") }, "\(texts)")
            #expect(texts.contains { $0.contains("wolf") }, "a grab of what the player sees still reaches them: \(texts)")
            let replay = try await table.live(player, since: seq, until: 30, stop: "the-end")
            #expect(!replay.contains { $0.contains("ogre") }, "nor in a replay: \(replay)")
        }
    }

    // MARK: 10, 11: what events and cached views name

    @Test func aLayerOpAnnouncesOnlyTheArtItShows() async throws {
        let map: @Sendable ([String]) -> [String: Any] = { art in
            [
                "schema": "hoard.map/v2", "grid": ["width": 16, "height": 12],
                "drawing": ["walls": [], "strokes": [], "layers": ["monsters": []]], "objects": [],
                "tokens": [
                    ["id": "imp", "asset": art[0], "x": 1, "y": 1, "number": 1, "layer": "monsters"],
                    ["id": "ogre", "asset": art[1], "x": 2, "y": 2, "number": 2, "layer": "monsters", "hidden": true],
                ],
            ]
        }
        try await TableSocketTests.with(map: map) { table in
            let (player, _) = try await table.join("Ana")
            let seq = try await table.seq(player)
            async let seen = table.live(player, since: seq, until: 10, stop: "snapshot")
            try await Task.sleep(for: .milliseconds(300))
            _ = try await table.live(table.fixture.hostToken, send: [Self.op(#"{"kind":"layer","layer":"monsters","visibleTo":"*"}"#)], until: 3)
            let texts = try await seen
            #expect(texts.contains { $0.contains("\"assets\"") && $0.contains(table.art[0]) }, "\(texts)")
            #expect(!texts.contains { $0.contains(table.art[1]) }, "the hidden token's art is not announced: \(texts)")
        }
    }

    @Test func playersViewsNeverShareACacheEntryWhateverTheirStrokeIds() async throws {
        try await TableSocketTests.with { table in
            let host = table.fixture.hostToken
            let (ana, anaId) = try await table.join("Ana")
            let (bo, boId) = try await table.join("Bo")
            var map = TableSocketTests.map(table.art)
            let stroke = { (layer: String, id: String?, color: String) -> [String: Any] in
                var stroke: [String: Any] = ["layer": layer, "color": color, "width": 0.5, "points": [[1, 1], [2, 2]]]
                if let id { stroke["id"] = id }
                return stroke
            }
            map["drawing"] = [
                "walls": [],
                "strokes": [
                    stroke("p:\(anaId)", nil, "#aa0001"), stroke("p:\(boId)", nil, "#bb0001"), stroke("p:\(anaId)", "a1", "#aa0002"),
                    stroke("p:\(anaId)", "a2", "#aa0003"), stroke("p:\(boId)", "a1\u{0}s:a2", "#bb0002"),
                ],
            ]
            #expect(try await table.client.json(.put, "/v1/sessions/\(table.session)/map", token: host, body: map).status == .ok)
            let anaView = try await table.show(ana).text
            let boView = try await table.show(bo).text
            #expect(anaView.contains("#aa0001") && !anaView.contains("#bb0001") && !anaView.contains("#bb0002"), "\(anaView)")
            #expect(boView.contains("#bb0001") && !boView.contains("#aa0001") && !boView.contains("#aa0002"), "\(boView)")
        }
    }

    // MARK: 9: removal is a barrier

    @Test func nothingARemovedParticipantSentIsAppliedAfterTheRemoval() async throws {
        try await TableSocketTests.with { table in
            let host = table.fixture.hostToken
            let (ana, anaId) = try await table.join("Ana")
            let seq = try await table.seq(host)
            async let hostSaw = table.live(host, since: seq, until: 400, stop: "the-end", timeout: .seconds(30))
            let strokes = (0..<150).map { index in
                Self.op(##"{"kind":"stroke","stroke":{"id":"r\##(index)","color":"#0000ff","width":0.5,"points":[[1,1],[2,2]]}}"##)
            }
            async let flood = table.live(ana, send: strokes, until: 400, timeout: .seconds(5))
            // Removed while her ops are flowing: as soon as her socket is registered (she then has left at the removal).
            for _ in 0..<1000 {
                let participants = try await table.show(host).json["participants"] as? [[String: Any]] ?? []
                if participants.contains(where: { $0["id"] as? String == anaId && $0["connected"] as? String == "yes" }) { break }
                try await Task.sleep(for: .milliseconds(2))
            }
            let removed = try await table.client.json(.delete, "/v1/sessions/\(table.session)/participants/\(anaId)", token: host)
            #expect(removed.status == .noContent)
            _ = try await flood
            _ = try await table.live(host, send: [Self.op(#"{"kind":"message","text":"the-end"}"#)], until: 3)
            let events = LiveClient.objects(try await hostSaw)
            let left = try #require(
                events.firstIndex { $0["type"] as? String == "presence" && $0["event"] as? String == "left" }, "\(events.count) events")
            let after = events[left...].filter { $0["from"] as? String == anaId }
            #expect(after.isEmpty, "\(after.count) of Ana's ops applied after she left")
        }
    }

    // MARK: 7: timed art

    @Test func aGlimpsesArtIsUnreadableOnceItEndsEvenWithNobodyConnected() async throws {
        try await TableSocketTests.with(map: FogSocketTests.foggy) { table in
            let host = table.fixture.hostToken
            let (bo, boId) = try await table.join("Bo")
            // Bo is at the table while the ogre is shown to him; then everyone leaves before it ends.
            async let boSaw = table.live(bo, until: 20, stop: "ogre", timeout: .seconds(10))
            try await Task.sleep(for: .milliseconds(300))
            _ = try await table.live(
                host, send: [Self.op(#"{"kind":"reveal","token":"ogre","to":["\#(boId)"],"seconds":1}"#)], until: 3, stop: "reveal")
            _ = try await boSaw
            try await Task.sleep(for: .milliseconds(3_000))
            #expect(try await table.status("/v1/blobs/\(table.art[1])", bo) == .notFound, "the glimpse ended two seconds ago")
            #expect(try await table.status("/v1/assets/\(table.art[1])", bo) == .notFound)
        }
    }

    @Test func aGlimpseLoggedBeforeARestartEndsAtItsOwnEndNotLater() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let art = Array(try fixture.assets("token").prefix(3))
        let first = try await buildApplication(fixture.configuration)
        let (session, bo, started) = try await first.test(.live) { client in
            let created = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Crypt", "map": FogSocketTests.foggy(art)])
            let session = try #require(created.json["id"] as? String)
            let code = try #require(created.json["code"] as? String)
            let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "Bo"])
            let bo = try #require(joined.json["participantToken"] as? String)
            let boId = try #require(joined.json["participantId"] as? String)
            let started = Date()
            _ = try await LiveClient.exchange(
                port: try #require(client.port), session: session, token: fixture.hostToken,
                send: [Self.op(#"{"kind":"reveal","token":"ogre","to":["\#(boId)"],"seconds":3}"#)], until: 3, stop: "reveal")
            return (session, bo, started)
        }
        let second = try await buildApplication(fixture.configuration)
        try await second.test(.live) { client in
            _ = try await client.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken)
            try await Task.sleep(for: .seconds(max(0, 3.6 - Date().timeIntervalSince(started))))
            let status = try await client.execute(uri: "/v1/blobs/\(art[1])", method: .get, headers: [.authorization: "Bearer \(bo)"]) { $0.status }
            #expect(status == .notFound, "the glimpse ended at its own end, 3 s after it began, restart or not")
        }
    }

    /// A second server on the same data (a restart after a crash, or another replica) loads a glimpse it did not send
    /// while the first is still up, its timer alive: it ends the glimpse's art at the end logged with it, not a span
    /// after it loaded it.
    @Test func aServerThatLoadsAGlimpseItDidNotSendEndsItAtItsLoggedEnd() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let art = Array(try fixture.assets("token").prefix(3))
        let first = try await buildApplication(fixture.configuration)
        try await first.test(.live) { client in
            let created = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Crypt", "map": FogSocketTests.foggy(art)])
            let session = try #require(created.json["id"] as? String)
            let code = try #require(created.json["code"] as? String)
            let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "Bo"])
            let bo = try #require(joined.json["participantToken"] as? String)
            let boId = try #require(joined.json["participantId"] as? String)
            let port = try #require(client.port)
            // Bo stays at the table on the first server (no fold: the glimpse stays in the log after the base).
            async let stays = LiveClient.exchange(port: port, session: session, token: bo, until: 1000, stop: "never", timeout: .seconds(6))
            try await Task.sleep(for: .milliseconds(300))
            let started = Date()
            _ = try await LiveClient.exchange(
                port: port, session: session, token: fixture.hostToken,
                send: [Self.op(#"{"kind":"reveal","token":"ogre","to":["\#(boId)"],"seconds":2}"#)], until: 3, stop: "reveal")
            let second = try await buildApplication(fixture.configuration)
            try await second.test(.live) { other in
                _ = try await other.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken)
                try await Task.sleep(for: .seconds(max(0, 2.8 - Date().timeIntervalSince(started))))
                let status = try await other.execute(uri: "/v1/blobs/\(art[1])", method: .get, headers: [.authorization: "Bearer \(bo)"]) {
                    $0.status
                }
                #expect(status == .notFound, "the glimpse's art ends at its logged end on the server that loaded it too")
            }
            _ = try await stays
        }
    }

    // MARK: 4: uploads

    static func picture() -> [UInt8] {
        let chunk = PNGBytes.chunk
        let header = bigEndian(64) + bigEndian(64) + [8, 6, 0, 0, 0]
        let noise = (0..<16).map { _ in UInt8.random(in: 0...255) }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("hoRd", noise) + chunk("IEND", [])
    }

    @Test func anotherPlayersPictureUploadedAgainAnswersAsNewAndTakesNothingAway() async throws {
        try await TableSocketTests.with { table in
            let (ana, _) = try await table.join("Ana")
            let (bo, _) = try await table.join("Bo")
            let picture = Self.picture()
            let first = try await table.client.uploadPicture(picture, token: ana)
            #expect(first.status == .created)
            let digest = try #require(first.json["digest"] as? String)
            let again = try await table.client.uploadPicture(picture, token: bo)
            #expect(again.status == .created, "as for a picture nobody uploaded")
            #expect(try await table.client.uploadPicture(Self.picture(), token: bo).status == .created)
            #expect(try await table.client.fetch("/v1/uploads/\(digest)", token: ana).status == .ok, "Ana keeps her picture")
            #expect(try await table.client.fetch("/v1/uploads/\(digest)", token: bo).status == .ok)
            let forgotten = try await table.client.execute(uri: "/v1/uploads/\(digest)", method: .delete, headers: [.authorization: "Bearer \(bo)"]) {
                $0.status
            }
            #expect(forgotten == .noContent)
            #expect(try await table.client.fetch("/v1/uploads/\(digest)", token: ana).status == .ok, "Bo's delete takes nothing of Ana's")
            #expect(try await table.client.fetch("/v1/uploads/\(digest)", token: bo).status == .notFound)
            // Nor Ana's delete anything of Bo's: the picture passes to him.
            #expect(try await table.client.uploadPicture(picture, token: bo).status == .created)
            let anaForgets = try await table.client.execute(uri: "/v1/uploads/\(digest)", method: .delete, headers: [.authorization: "Bearer \(ana)"]) {
                $0.status
            }
            #expect(anaForgets == .noContent)
            #expect(try await table.client.fetch("/v1/uploads/\(digest)", token: ana).status == .notFound)
            #expect(try await table.client.fetch("/v1/uploads/\(digest)", token: bo).status == .ok, "Ana's delete takes nothing of Bo's")
        }
    }

    /// At its quota a group refuses another player's copy of a picture as it refuses a new one: the quota is no oracle.
    @Test func aFullGroupRefusesAnotherPlayersPictureAsItRefusesANewOne() async throws {
        try await TableSocketTests.with { table in
            let (ana, _) = try await table.join("Ana")
            let (bo, _) = try await table.join("Bo")
            let picture = Self.picture()
            #expect(try await table.client.uploadPicture(picture, token: ana).status == .created)
            let catalog = try Hoard(dataDirectory: table.fixture.directory).catalog
            let group = try #require(try catalog.groups().first { $0.name == "table" }?.id)
            let used = try #require(try catalog.quota(groupId: group)?.used)
            try catalog.setQuota(used, group: "table")
            let new = try await table.client.uploadPicture(Self.picture(), token: bo)
            let copy = try await table.client.uploadPicture(picture, token: bo)
            #expect(new.status.code == 507 && copy.status == new.status, "\(new.status) \(copy.status)")
            #expect(try await table.client.uploadPicture(picture, token: ana).status == .ok, "Ana's own picture again stores nothing")
        }
    }
}
