import Foundation
import HoardClient
import HoardCore
import Testing

/// The client's view model of vision, on the views the table sends a player: dark until explored, lit while seen, dim
/// once out of sight.
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
        func shade() throws -> SessionVision.Shade {
            try #require(SessionVision(map: table.view(for: .participant("ana")), participant: "ana")).shade(x: 11, y: 5)
        }
        #expect(try shade() == .dark)
        #expect(try #require(SessionVision(map: table.view(for: .participant("ana")), participant: "ana")).shade(x: 1, y: 5) == .lit)
        _ = try table.apply(.door(wall: "door", open: true), by: .host)
        #expect(try shade() == .lit)
        _ = try table.apply(.move(token: "hero", x: 1, y: 0), by: .participant("ana"))
        #expect(try shade() == .dim)
        _ = try table.apply(.vision(.enabled(false)), by: .host)
        #expect(SessionVision(map: table.view(for: .participant("ana")), participant: "ana") == nil)
    }
}
