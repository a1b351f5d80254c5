import Foundation
import HoardClient
import HoardCore
import Testing

/// The client's view model of vision, on the map a player's app builds from the `view` ops the table sends them: dark
/// until explored, lit while seen, dim once out of sight.
@Suite struct SessionVisionTests {
    @Test func theOgresTileIsDarkThenLitThenDimForThePlayer() throws {
        let art = (1...2).map { Digest(bytes: [UInt8](repeating: $0, count: 32))!.description }
        let text = """
            {"grid":{"width":12,"height":12},"vision":{"enabled":true},
             "drawing":{"walls":[{"id":"north","from":[6,0],"to":[6,5]},{"id":"south","from":[6,6],"to":[6,12]},
               {"id":"door","from":[6,5],"to":[6,6],"door":true,"open":false}],"strokes":[]},
             "tokens":[{"id":"hero","asset":"\(art[0])","x":1,"y":5,"number":1,"owner":"ana","sight":{"range":20}},
               {"id":"ogre","asset":"\(art[1])","x":11,"y":5,"number":2}]}
            """
        var table = Table(map: try JSONValue(parsing: Data(text.utf8)))
        // Ana's map as her app holds it: her view when she joined, then each `view` op she is sent applied to it.
        var map = table.view(for: .participant("ana"))
        func apply(_ op: TableOp, by actor: Table.Actor) throws {
            let change = try table.apply(op, by: actor)
            let sent = change.views?.first { $0.audience.contains("ana") }?.op
            guard case .view(let gained)? = sent else {
                Issue.record("Ana is sent \(String(describing: sent)), not a view op")
                return
            }
            map = gained.apply(to: map, participant: "ana")
        }
        func shade() throws -> SessionVision.Shade {
            try #require(SessionVision(map: map, participant: "ana")).shade(x: 11, y: 5)
        }
        #expect(try shade() == .dark)
        #expect(try #require(SessionVision(map: map, participant: "ana")).shade(x: 1, y: 5) == .lit)
        try apply(.door(wall: "door", open: true), by: .host)
        #expect(try shade() == .lit)
        try apply(.move(token: "hero", x: 1, y: 0), by: .participant("ana"))
        #expect(try shade() == .dim)
        #expect(try #require(SessionVision(map: map, participant: "ana")).shade(x: 1, y: 0) == .lit)
        _ = try table.apply(.vision(.enabled(false)), by: .host)
        #expect(SessionVision(map: table.view(for: .participant("ana")), participant: "ana") == nil)
    }
}
