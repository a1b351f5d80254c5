import Foundation
import HoardCore
import Testing

@testable import HoardClient

/// An app reads a session's geometry from the client library: the map's grid, the cells a token covers, distances and
/// cell ↔ pixel, as the server judges them.
@Suite struct SessionGridTests {
    static func session(grid: String) throws -> SessionState {
        let digest = "sha256:" + String(repeating: "ab", count: 32)
        let json = #"{"id":"s","name":"Hexcrawl","mapDigest":"\#(digest)","seq":0,"map":{"grid":\#(grid)}}"#
        return try JSONDecoder().decode(SessionState.self, from: Data(json.utf8))
    }

    @Test func aHexSessionGivesItsGeometryAndASquareOneItsSquares() throws {
        let hex = try Self.session(grid: #"{"width":30,"height":20,"type":"hex","orientation":"pointy","offset":"even","tilePixels":72}"#)
        #expect(hex.grid == .hex(HexLayout(.pointy, .even)))
        #expect(hex.tilePixels == 72)
        let at = Cell(x: 10, y: 8)
        let huge = try #require(hex.grid.cells(of: Footprint(width: 3, height: 3)!, at: at))
        #expect(Set(huge) == Set([at] + hex.grid.neighbours(of: at)), "a size-3 token covers its cell and the six around it")
        #expect(hex.grid.distance(at, Cell(x: 12, y: 8)) == 2)
        let pixels = try #require(hex.hexPixels())
        let centre = pixels.centre(of: at)
        #expect(pixels.cell(atX: centre.x + 20, y: centre.y - 20) == at)
        #expect(!hex.grid.fits(Footprint(width: 3, height: 3)!, at: Cell(x: 0, y: 8), columns: 30, rows: 20))

        let square = try Self.session(grid: #"{"width":30,"height":20}"#)
        #expect(square.grid == .square && square.hexPixels() == nil && square.tilePixels == 256)
        #expect(square.grid.neighbours(of: at).count == 8)
    }
}
