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
            #"{"kind":"layer","layer":"p:ana","visibleTo":"*"}"#,
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
        #expect { try table.apply(.move(token: "wolf", x: 1, y: 1), by: .participant("ana")) } throws: {
            ($0 as? TableError)?.code == .forbidden
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
        let players = ["ana", "bo", "cy"]
        var table = Table(
            map: map(tokens: [token("goblin", owner: "ana"), token("secret-1", asset: 2, hidden: true), token("wolf", asset: 3)]))
        var copies = Dictionary(uniqueKeysWithValues: players.map { ($0, Table(map: table.view(for: .participant($0)))) })
        var received = Dictionary(uniqueKeysWithValues: players.map { ($0, [String]()) })
        var everSeen = Dictionary(uniqueKeysWithValues: players.map { ($0, Set(ids(table.view(for: .participant($0))))) })
        for step in 0..<400 {
            let actor: Table.Actor = random.next(upperBound: 3) == 0 ? .participant(players[Int(random.next(upperBound: 3))]) : .host
            let candidate = Self.randomOp(&random, step: step, players: players)
            guard let change = try? table.apply(candidate, by: actor), change.isKept else { continue }
            for player in players {
                let view: TableOp?? =
                    change.views.map { views in views.first { $0.audience.contains(player) }.map(\.op) } ?? .some(change.op)
                switch view {
                case .none: continue
                case .some(.none): copies[player] = Table(map: table.view(for: .participant(player)))
                case .some(.some(let op)):
                    received[player, default: []].append(String(decoding: try CanonicalJSON.encode(op.json), as: UTF8.self))
                    if case .message = op { continue }
                    _ = try copies[player]!.apply(op, by: .host)
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
}

extension JSONValue {
    fileprivate var objectValue: [String: JSONValue] {
        if case .object(let members) = self { members } else { [:] }
    }
}
