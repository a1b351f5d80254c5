import Foundation
import Testing

@testable import HoardCore

/// Vision on the table: each participant's view is what their tokens see, explored floor and walls stay, and those
/// whose sight an op changes are sent their whole view, after the art it shows them.
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

    @Test func theOgreBehindAClosedDoorShowsWhenItOpensAndGoesWhenTheHeroStepsBackWhileTheFloorStaysExplored() throws {
        var table = try Self.table()
        #expect(Self.tokens(table.view(for: .participant("ana"))) == ["hero"])
        #expect(Self.tokens(table.view(for: .participant("bo"))) == [], "nobody else sees through the hero")
        #expect(!table.audience(ofEntity: "ogre")!.contains("ana"))
        let ogreTile = 5 * 12 + 11
        #expect(!Self.explored(table.view(for: .participant("ana")), "ana").contains(ogreTile))

        let opened = try table.apply(.door(wall: "door", open: true), by: .host)
        #expect(opened.views?.contains { $0.audience == .only(["ana"]) && $0.op == nil } == true, "Ana gets her view again")
        #expect(opened.art.contains { $0.audience.contains("ana") && $0.digests.contains(Self.art(2)) }, "the ogre's art first")
        #expect(Self.tokens(table.view(for: .participant("ana"))) == ["hero", "ogre"])
        #expect(Self.explored(table.view(for: .participant("ana")), "ana").contains(ogreTile))

        let stepped = try table.apply(.move(token: "hero", x: 1, y: 0), by: .participant("ana"))
        #expect(stepped.views?.contains { $0.audience == .only(["ana"]) && $0.op == nil } == true)
        let view = table.view(for: .participant("ana"))
        #expect(Self.tokens(view) == ["hero"], "out of sight, the ogre is gone")
        #expect(Self.explored(view, "ana").contains(ogreTile), "the floor it stood on stays explored")
        #expect(table.audience(ofEntity: "door")!.contains("ana"), "and so do the walls she saw")
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
