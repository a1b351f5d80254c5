import Foundation
import Testing

@testable import HoardCore
import HoardTestSupport

/// A digest whose bytes are all `byte`, as a JSON string.
private func art(_ byte: UInt8) -> JSONValue {
    .string(Digest(bytes: [UInt8](repeating: byte, count: 32))!.description)
}

private func token(_ id: String, x: Int = 1, y: Int = 1, asset: UInt8 = 1, owner: String? = nil, hidden: Bool = false) -> JSONValue {
    var token: [String: JSONValue] = [
        "id": .string(id), "asset": art(asset), "x": .number(Double(x)), "y": .number(Double(y)), "number": .number(1),
    ]
    if let owner { token["owner"] = .string(owner) }
    if hidden { token["hidden"] = .bool(true) }
    return .object(token)
}

/// A 16 × 12 map: floor art 9, a door object (art 8), goblin (art 1) of Ana's, a hidden ogre (art 2), a wolf (art 3).
private func map(tokens: [JSONValue]? = nil) -> JSONValue {
    .object([
        "schema": .string("hoard.map/v1"),
        "grid": .object(["width": .number(16), "height": .number(12)]),
        "background": .object(["texture": art(9), "tiles": .array([])]),
        "drawing": .object(["walls": .array([]), "strokes": .array([])]),
        "objects": .array([.object(["id": .string("door"), "asset": art(8), "x": .number(3), "y": .number(0)])]),
        "tokens": .array(tokens ?? [token("goblin", owner: "ana"), token("ogre", asset: 2, hidden: true), token("wolf", asset: 3)]),
    ])
}

private func op(_ text: String) throws -> TableOp {
    try TableOp(json: JSONValue(parsing: Data(text.utf8)))
}

private func ids(_ map: JSONValue) -> [String] {
    guard case .array(let tokens)? = map["tokens"] else { return [] }
    return tokens.compactMap { $0["id"]?.stringValue }
}

@Suite struct TableOpTests {
    @Test func everyKindReadsAndWritesBackTheSameOp() throws {
        let ops = [
            #"{"kind":"move","token":"t1","x":5,"y":6}"#,
            #"{"kind":"add","token":{"asset":"\#(art(1).stringValue!)","id":"t2","number":3,"x":0,"y":0}}"#,
            #"{"kind":"add","object":{"asset":"\#(art(1).stringValue!)","id":"o1","rotation":90,"x":0,"y":0}}"#,
            #"{"kind":"remove","token":"t1"}"#, #"{"kind":"remove","object":"o1"}"#,
            #"{"kind":"set","label":"Grim","markers":["poisoned"],"token":"t1"}"#,
            #"{"kind":"assign","owner":"p1","token":"t1"}"#, #"{"kind":"assign","owner":null,"token":"t1"}"#,
            #"{"kind":"hide","token":"t1"}"#, #"{"kind":"reveal","token":"t1"}"#,
            ##"{"kind":"stroke","stroke":{"color":"#ff0000","id":"s1","points":[[0,0],[1.5,2]],"width":0.2}}"##,
            #"{"kind":"erase","stroke":"s1"}"#, #"{"kind":"ping","x":1.5,"y":2}"#,
            #"{"kind":"message","text":"boo","to":["p1","host"]}"#, #"{"kind":"custom","payload":{"dice":[6,6]}}"#,
            #"{"blind":true,"formula":"4d6kh3+2","kind":"roll","label":"Stealth","to":["p1"]}"#,
            #"{"kind":"layer","layer":"p:ana","visibleTo":"*"}"#,
            #"{"kind":"reveal","seconds":5,"to":["p1"],"token":"t1"}"#, #"{"from":["p1"],"kind":"hide","token":"t1"}"#,
            #"{"by":["p1"],"kind":"seen","token":"t1"}"#,
            #"{"explored":[[0,0,2,1]],"floor":{"palette":[],"rects":[[0,0,2,1,-1]]},"kind":"view","objects":[],"removed":["o1"],"seen":[[0,0,1,1]],"tokens":[{"asset":"\#(art(1).stringValue!)","id":"t2","number":3,"x":0,"y":0}],"walls":[]}"#,
            #"{"kind":"paint","rects":[[0,0,3,2],[5,5,1,1]],"texture":"\#(art(1).stringValue!)"}"#,
            #"{"kind":"paint","rects":[[0,0,1,1]],"texture":null}"#,
            #"{"add":{"door":true,"from":[2,0],"id":"d1","open":false,"to":[2,1]},"kind":"wall"}"#, #"{"kind":"wall","remove":"d1"}"#,
            #"{"kind":"door","open":true,"wall":"d1"}"#, #"{"enabled":true,"kind":"fog"}"#, #"{"kind":"fog","reveal":[[0,0,4,4]]}"#,
            #"{"cover":[[1,1,1,1]],"kind":"fog"}"#, #"{"kind":"settings","playersOpenDoors":true}"#,
            #"{"at":[2,3],"channel":"rain","kind":"play","loop":true,"offset":4.5,"radius":3,"serverTime":1000,"track":"\#(art(1).stringValue!)","volume":0.5}"#,
            #"{"channel":"music","kind":"play","to":["host"]}"#, #"{"channel":"music","kind":"pause"}"#, #"{"channel":"music","kind":"stop"}"#,
            #"{"channel":"music","kind":"volume","volume":0.25}"#,
            #"{"asset":"\#(art(1).stringValue!)","by":"p1","kind":"dice"}"#, #"{"asset":null,"kind":"dice"}"#,
            #"{"enabled":true,"kind":"vision"}"#, #"{"forget":["p1"],"kind":"vision"}"#,
            #"{"kind":"set","sight":{"range":8,"sharedWith":["p2"]},"token":"t1"}"#,
        ]
        for text in ops {
            let parsed = try op(text)
            #expect(String(decoding: try CanonicalJSON.encode(parsed.json), as: UTF8.self) == text)
            #expect(try TableOp(json: parsed.json) == parsed)
        }
        #expect(Set(ops.map { try! op($0).kind }) == Set(TableOp.kinds))
    }

    @Test func anOpThatIsNotOneIsRefusedWithWhatToFix() throws {
        let refusals: [(String, String)] = [
            (#"{"kind":"fly","token":"t1"}"#, "unknown op kind 'fly'"),
            (#"{"token":"t1"}"#, "needs a \"kind\""),
            (#"{"kind":"move","token":"t1","x":5.5,"y":6}"#, "\"x\": a tile"),
            (#"{"kind":"move","token":"t1","x":5,"y":6,"z":1}"#, "no field 'z'"),
            (#"{"kind":"move","token":"","x":5,"y":6}"#, "a string of 1 to 64"),
            (#"{"kind":"add","token":{"id":"t2","asset":"sha256:nope","x":0,"y":0,"number":1}}"#, "a digest"),
            (#"{"kind":"add","token":{"id":"t2","asset":"\#(art(1).stringValue!)","x":0,"y":0}}"#, "needs a \"number\""),
            (#"{"kind":"set","token":"t1"}"#, "give at least one"),
            (#"{"kind":"set","token":"t1","number":1000}"#, "an integer from 0 to 999"),
            (##"{"kind":"stroke","stroke":{"id":"s","color":"red","width":1,"points":[[0,0],[1,1]]}}"##, "#rrggbb"),
            (##"{"kind":"stroke","stroke":{"id":"s","color":"#ffffff","width":1,"points":[[0,0]]}}"##, "2 to 10000 points"),
            (#"{"kind":"layer","layer":"host","visibleTo":{"except":["p1"]}}"#, "\"visibleTo\""),
            (#"{"kind":"reveal","token":"t1","to":["p1"],"seconds":601}"#, "from 1 to 600"),
            (#"{"kind":"reveal","token":"t1","to":[],"seconds":5}"#, "1 to 64 participant ids"),
            (#"{"kind":"paint","rects":[[0,0,0,1]],"texture":null}"#, "sides of 1 to 512"),
            (#"{"kind":"paint","rects":[],"texture":null}"#, "1 to 4096 rectangles"),
            (#"{"kind":"wall","add":{"id":"w","from":[0,0],"to":[0,513]}}"#, "a grid corner"),
            (#"{"kind":"wall","add":{"id":"w","from":[0,0],"to":[0,1]},"remove":"w"}"#, "\"add\" (a wall) or \"remove\""),
            (#"{"kind":"door","wall":"d1","open":"yes"}"#, "true or false"),
            (#"{"kind":"fog","reveal":[[0,0,1,1]],"cover":[[0,0,1,1]]}"#, "one of \"enabled\""),
            (#"{"kind":"paint","rects":[[0,0,512,512],[0,0,1,1]],"texture":null}"#, "covers more than 262144 tiles"),
        ]
        for (text, message) in refusals {
            #expect { try op(text) } throws: { error in
                (error as? TableError)?.code == .badOp && (error as? TableError)?.message.contains(message) == true
            }
        }
    }

    @Test func aStrokeOfTenThousandPointsIsAnOp() throws {
        let points = (0..<10_000).map { JSONValue.array([.number(Double($0 % 500) + 0.123456789), .number(511.999999999)]) }
        let stroke = JSONValue.object([
            "kind": .string("stroke"),
            "stroke": .object([
                "id": .string("long"), "color": .string("#00ff00"), "width": .number(0.1), "points": .array(points),
            ]),
        ])
        let parsed = try TableOp(json: stroke)
        // What the schema allows fits the live channel's message limit (1 MiB, LiveRoutes.maxMessage).
        #expect(try CanonicalJSON.encode(JSONValue.object(["type": .string("op"), "op": parsed.json])).count < 1 << 20)
    }
}

@Suite struct TableTests {
    /// Each chooses their own dice: kept in the map's `dice`, seen by everyone (their art too), cleared with null; a
    /// player choosing for someone else is refused and changes nothing.
    @Test func eachChoosesTheirOwnDiceAndEveryoneSeesThem() throws {
        var table = Table(map: map())
        let ember = try #require(Digest(art(7).stringValue!))
        let change = try table.apply(.chooseDice(by: "ana", asset: ember), by: .participant("ana"))
        #expect(change.views == nil && change.art.first?.digests == [ember])
        _ = try table.apply(.chooseDice(by: "host:1", asset: ember), by: .host)
        #expect(table.chosenDice == ["ana": ember, "host:1": ember])
        #expect(table.view(for: .participant("bo"))["dice"]?["ana"] == art(7))
        #expect(table.artAudiences()[ember] == .everyone)
        #expect { try table.apply(.chooseDice(by: "bo", asset: nil), by: .participant("ana")) } throws: { ($0 as? TableError)?.code == .forbidden }
        #expect { try table.apply(.chooseDice(by: "", asset: ember), by: .host) } throws: { ($0 as? TableError)?.code == .forbidden }
        _ = try table.apply(.chooseDice(by: "ana", asset: nil), by: .participant("ana"))
        #expect(table.chosenDice == ["host:1": ember])
        #expect((try? MapCheck.admitted(table.map).get()) != nil, "a map with its dice passes the door")
        #expect(MapCheck.problem(in: .object(["dice": .object(["ana": .string("red")])]))?.contains("dice digests") == true)
    }

    @Test func aMapIsKeptAsItCameUntilAnOpChangesIt() throws {
        let document = map()
        let table = Table(map: document)
        #expect(try CanonicalJSON.encode(table.map) == CanonicalJSON.encode(document))
        let opaque = Table(map: .array([art(1)]))
        #expect(opaque.isOpaque && opaque.map == .array([art(1)]))
        var other = opaque
        #expect { try other.apply(.move(token: "t", x: 1, y: 1), by: .host) } throws: { ($0 as? TableError)?.code == .badOp }
    }

    @Test func theHostMovesAnythingAndPlayersOnlyTheirOwn() throws {
        var table = Table(map: map())
        _ = try table.apply(.move(token: "wolf", x: 4, y: 5), by: .host)
        _ = try table.apply(.move(token: "goblin", x: 2, y: 2), by: .participant("ana"))
        // Not theirs reads like absent and hidden (one refusal).
        #expect { try table.apply(.move(token: "wolf", x: 1, y: 1), by: .participant("ana")) } throws: {
            ($0 as? TableError) == Table.refusal("token", "wolf", of: "ana")
        }
        #expect { try table.apply(.move(token: "goblin", x: 16, y: 1), by: .participant("ana")) } throws: {
            ($0 as? TableError)?.code == .outOfGrid
        }
        // A hidden token is unknown to a player, not forbidden: the refusal reveals nothing.
        #expect { try table.apply(.move(token: "ogre", x: 1, y: 1), by: .participant("ana")) } throws: {
            ($0 as? TableError)?.code == .unknownEntity
        }
        #expect { try table.apply(.hide(token: "goblin"), by: .participant("ana")) } throws: { ($0 as? TableError)?.code == .forbidden }
        let tokens = try #require(table.map["tokens"])
        guard case .array(let list) = tokens else { Issue.record("no tokens"); return }
        #expect(list.map { [$0["x"], $0["y"]] } == [[.number(2), .number(2)], [.number(1), .number(1)], [.number(4), .number(5)]])
    }

    @Test func aHiddenTokenIsInNoPlayersViewButItsOwnersAndIsSentWhenRevealed() throws {
        var table = Table(map: map())
        #expect(ids(table.view(for: .host)) == ["goblin", "ogre", "wolf"])
        #expect(ids(table.view(for: .participant("bo"))) == ["goblin", "wolf"])
        let ogre = Digest(art(2).stringValue!)!
        #expect(table.artAudiences()[ogre] == .nobody)
        #expect(table.artAudiences()[Digest(art(9).stringValue!)!] == .everyone, "the floor is everyone's")
        let moved = try table.apply(.move(token: "ogre", x: 3, y: 3), by: .host)
        #expect(moved.views?.isEmpty == true, "no player is told of a hidden token's move")
        _ = try table.apply(.assign(token: "ogre", owner: "bo"), by: .host)
        #expect(ids(table.view(for: .participant("bo"))) == ["goblin", "ogre", "wolf"], "the owner sees their hidden token")
        #expect(table.artAudiences()[ogre] == .only(["bo"]))
        let revealed = try table.apply(.reveal(token: "ogre"), by: .host)
        let views = try #require(revealed.views)
        #expect(views.count == 2)
        #expect(views.contains { $0.audience == .only(["bo"]) && $0.op == .reveal(token: "ogre") })
        #expect(
            views.contains { view in
                if view.audience == Audience.everyone.subtracting(.only(["bo"])), case .add(.token, let entity)? = view.op {
                    entity["id"] == .string("ogre")
                } else {
                    false
                }
            })
        #expect(
            revealed.art.map(\.audience) == [Audience.everyone.subtracting(.only(["bo"]))], "its art is announced to those who now see it")
        #expect(table.artAudiences()[ogre] == .everyone)
        _ = try table.apply(.hide(token: "ogre"), by: .host)
        _ = try table.apply(.remove(.token, id: "ogre"), by: .host)
        #expect(table.artAudiences()[ogre] == nil, "art the table no longer shows is in nobody's view")
    }

    @Test func playersDrawOnTheirOwnLayerWhichTheHostMayShare() throws {
        var table = Table(map: map())
        let stroke = try op(##"{"kind":"stroke","stroke":{"color":"#ff0000","id":"s1","points":[[0,0],[1,1]],"width":0.5}}"##)
        let drawn = try table.apply(stroke, by: .participant("ana"))
        guard case .stroke(let kept) = drawn.op else { Issue.record("not a stroke"); return }
        #expect(kept["layer"] == .string("p:ana"))
        #expect(drawn.views?.map(\.audience) == [.only(["ana"])])
        let foreign = try op(
            ##"{"kind":"stroke","stroke":{"color":"#ff0000","id":"s2","layer":"table","points":[[0,0],[1,1]],"width":0.5}}"##)
        #expect { try table.apply(foreign, by: .participant("ana")) } throws: { ($0 as? TableError)?.code == .forbidden }
        #expect { try table.apply(.erase(stroke: "s1"), by: .participant("bo")) } throws: { ($0 as? TableError)?.code == .unknownEntity }
        let shared = try table.apply(.layer(name: "p:ana", visibleTo: .everyone), by: .host)
        #expect(shared.views?.first?.op == nil && shared.views?.first?.audience == Audience.everyone.subtracting(.only(["ana"])))
        guard case .array(let strokes)? = table.view(for: .participant("bo"))["drawing"]?["strokes"] else {
            Issue.record("no strokes"); return
        }
        #expect(strokes.count == 1)
        _ = try table.apply(.erase(stroke: "s1"), by: .participant("ana"))
    }

    @Test func aMessageReachesOnlyThoseItNames() throws {
        var table = Table(map: map())
        let whisper = try table.apply(.message(text: "behind you", to: ["bo"]), by: .participant("ana"))
        #expect(whisper.views?.map(\.audience) == [.only(["bo", "ana"])])
        let toHost = try table.apply(.message(text: "psst", to: ["host"]), by: .participant("ana"))
        #expect(toHost.views?.map(\.audience) == [.only(["ana"])])
        #expect(try table.apply(.message(text: "hello all", to: nil), by: .participant("ana")).views == nil)
        #expect(!(try table.apply(.ping(x: 1, y: 1), by: .participant("ana"))).isKept)
    }

    @Test func idsAreUniqueAndUnknownOnesAreRefused() throws {
        var table = Table(map: map())
        #expect { try table.apply(.add(.token, token("wolf").objectValue), by: .host) } throws: { ($0 as? TableError)?.code == .idTaken }
        #expect { try table.apply(.remove(.token, id: "bear"), by: .host) } throws: { ($0 as? TableError)?.code == .unknownEntity }
        _ = try table.apply(.remove(.token, id: "wolf"), by: .host)
        _ = try table.apply(.add(.token, token("wolf", x: 9).objectValue), by: .host)
        #expect(ids(table.map) == ["goblin", "ogre", "wolf"])
    }

    /// Random interleavings of host and player ops: each player's copy, built only from what they were sent, equals
    /// the table filtered for them, and nothing they were sent names a token they never saw.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8]) func everyPlayersCopyIsTheirViewAndHoldsNoSecret(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let table = Table(
            map: map(tokens: [token("goblin", owner: "ana"), token("secret-1", asset: 2, hidden: true), token("wolf", asset: 3)]))
        try Self.play(table, seed: seed, random: &random) { random, step in Self.randomOp(&random, step: step, players: Self.players) }
    }

    /// The same with fog, paint, walls, doors and glimpses: the east of the map (x ≥ 12) is never revealed, and no
    /// player is ever sent the digest of the floor, wall, object or token art used only there.
    @Test(arguments: [11, 12, 13, 14, 15, 16] as [UInt64]) func fogKeepsTheUnrevealedOutOfEveryPlayersBytes(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let secrets = [20, 21, 22, 23].map { art(UInt8($0)).stringValue! }
        let table = Self.foggy()
        let received = try Self.play(table, seed: seed, random: &random) { random, step in
            Self.fogOp(&random, step: step, players: Self.players)
        }
        for player in Self.players {
            for secret in secrets { #expect(!received[player]!.contains { $0.contains(secret) }, "\(player) was sent \(secret)") }
        }
    }

    static let players = ["ana", "bo", "cy"]

    /// A 16 × 12 v2 map with fog: the top-left 4 × 4 revealed, the floor there art 10, the east (x ≥ 12) art 20; a
    /// door at the top, a wall in the east (art 22), a chest in the east (art 21), Ana's goblin at (1, 1), an ogre in
    /// the east (art 23).
    static func foggy() -> Table {
        Table(
            map: .object([
                "schema": .string("hoard.map/v2"), "grid": .object(["width": .number(16), "height": .number(12)]),
                "background": .object([
                    "texture": art(9), "palette": .array([art(10), art(20)]),
                    "rects": .array([.array([0, 0, 4, 4, 0].map { .number($0) }), .array([12, 0, 4, 12, 1].map { .number($0) })]),
                ]),
                "fog": .object(["enabled": .bool(true), "revealed": .array([.array([0, 0, 4, 4].map { .number($0) })])]),
                "drawing": .object([
                    "walls": .array([
                        .object(["id": .string("east"), "from": .array([.number(13), .number(2)]), "to": .array([.number(13), .number(9)]),
                                 "texture": art(22)]),
                        .object(["id": .string("d1"), "from": .array([.number(2), .number(0)]), "to": .array([.number(2), .number(1)]),
                                 "door": .bool(true)]),
                    ])
                ]),
                "objects": .array([.object(["id": .string("chest"), "asset": art(21), "x": .number(14), "y": .number(5)])]),
                "tokens": .array([token("goblin", owner: "ana"), token("ogre", x: 14, y: 8, asset: 23)]),
            ]))
    }

    @Test func fogHidesTheFloorWallsObjectsAndTokensItCoversFromPlayers() throws {
        var table = Self.foggy()
        let bo = table.view(for: .participant("bo"))
        let text = String(decoding: try CanonicalJSON.encode(bo), as: UTF8.self)
        for hidden in [20, 21, 22, 23] { #expect(!text.contains(art(UInt8(hidden)).stringValue!), "art \(hidden) under fog reached bo") }
        #expect(ids(bo) == ["goblin"])
        #expect(bo["background"]?["palette"] == .array([art(10)]))
        #expect(bo["background"]?["rects"] == .array([.array([0, 0, 4, 4, 0].map { .number($0) })]))
        #expect(ids(table.view(for: .host)) == ["goblin", "ogre"])
        let audiences = table.artAudiences()
        #expect(audiences[Digest(art(10).stringValue!)!] == .everyone)
        for hidden in [20, 21, 22, 23] { #expect(audiences[Digest(art(UInt8(hidden)).stringValue!)!] == .nobody) }
        // Ana's own token is hers to see wherever it stands.
        _ = try table.apply(.move(token: "goblin", x: 15, y: 11), by: .participant("ana"))
        #expect(ids(table.view(for: .participant("ana"))) == ["goblin"])
        #expect(ids(table.view(for: .participant("bo"))) == [])
        // Revealing the east sends every player their whole view, after the art it newly shows them.
        let revealed = try table.apply(.fog(.reveal([TileRect(x: 12, y: 0, w: 4, h: 12)])), by: .host)
        #expect(revealed.views?.count == 1 && revealed.views?.first?.op == nil)
        let shown = revealed.art.filter { $0.audience == .everyone }.flatMap(\.digests)
        #expect(Set(shown) == Set([20, 21, 22, 23].map { Digest(art(UInt8($0)).stringValue!)! }))
        #expect(ids(table.view(for: .participant("bo"))) == ["goblin", "ogre"])
        #expect { try table.apply(.fog(.cover([TileRect(x: 0, y: 0, w: 1, h: 1)])), by: .participant("bo")) } throws: {
            ($0 as? TableError)?.code == .forbidden
        }
    }

    @Test func paintUnderFogReachesPlayersOnlyWhereTheySee() throws {
        var table = Self.foggy()
        let texture = Digest(art(11).stringValue!)!
        let painted = try table.apply(.paint(rects: [TileRect(x: 2, y: 2, w: 4, h: 2)], texture: texture), by: .host)
        let view = try #require(painted.views?.first)
        #expect(view.op == .paint(rects: [TileRect(x: 2, y: 2, w: 2, h: 1), TileRect(x: 2, y: 3, w: 2, h: 1)], texture: texture))
        let hidden = try table.apply(.paint(rects: [TileRect(x: 8, y: 8, w: 2, h: 2)], texture: Digest(art(12).stringValue!)!), by: .host)
        #expect(hidden.views?.isEmpty == true && hidden.art.first?.audience == .nobody)
        #expect { try table.apply(.paint(rects: [TileRect(x: 15, y: 0, w: 2, h: 1)], texture: nil), by: .host) } throws: {
            ($0 as? TableError)?.code == .outOfGrid
        }
        #expect { try table.apply(.paint(rects: [TileRect(x: 0, y: 0, w: 1, h: 1)], texture: nil), by: .participant("ana")) } throws: {
            ($0 as? TableError)?.code == .forbidden
        }
        // Painting over every tile of a texture takes it out of everyone's view.
        _ = try table.apply(.paint(rects: [TileRect(x: 12, y: 0, w: 4, h: 12)], texture: nil), by: .host)
        #expect(table.artAudiences()[Digest(art(20).stringValue!)!] == nil)
        #expect(!String(decoding: try CanonicalJSON.encode(table.map), as: UTF8.self).contains(art(20).stringValue!))
    }

    @Test func doorsOpenForPlayersOnlyWhenTheHostLetsThem() throws {
        var table = Self.foggy()
        #expect { try table.apply(.door(wall: "d1", open: true), by: .participant("ana")) } throws: { ($0 as? TableError)?.code == .forbidden }
        #expect { try table.apply(.door(wall: "east", open: true), by: .host) } throws: { ($0 as? TableError)?.code == .badOp }
        _ = try table.apply(.settings(playersOpenDoors: true), by: .host)
        let opened = try table.apply(.door(wall: "d1", open: true), by: .participant("ana"))
        #expect(opened.views == nil, "everyone sees a door in the open")
        // A wall under fog is unknown to players, door or not.
        _ = try table.apply(.addWall(["id": .string("d2"), "from": .array([.number(10), .number(10)]), "to": .array([.number(11), .number(10)]),
                                      "door": .bool(true)]), by: .host)
        #expect { try table.apply(.door(wall: "d2", open: true), by: .participant("ana")) } throws: { ($0 as? TableError)?.code == .unknownEntity }
        let taken: [String: JSONValue] = ["id": .string("d1"), "from": .array([.number(0), .number(0)]), "to": .array([.number(1), .number(0)])]
        #expect { try table.apply(.addWall(taken), by: .host) } throws: {
            ($0 as? TableError)?.code == .idTaken
        }
        guard case .array(let walls)? = table.view(for: .participant("bo"))["drawing"]?["walls"] else { Issue.record("no walls"); return }
        #expect(walls.compactMap { $0["id"]?.stringValue } == ["d1"])
        #expect(walls.first?["open"] == .bool(true))
    }

    @Test func aGlimpseShowsATokenToSomeAndTellsItsOwner() throws {
        var table = Self.foggy()
        _ = try table.apply(.assign(token: "ogre", owner: "cy"), by: .host)
        #expect { try table.apply(.glimpse(token: "goblin", to: ["bo"], seconds: 3), by: .participant("cy")) } throws: {
            ($0 as? TableError)?.code == .unknownEntity
        }
        // Ana may glimpse her own token under fog (a taunt): bo sees it, ana is told who saw it.
        _ = try table.apply(.move(token: "goblin", x: 10, y: 10), by: .participant("ana"))
        let taunt = try table.apply(.glimpse(token: "goblin", to: ["bo"], seconds: 3), by: .participant("ana"))
        let views = try #require(taunt.views)
        #expect(views.contains { $0.audience == .only(["bo"]) && { if case .add(.token, _)? = $0.op { true } else { false } }($0) })
        #expect(views.contains { $0.audience == .only(["ana"]) && $0.op == .seen(token: "goblin", by: ["bo"]) })
        #expect(ids(table.view(for: .participant("bo"))) == ["goblin"])
        #expect(ids(table.view(for: .participant("cy"))) == ["ogre"])
        // The host glimpses a token to the seeker; when it ends, the seeker is told it is gone.
        _ = try table.apply(.glimpse(token: "ogre", to: ["bo", "cy"], seconds: 3), by: .host)
        #expect(ids(table.view(for: .participant("bo"))) == ["goblin", "ogre"])
        #expect { try table.apply(.glimpse(token: "ogre", to: ["ana"], seconds: 3), by: .participant("bo")) } throws: {
            ($0 as? TableError)?.code == .unknownEntity
        }
        let ended = try table.apply(.unglimpse(token: "ogre", from: ["bo"]), by: .host)
        #expect(ended.views?.count == 1 && ended.views?.first?.audience == .only(["bo"]) && ended.views?.first?.op == .remove(.token, id: "ogre"))
        #expect(ids(table.view(for: .participant("bo"))) == ["goblin"])
        #expect(ids(table.view(for: .participant("cy"))) == ["ogre"])
        #expect { try table.apply(.unglimpse(token: "ogre", from: ["cy"]), by: .participant("cy")) } throws: { ($0 as? TableError)?.code == .forbidden }
        #expect { try table.apply(.seen(token: "ogre", by: ["cy"]), by: .host) } throws: { ($0 as? TableError)?.code == .badOp }
    }

    /// Applies random ops to `table`, sends each player what the change says, and checks their copies; returns what
    /// each player was sent.
    @discardableResult
    static func play(
        _ start: Table, seed: UInt64, random: inout SeededRandom, steps: Int = 400, op: (inout SeededRandom, Int) -> TableOp
    ) throws -> [String: [String]] {
        var table = start
        var copies = Dictionary(uniqueKeysWithValues: players.map { ($0, Table(map: table.view(for: .participant($0)))) })
        var received = Dictionary(
            uniqueKeysWithValues: players.map { ($0, [String(decoding: try! CanonicalJSON.encode(table.view(for: .participant($0))), as: UTF8.self)]) })
        var everSeen = Dictionary(uniqueKeysWithValues: players.map { ($0, Set(ids(table.view(for: .participant($0))))) })
        for step in 0..<steps {
            let actor: Table.Actor = random.next(upperBound: 3) == 0 ? .participant(players[Int(random.next(upperBound: 3))]) : .host
            let candidate = op(&random, step)
            guard let change = try? table.apply(candidate, by: actor), change.isKept else { continue }
            for player in players {
                let view: TableOp?? =
                    change.views.map { views in views.first { $0.audience.contains(player) }.map(\.op) } ?? .some(change.op)
                switch view {
                case .none: continue
                case .some(.none):
                    let whole = table.view(for: .participant(player))
                    received[player, default: []].append(String(decoding: try CanonicalJSON.encode(whole), as: UTF8.self))
                    copies[player] = Table(map: whole)
                case .some(.some(let op)):
                    received[player, default: []].append(String(decoding: try CanonicalJSON.encode(op.json), as: UTF8.self))
                    switch op {
                    case .message, .seen: continue
                    default: _ = try copies[player]!.apply(op, by: .host)
                    }
                }
                everSeen[player, default: []].formUnion(ids(table.view(for: .participant(player))))
            }
        }
        for player in players {
            // Equal but for order: a token or stroke that appears to a player is put on top of their copy.
            let expected = try CanonicalJSON.encode(sortedById(table.view(for: .participant(player))))
            let copy = try CanonicalJSON.encode(sortedById(copies[player]!.map))
            #expect(
                copy == expected,
                "\(player)'s copy drifted (seed \(seed)):\n\(String(decoding: copy, as: UTF8.self))\n\(String(decoding: expected, as: UTF8.self))"
            )
            for secret in ids(table.map) where secret.hasPrefix("secret") && !everSeen[player]!.contains(secret) {
                #expect(!received[player]!.contains { $0.contains("\"\(secret)\"") }, "\(player) was sent \(secret)")
            }
        }
        return received
    }

    /// Ops for the fog map: reveals and covers in the west (x < 10), paint anywhere (art 20 only in the east), walls,
    /// doors, glimpses of the west's tokens (by the host, or by their owner), moves within the west.
    static func fogOp(_ random: inout SeededRandom, step: Int, players: [String]) -> TableOp {
        func pick<T>(_ items: [T]) -> T { items[Int(random.next(upperBound: UInt64(items.count)))] }
        let x = Int(random.next(upperBound: 8)), y = Int(random.next(upperBound: 10))
        let west = TileRect(x: x, y: y, w: 1 + Int(random.next(upperBound: 2)), h: 1 + Int(random.next(upperBound: 2)))
        let westTokens = ["goblin", "wolf", "t\(step % 4)"]
        switch random.next(upperBound: 12) {
        case 0: return .fog(.reveal([west]))
        case 1: return .fog(.cover([west]))
        case 2: return .paint(rects: [west], texture: random.next(upperBound: 3) == 0 ? nil : Digest(art(UInt8(10 + random.next(upperBound: 3))).stringValue!)!)
        case 3: return .paint(rects: [TileRect(x: 12 + Int(random.next(upperBound: 4)), y: y, w: 1, h: 1)], texture: Digest(art(20).stringValue!)!)
        case 4:
            return .addWall([
                "id": .string("w\(step % 5)"), "from": .array([.number(Double(x)), .number(Double(y))]),
                "to": .array([.number(Double(x + 1)), .number(Double(y))]), "door": .bool(random.next(upperBound: 2) == 0),
            ])
        case 5:
            return random.next(upperBound: 2) == 0
                ? .removeWall(id: "w\(step % 5)") : .door(wall: pick(["d1", "w\(step % 5)"]), open: random.next(upperBound: 2) == 0)
        case 6: return .settings(playersOpenDoors: random.next(upperBound: 2) == 0)
        case 7: return .glimpse(token: pick(westTokens), to: [pick(players)], seconds: 5)
        case 8: return .unglimpse(token: pick(westTokens), from: [pick(players)])
        case 9:
            let owner = random.next(upperBound: 2) == 0 ? pick(players) : nil
            return .add(.token, token("t\(step % 4)", x: x, y: y, asset: UInt8(4 + random.next(upperBound: 3)), owner: owner).objectValue)
        case 10: return .remove(.token, id: pick(westTokens))
        default: return .move(token: pick(westTokens), x: x, y: y)
        }
    }

    static func randomOp(_ random: inout SeededRandom, step: Int, players: [String]) -> TableOp {
        let tokenIds = ["goblin", "secret-1", "wolf", "secret-\(step % 5)", "t\(step % 7)"]
        let id = tokenIds[Int(random.next(upperBound: UInt64(tokenIds.count)))]
        let x = Int(random.next(upperBound: 17)), y = Int(random.next(upperBound: 12))
        switch random.next(upperBound: 11) {
        case 0:
            return .add(
                .token,
                token(id, x: x % 16, y: y, asset: UInt8(4 + random.next(upperBound: 3)), hidden: random.next(upperBound: 2) == 0)
                    .objectValue)
        case 1: return .remove(.token, id: id)
        case 2: return .assign(token: id, owner: random.next(upperBound: 3) == 0 ? nil : players[Int(random.next(upperBound: 3))])
        case 3: return .hide(token: id)
        case 4: return .reveal(token: id)
        case 5:
            return .set(
                token: id, fields: ["label": .string("l\(step)"), "layer": random.next(upperBound: 3) == 0 ? .string("host") : .null])
        case 6:
            let stroke: [String: JSONValue] = [
                "id": .string("s\(step % 9)"), "color": .string("#123456"), "width": .number(1),
                "points": .array([.array([.number(0), .number(0)]), .array([.number(2), .number(2)])]),
            ]
            return .stroke(stroke)
        case 7: return .erase(stroke: "s\(Int(random.next(upperBound: 9)))")
        case 8:
            return .layer(
                name: random.next(upperBound: 2) == 0 ? "host" : "p:\(players[Int(random.next(upperBound: 3))])",
                visibleTo: random.next(upperBound: 2) == 0 ? .everyone : .only([players[Int(random.next(upperBound: 3))]]))
        case 9: return .message(text: "m", to: random.next(upperBound: 2) == 0 ? nil : [players[Int(random.next(upperBound: 3))]])
        default: return .move(token: id, x: x, y: y)
        }
    }

    @Test func aWallTouchesOnlyTheTilesItsSegmentMeets() {
        let diagonal = Set(Fog.tiles(touchedByWallFrom: 12, 0, to: 19, 7, width: 20, height: 10))
        #expect(diagonal.contains(0 * 20 + 12) && diagonal.contains(6 * 20 + 18) && !diagonal.contains(6 * 20 + 12), "not its bounding box")
        let vertical = Set(Fog.tiles(touchedByWallFrom: 2, 0, to: 2, 1, width: 20, height: 10))
        #expect(vertical == [1, 2, 21, 22], "both sides, and the tiles at its end's corner")
        #expect(Fog.tiles(touchedByWallFrom: 0, 15, to: 0, 16, width: 20, height: 10).isEmpty, "off the grid: nothing, and no trap")
        #expect(Fog.tiles(touchedByWallFrom: 30, 0, to: 40, 5, width: 20, height: 10).isEmpty)
    }

    @Test func theMapDoorRefusesWhatTheTableCannotJudgeAndNamesEveryStroke() throws {
        func admitted(_ text: String) throws -> Result<JSONValue, MapProblem> { MapCheck.admitted(try JSONValue(parsing: Data(text.utf8))) }
        let digest = art(1).stringValue!
        let refused = [
            #"{"grid":{"width":10,"height":10},"drawing":{"walls":[{"id":"w","from":[0,15],"to":[0,16]}]}}"#,
            #"{"schema":"hoard.map/v1","grid":{"width":10,"height":10},"background":{"tiles":[{"x":10,"y":0,"texture":"\#(digest)"}]}}"#,
            #"{"grid":{"width":10,"height":10},"background":{"palette":["\#(digest)"],"rects":[[8,8,4,4,0]]}}"#,
            #"{"grid":{"width":10,"height":10},"tokens":[{"id":"a","x":1,"y":1}],"objects":[{"id":"a","x":1,"y":1}]}"#,
            #"{"grid":{"width":10,"height":10},"tokens":[{"id":"p:ana:1","x":1,"y":1}]}"#,
            #"{"grid":{"width":600,"height":10}}"#,
        ]
        for text in refused {
            guard case .failure = try admitted(text) else { Issue.record("admitted: \(text)"); continue }
        }
        let v2Tiles = ##"{"schema":"hoard.map/v2","grid":{"width":4,"height":4},"background":{"tiles":[{"x":1,"y":1,"texture":"\##(digest)"}]},"##
            + ##""drawing":{"strokes":[{"color":"#000000","width":1,"points":[[0,0],[1,1]]},{"layer":"p:bo","color":"#000000","width":1,"points":[[0,0],[1,1]]}]}}"##
        guard case .success(let stored) = try admitted(v2Tiles) else { Issue.record("refused a v2 map with per-tile floor"); return }
        #expect(stored["background"]?["tiles"] == nil && stored["background"]?["rects"] != nil, "read tile by tile, as rectangles")
        guard case .array(let strokes)? = stored["drawing"]?["strokes"] else { Issue.record("no strokes"); return }
        #expect(strokes.compactMap { $0["id"]?.stringValue } == ["stroke-1", "p:bo:stroke-1"])
        // Walls need no id in the schema either: each is given one no other entity has.
        let walls = #"{"grid":{"width":8,"height":6},"drawing":{"walls":[{"from":[0,0],"to":[8,0]},{"id":"wall-1","from":[0,0],"to":[0,6]}]}}"#
        guard case .success(let walled) = try admitted(walls) else { Issue.record("refused walls without ids"); return }
        guard case .array(let stored2)? = walled["drawing"]?["walls"] else { Issue.record("no walls"); return }
        #expect(stored2.compactMap { $0["id"]?.stringValue } == ["wall-2", "wall-1"])
    }
}

extension JSONValue {
    fileprivate var objectValue: [String: JSONValue] {
        if case .object(let members) = self { members } else { [:] }
    }
}
