import Foundation
import Testing

@testable import HoardCore
import HoardTestSupport

/// Vision on the table: each participant's view is what their tokens see, explored floor and walls stay, and those
/// whose sight an op changes are sent what their view gained and lost, after the art it shows them.
@Suite struct VisionTableTests {
    static func art(_ byte: UInt8) -> Digest { Digest(bytes: [UInt8](repeating: byte, count: 32))! }

    /// A 12 × 12 map split by a wall along x = 6 with a closed door at row 5; Ana's hero (sight 20) at (1, 5), the host's
    /// ogre (art 2) at (11, 5) in the other room, vision on.
    static func table() throws -> Table {
        func pair(_ x: Int, _ y: Int) -> JSONValue { .array([.number(Double(x)), .number(Double(y))]) }
        let text = """
            {"grid":{"width":12,"height":12},"vision":{"enabled":true},
             "drawing":{"walls":[{"id":"north","from":[6,0],"to":[6,5]},{"id":"south","from":[6,6],"to":[6,12]},
               {"id":"door","from":[6,5],"to":[6,6],"door":true,"open":false}],"strokes":[]},
             "tokens":[{"id":"hero","asset":"\(art(1))","x":1,"y":5,"number":1,"owner":"ana","sight":{"range":20}},
               {"id":"ogre","asset":"\(art(2))","x":11,"y":5,"number":2}]}
            """
        return Table(map: try JSONValue(parsing: Data(text.utf8)))
    }

    static func tokens(_ map: JSONValue) -> [String] {
        guard case .array(let tokens)? = map["tokens"] else { return [] }
        return tokens.compactMap { $0["id"]?.stringValue }
    }

    static func explored(_ map: JSONValue, _ id: String) -> Set<Int> {
        guard case .array(let rects)? = map["vision"]?["explored"]?[id] else { return [] }
        var tiles: Set<Int> = []
        for rect in rects.compactMap(TileRect.init(json:)) { rect.forEachTile(width: 12) { tiles.insert($0) } }
        return tiles
    }

    /// The `view` op a change sends `participant` alone; nil when it sends them something else.
    static func viewChange(_ change: Table.Change, _ participant: String) -> ViewChange? {
        for view in change.views ?? [] where view.audience == .only([participant]) {
            if case .view(let gained)? = view.op { return gained }
        }
        return nil
    }

    /// A participant's map in one form whatever the order of its lists and rectangles: tokens, objects and walls by id,
    /// the floor tile by tile, their explored and seen tiles as sets.
    static func normalized(_ map: JSONValue, width: Int, height: Int, participant: String) -> JSONValue {
        guard case .object(var document) = map else { return map }
        func byId(_ list: JSONValue?) -> JSONValue {
            guard case .array(let items)? = list else { return .array([]) }
            return .array(items.sorted { ($0["id"]?.stringValue ?? "") < ($1["id"]?.stringValue ?? "") })
        }
        func tiles(_ rects: JSONValue?) -> JSONValue {
            guard case .array(let items)? = rects else { return .array([]) }
            let set = TileSet(count: width * height, items.compactMap(TileRect.init(json:)).flatMap { rect in
                var tiles: [Int] = []
                rect.forEachTile(width: width) { tiles.append($0) }
                return tiles
            })
            return .array(set.rects(width: width, height: height).map(\.json))
        }
        document["tokens"] = byId(document["tokens"])
        document["objects"] = byId(document["objects"])
        document["drawing"] = .object(["walls": byId(document["drawing"]?["walls"])])
        if let background = document["background"], let floor = Floor(background, width: width, height: height) {
            document["background"] = floor.json(under: nil)
        }
        let vision = document["vision"]
        document["vision"] = .object([
            "explored": tiles(vision?["explored"]?[participant]), "seen": tiles(vision?["seen"]?[participant]),
        ])
        return .object(document)
    }

    @Test func theOgreBehindAClosedDoorShowsWhenItOpensAndGoesWhenTheHeroStepsBackWhileTheFloorStaysExplored() throws {
        var table = try Self.table()
        #expect(Self.tokens(table.view(for: .participant("ana"))) == ["hero"])
        #expect(Self.tokens(table.view(for: .participant("bo"))) == [], "nobody else sees through the hero")
        #expect(!table.audience(ofEntity: "ogre")!.contains("ana"))
        let ogreTile = 5 * 12 + 11
        #expect(!Self.explored(table.view(for: .participant("ana")), "ana").contains(ogreTile))

        let opened = try table.apply(.door(wall: "door", open: true), by: .host)
        let gained = try #require(Self.viewChange(opened, "ana"), "Ana is sent what her view gained")
        #expect(gained.tokens.compactMap { $0["id"]?.stringValue } == ["ogre"] && gained.removed.isEmpty)
        #expect(gained.explored.contains { $0.x <= 11 && 11 < $0.x + $0.w && $0.y <= 5 && 5 < $0.y + $0.h })
        #expect(opened.art.contains { $0.audience.contains("ana") && $0.digests.contains(Self.art(2)) }, "the ogre's art first")
        #expect(Self.tokens(table.view(for: .participant("ana"))) == ["hero", "ogre"])
        #expect(Self.explored(table.view(for: .participant("ana")), "ana").contains(ogreTile))

        let stepped = try table.apply(.move(token: "hero", x: 1, y: 0), by: .participant("ana"))
        let lost = try #require(Self.viewChange(stepped, "ana"))
        #expect(lost.removed == ["ogre"] && lost.tokens.compactMap { $0["id"]?.stringValue } == ["hero"], "the ogre goes, the hero moves")
        let view = table.view(for: .participant("ana"))
        #expect(Self.tokens(view) == ["hero"], "out of sight, the ogre is gone")
        #expect(Self.explored(view, "ana").contains(ogreTile), "the floor it stood on stays explored")
        #expect(table.audience(ofEntity: "door")!.contains("ana"), "and so do the walls she saw")
    }

    @Test func aDoorOpenedWhileVisionIsOffIsOpenOnceVisionIsOn() throws {
        var table = try Self.table()
        _ = try table.apply(.vision(.enabled(false)), by: .host)
        _ = try table.apply(.door(wall: "door", open: true), by: .host)
        _ = try table.apply(.vision(.enabled(true)), by: .host)
        #expect(Self.tokens(table.view(for: .participant("ana"))) == ["hero", "ogre"], "Ana sees through the open door")
        _ = try table.apply(.vision(.enabled(false)), by: .host)
        _ = try table.apply(.addWall(["id": .string("curtain"), "from": .array([.number(7), .number(0)]), "to": .array([.number(7), .number(12)])]), by: .host)
        _ = try table.apply(.vision(.enabled(true)), by: .host)
        #expect(Self.tokens(table.view(for: .participant("ana"))) == ["hero"], "a wall built while vision was off stops her sight")
    }

    @Test func exploredTilesSurviveAFoldAndTheHostForgetsThem() throws {
        var table = try Self.table()
        _ = try table.apply(.door(wall: "door", open: true), by: .host)
        _ = try table.apply(.move(token: "hero", x: 1, y: 0), by: .participant("ana"))
        let explored = Self.explored(table.map, "ana")
        #expect(explored.contains(5 * 12 + 11))
        // A fold stores the host's view; the table read back from it knows what Ana explored.
        var folded = Table(map: table.map)
        #expect(Self.explored(folded.view(for: .participant("ana")), "ana") == explored)
        #expect(Self.explored(folded.view(for: .participant("bo")), "ana").isEmpty, "nobody is shown another's explored tiles")
        _ = try folded.apply(.vision(.forget(["ana"])), by: .host)
        let now = Self.explored(folded.map, "ana")
        #expect(!now.contains(5 * 12 + 11) && now.contains(0 * 12 + 1), "what she sees now stays; the rest is forgotten")
    }

    @Test func onlyTheHostGivesSightOrTurnsVisionOn() throws {
        var table = try Self.table()
        #expect(throws: TableError.self) { try table.apply(.set(token: "hero", fields: ["sight": .object([:])]), by: .participant("ana")) }
        #expect(throws: TableError.self) { try table.apply(.vision(.enabled(false)), by: .participant("ana")) }
        _ = try table.apply(.vision(.enabled(false)), by: .host)
        #expect(Self.tokens(table.view(for: .participant("bo"))) == ["hero", "ogre"], "vision off: everything shows")
    }

    @Test func aTokenSharedWithAPlayerLightsTheirView() throws {
        var table = try Self.table()
        _ = try table.apply(.set(token: "hero", fields: ["sight": .object(["range": .number(20), "sharedWith": .array([.string("bo")])])]), by: .host)
        #expect(Self.tokens(table.view(for: .participant("bo"))) == ["hero"])
        _ = try table.apply(.door(wall: "door", open: true), by: .host)
        #expect(Self.tokens(table.view(for: .participant("bo"))) == ["hero", "ogre"])
    }
}

/// The table's sight, brought up to date op by op (only the tokens an op can affect are recomputed), against the
/// brute-force oracle from scratch: equal for every token after every random op, and each player is shown exactly the
/// tokens on the tiles their tokens see; a `view` op applied to a player's view before an op gives their view after it.
@Suite struct VisionPropertyTests {
    static func text(_ value: JSONValue) -> String { (try? CanonicalJSON.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "?" }

    @Test(arguments: SightTests.grids)
    func sightOnTheTableEqualsTheOracleAfterEveryRandomOp(_ grid: Grid) throws {
        var random = SeededRandom(seed: 400 + UInt64(SightTests.grids.firstIndex(of: grid)!))
        var mismatches: [String] = []
        var viewChanges = 0
        var narrowed = 0
        var paints = 0
        for _ in 0..<6 {
            let (width, height) = (random.int(10...18), random.int(8...14))
            let walls = RandomMap.walls(grid: grid, width: width, height: height, random: &random)
            var tokens: [JSONValue] = []
            for index in 0..<6 {
                var token: [String: JSONValue] = [
                    "id": .string("t\(index)"), "asset": .string(VisionTableTests.art(UInt8(index + 1)).description),
                    "x": .number(Double(random.int(0...(width - 1)))), "y": .number(Double(random.int(0...(height - 1)))), "number": .number(1),
                ]
                if index < 3 {
                    token["owner"] = .string(["p1", "p2"][index % 2])
                    token["sight"] = .object(random.int(0...2) == 0 ? [:] : ["range": .number(Double(random.int(1...9)))])
                }
                tokens.append(.object(token))
            }
            let kind: JSONValue =
                if case .hex(let layout) = grid {
                    .object(["type": .string("hex"), "orientation": .string(layout.orientation.rawValue), "offset": .string(layout.parity.rawValue)])
                } else { .object([:]) }
            var gridJSON: [String: JSONValue] = ["width": .number(Double(width)), "height": .number(Double(height))]
            if case .object(let members) = kind { gridJSON.merge(members) { $1 } }
            var painted: [JSONValue] = []
            for _ in 0..<4 {
                let (x, y) = (random.int(0...(width - 2)), random.int(0...(height - 2)))
                painted.append(.array([x, y, random.int(1...(width - x)), random.int(1...(height - y)), random.int(-1...1)].map { .number(Double($0)) }))
            }
            let floor: JSONValue = .object([
                "texture": .string(VisionTableTests.art(9).description),
                "palette": .array([VisionTableTests.art(10), VisionTableTests.art(11)].map { .string($0.description) }), "rects": .array(painted),
            ])
            let map: JSONValue = .object([
                "grid": .object(gridJSON), "vision": .object(["enabled": .bool(true)]), "tokens": .array(tokens), "background": floor,
                "drawing": .object(["walls": .array(walls.map(JSONValue.object)), "strokes": .array([])]),
            ])
            var table = Table(map: map)
            for step in 0..<15 {
                let currentWalls = table.walls.items
                let op: TableOp
                switch random.int(0...5) {
                case 0, 1: op = .move(token: "t\(random.int(0...5))", x: random.int(0...(width - 1)), y: random.int(0...(height - 1)))
                case 2 where !currentWalls.isEmpty:
                    let wall = currentWalls[random.int(0...(currentWalls.count - 1))]
                    op = wall["door"] == .bool(true)
                        ? .door(wall: wall["id"]!.stringValue!, open: wall["open"] != .bool(true)) : .removeWall(id: wall["id"]!.stringValue!)
                case 3:
                    var wall = RandomMap.loose(grid: grid, width: width, height: height, random: &random)
                    wall["id"] = .string("n\(step)")
                    op = .addWall(wall)
                case 4:
                    let (x, y) = (random.int(0...(width - 1)), random.int(0...(height - 1)))
                    let rect = TileRect(x: x, y: y, w: random.int(1...(width - x)), h: random.int(1...(height - y)))
                    op = .paint(rects: [rect], texture: VisionTableTests.art(UInt8(random.int(10...12))))
                default: op = .set(token: "t\(random.int(0...2))", fields: ["sight": .object(["range": .number(Double(random.int(0...9)))])])
                }
                let before = ["p1", "p2"].map { table.view(for: .participant($0)) }
                let audiencesBefore = table.artAudiences()
                let change = try? table.apply(op, by: .host)
                // An op that says whose fetch rights it changed changed nobody else's.
                if let affected = change?.artAffected {
                    narrowed += 1
                    let audiencesAfter = table.artAudiences()
                    func art(_ audiences: [Digest: Audience], _ player: String) -> Set<Digest> {
                        Set(audiences.compactMap { $0.value.contains(player) ? $0.key : nil })
                    }
                    for player in ["p1", "p2", "p3"] where !affected.contains(player) {
                        if art(audiencesBefore, player) != art(audiencesAfter, player), mismatches.count < 3 {
                            mismatches.append("\(grid) step \(step) after \(op): \(player)'s art changed outside \(affected)")
                        }
                    }
                    for player in affected where table.art(seenBy: player) != art(audiencesAfter, player) {
                        if mismatches.count < 3 { mismatches.append("\(grid) step \(step) after \(op): \(player)'s art alone differs") }
                    }
                }
                // Whoever is sent a `view` op holds their view after the op once they apply it to their view before.
                for (index, player) in ["p1", "p2"].enumerated() {
                    if change?.views?.contains(where: { $0.op == nil && $0.audience.contains(player) }) == true, mismatches.count < 3 {
                        mismatches.append("\(grid) step \(step) after \(op): \(player) is sent their whole view")
                    }
                    // A paint reaches each player clipped to the floor they are shown: painted on their floor before,
                    // it gives their floor after; a player it does not reach keeps their floor.
                    if let change, case .paint = op {
                        let sent = change.views?.first { $0.audience.contains(player) }?.op
                        var floor = before[index]["background"].flatMap { Floor($0, width: width, height: height) }
                        if case .paint(let rects, let texture)? = sent { _ = floor?.paint(rects, texture: texture?.description) }
                        let after = table.view(for: .participant(player))["background"].flatMap { Floor($0, width: width, height: height) }
                        let shown = table.floorFog(for: player)  // compared where they are shown the floor
                        if case .paint(let rects, _)? = sent, let shown, shown.clip(rects) != rects, mismatches.count < 3 {
                            mismatches.append("\(grid) step \(step) after \(op): \(player) is sent paint beyond their floor")
                        }
                        if floor?.json(under: shown) != after?.json(under: shown), mismatches.count < 3 {
                            mismatches.append("\(grid) step \(step) after \(op): \(player)'s floor, sent \(sent.map { "\($0)" } ?? "nothing")")
                        }
                        paints += sent == nil ? 0 : 1
                    }
                    guard let change, let gained = VisionTableTests.viewChange(change, player) else { continue }
                    let patched = gained.apply(to: before[index], participant: player)
                    let (got, should) = (
                        VisionTableTests.normalized(patched, width: width, height: height, participant: player),
                        VisionTableTests.normalized(table.view(for: .participant(player)), width: width, height: height, participant: player)
                    )
                    if got != should, mismatches.count < 3 {
                        let keys = ["tokens", "objects", "drawing", "background", "vision"].filter { got[$0] != should[$0] }
                        let differences = keys.map { "\($0): \(got[$0].map(Self.text) ?? "-") should \(should[$0].map(Self.text) ?? "-")" }
                        mismatches.append("\(grid) step \(step) after \(op): \(player) patched \(differences)")
                    }
                    viewChanges += 1
                }
                let oracle = Oracle(grid: grid, width: width, height: height, walls: table.walls.items)
                var expected: [String: Set<Int>] = [:]
                for token in table.tokens.items {
                    guard let id = token["id"]?.stringValue, case .object(let sight)? = token["sight"] else { continue }
                    let cell = Cell(x: Table.int(token["x"]), y: Table.int(token["y"]))
                    let range: Int? = if case .number(let r)? = sight["range"] { Int(r) } else { nil }
                    let seen = oracle.seen(from: cell, range: range)
                    if table.tokenSeen[id] != seen, mismatches.count < 3 { mismatches.append("\(grid) step \(step) after \(op): \(id)") }
                    expected[token["owner"]!.stringValue!, default: []].formUnion(seen)
                }
                for player in ["p1", "p2"] {
                    let shown = Set(VisionTableTests.tokens(table.view(for: .participant(player))))
                    let should = Set(table.tokens.items.filter { token in
                        token["owner"]?.stringValue == player
                            || expected[player, default: []].contains(Table.int(token["y"]) * width + Table.int(token["x"]))
                    }.compactMap { $0["id"]?.stringValue })
                    if shown != should, mismatches.count < 3 { mismatches.append("\(grid) step \(step): \(player) shown \(shown), should \(should)") }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(viewChanges > 20, "the ops changed players' views \(viewChanges) times")
        #expect(narrowed > 10, "moves narrowed whose art they changed \(narrowed) times")
        #expect(paints > 5, "paints reached players \(paints) times")
    }
}
