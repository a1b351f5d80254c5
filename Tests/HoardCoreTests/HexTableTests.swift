import Foundation
import HoardTestSupport
import Testing

@testable import HoardCore

/// The table on hexes: a token covers its footprint's hexes, each of which must be on the map, and fog shows it when
/// it reveals any of them; the same places on a square map keep the square rules.
@Suite struct HexTableTests {
    static let ogre = Digest(bytes: [UInt8](repeating: 3, count: 32))!
    static let imp = Digest(bytes: [UInt8](repeating: 1, count: 32))!

    /// A `width × height` map of `grid` with a size-3 ogre and a size-1 imp, fog on and only `revealed` seen.
    static func table(grid: [String: JSONValue], width: Int = 12, height: Int = 9, revealed: [[Int]] = []) -> Table {
        func place(_ id: String, _ art: Digest, _ x: Int, _ y: Int) -> JSONValue {
            .object(["id": .string(id), "asset": .string(art.description), "x": .number(Double(x)), "y": .number(Double(y)),
                     "number": .number(1)])
        }
        var table = Table(map: .object([
            "schema": .string("hoard.map/v2"),
            "grid": .object(grid.merging(["width": .number(Double(width)), "height": .number(Double(height))]) { $1 }),
            "fog": .object(["enabled": .bool(true), "revealed": .array(revealed.map { .array($0.map { .number(Double($0)) }) })]),
            "tokens": .array([place("ogre", ogre, 5, 4), place("imp", imp, 1, 1)]),
        ]))
        table.footprints = [ogre: Footprint(width: 3, height: 3)!, imp: .single]
        return table
    }

    static let flat: [String: JSONValue] = ["type": .string("hex"), "orientation": .string("flat"), "offset": .string("odd")]

    static func move(_ token: String, _ x: Int, _ y: Int) throws -> TableOp {
        try TableOp(json: JSONValue(parsing: Data(#"{"kind":"move","token":"\#(token)","x":\#(x),"y":\#(y)}"#.utf8)))
    }

    @Test func aHexTokenMovesOnlyWhereEveryHexOfItsFootprintIsOnTheMap() throws {
        var table = Self.table(grid: Self.flat)
        _ = try table.apply(Self.move("ogre", 1, 1), by: .host)
        let error = #expect(throws: TableError.self) { _ = try table.apply(Self.move("ogre", 0, 4), by: .host) }
        #expect(error?.code == .outOfGrid)
        #expect(error?.message.contains("7 hexes leave the 12×9 grid") == true, "\(String(describing: error))")
        #expect(throws: TableError.self) { _ = try table.apply(Self.move("ogre", 11, 8), by: .host) }
        // The imp (one hex) goes to the corner; on a square map the ogre's corner move keeps the square rule (its tile).
        _ = try table.apply(Self.move("imp", 0, 0), by: .host)
        var square = Self.table(grid: [:])
        _ = try square.apply(Self.move("ogre", 0, 4), by: .host)
    }

    /// The issue's property: for every place and size, the table accepts a move exactly when `Grid.fits` says every
    /// hex is on the map, in all four layouts.
    @Test(arguments: HexLayout.all)
    func aMoveIsAcceptedExactlyWhenTheFootprintFits(_ layout: HexLayout) throws {
        let grid: [String: JSONValue] = [
            "type": .string("hex"), "orientation": .string(layout.orientation.rawValue), "offset": .string(layout.parity.rawValue),
        ]
        var random = SeededRandom(seed: 39)
        for size in 1...4 {
            var table = Self.table(grid: grid, width: 10, height: 8)
            table.footprints[Self.ogre] = Footprint(width: size, height: size)!
            for _ in 0..<2_500 {
                let (x, y) = (Int(random.next(upperBound: 10)), Int(random.next(upperBound: 8)))
                let fits = Grid.hex(layout).fits(Footprint(width: size, height: size)!, at: Cell(x: x, y: y), columns: 10, rows: 8)
                let accepted = (try? table.apply(Self.move("ogre", x, y), by: .host)) != nil
                #expect(accepted == fits, "\(layout) size \(size) at (\(x), \(y))")
            }
        }
    }

    @Test func fogShowsAHexTokenWhenItRevealsAnyOfItsHexesAndASquareOneByItsTile() throws {
        // The ogre stands on (5, 4); in flat-odd, column 5 (odd) reaches down: its ring holds (6, 5) but not (6, 3).
        let ringOnly = [[6, 5, 1, 1]]
        let hex = Self.table(grid: Self.flat, revealed: ringOnly)
        #expect(hex.view(for: .participant("pia")).holds("ogre"), "one revealed hex of seven shows it")
        let far = Self.table(grid: Self.flat, revealed: [[6, 3, 1, 1], [8, 4, 2, 2]])
        #expect(!far.view(for: .participant("pia")).holds("ogre"), "hexes outside its footprint do not")
        let square = Self.table(grid: [:], revealed: ringOnly)
        #expect(!square.view(for: .participant("pia")).holds("ogre"), "on squares its tile decides")
        #expect(square.view(for: .host).holds("ogre"))
    }
}

extension HexTableTests {
    /// A hex map with fog whose only wall runs along side `side` of cell (5, 4); `revealed` are the seen cells.
    static func walled(side: Int, revealed: [[Int]]) throws -> Table {
        var table = Self.table(grid: Self.flat, revealed: revealed)
        _ = try table.apply(TableOp(json: JSONValue(parsing: Data(
            #"{"kind":"wall","add":{"id":"w","cell":[5,4],"side":\#(side)}}"#.utf8))), by: .host)
        return table
    }

    @Test func aWallOnAHexSideIsSeenByThoseWhoSeeEitherCellItSeparates() throws {
        func seen(_ table: Table) -> Bool {
            guard case .array(let walls)? = table.view(for: .participant("pia"))["drawing"]?["walls"] else { return false }
            return walls.contains { $0["id"]?.stringValue == "w" }
        }
        // Side 0 of (5, 4) in flat-odd faces cube direction (+1, 0): the cell (6, 5) (column 5 is pushed down).
        #expect(seen(try Self.walled(side: 0, revealed: [[5, 4, 1, 1]])))
        #expect(seen(try Self.walled(side: 0, revealed: [[6, 5, 1, 1]])))
        #expect(!seen(try Self.walled(side: 0, revealed: [[6, 4, 1, 1], [4, 4, 1, 1]])), "neighbours across other sides")
        #expect(!seen(try Self.walled(side: 3, revealed: [[6, 5, 1, 1]])), "side 3 faces the other way")
    }

    @Test func wallsAreSidesOfCellsOnHexesAndCornerToCornerOnSquares() throws {
        func problem(_ grid: String, _ wall: String) throws -> String? {
            MapCheck.problem(in: try JSONValue(parsing: Data(
                #"{"grid":{"width":6,"height":5\#(grid)},"drawing":{"walls":[\#(wall)]}}"#.utf8)))
        }
        let hex = #","type":"hex""#
        #expect(try problem(hex, #"{"id":"a","cell":[5,4],"side":5}"#) == nil)
        #expect(try problem(hex, #"{"id":"a","cell":[6,4],"side":1}"#)?.contains("a wall on a hex map is a cell") == true)
        #expect(try problem(hex, #"{"id":"a","cell":[1,1],"side":6}"#) != nil)
        #expect(try problem(hex, #"{"id":"a","from":[0,0],"to":[1,0]}"#) != nil)
        #expect(try problem("", #"{"id":"a","cell":[1,1],"side":0}"#)?.contains("runs from corner to corner") == true)
        #expect(try problem("", #"{"id":"a","from":[0,0],"to":[1,0]}"#) == nil)
        #expect(throws: TableError.self) {
            _ = try TableOp(json: JSONValue(parsing: Data(#"{"kind":"wall","add":{"id":"w","cell":[1,1],"side":9}}"#.utf8)))
        }
        var table = Self.table(grid: Self.flat)
        let error = #expect(throws: TableError.self) {
            _ = try table.apply(TableOp(json: JSONValue(parsing: Data(
                #"{"kind":"wall","add":{"id":"w","from":[0,0],"to":[1,0]}}"#.utf8))), by: .host)
        }
        #expect(error?.code == .outOfGrid)
    }
}

extension HexTableTests {
    /// An uploaded battlemap has no footprint of its own: the object says the cells it covers.
    @Test func anObjectMaySayTheCellsItCoversAndTheDoorChecksThem() throws {
        func op(_ text: String) throws -> TableOp { try TableOp(json: JSONValue(parsing: Data(text.utf8))) }
        let art = Self.imp.description
        _ = try op(#"{"kind":"add","object":{"id":"bm","asset":"\#(art)","x":0,"y":0,"footprint":{"width":12,"height":9}}}"#)
        for bad in [#"{"width":0,"height":9}"#, #"{"width":12}"#, #"{"width":1.5,"height":2}"#, #"{"width":600,"height":2}"#] {
            #expect(throws: TableError.self) { _ = try op(#"{"kind":"add","object":{"id":"bm","asset":"\#(art)","x":0,"y":0,"footprint":\#(bad)}}"#) }
            let map = try JSONValue(parsing: Data(
                #"{"grid":{"width":12,"height":9},"objects":[{"id":"bm","asset":"\#(art)","x":0,"y":0,"footprint":\#(bad)}]}"#.utf8))
            #expect(MapCheck.problem(in: map)?.contains("footprint is an object's") == true, "\(bad)")
        }
        // On hexes a size-3 footprint of its own covers seven hexes: one revealed hex of its ring shows it.
        var table = Self.table(grid: Self.flat, revealed: [[6, 5, 1, 1]])
        _ = try table.apply(op(#"{"kind":"add","object":{"id":"bm","asset":"\#(art)","x":5,"y":4,"footprint":{"width":3,"height":3}}}"#), by: .host)
        guard case .array(let objects)? = table.view(for: .participant("pia"))["objects"] else { Issue.record("no objects"); return }
        #expect(objects.contains { $0["id"]?.stringValue == "bm" })
    }
}

extension JSONValue {
    /// Whether the view lists a token with this id.
    fileprivate func holds(_ id: String) -> Bool {
        guard case .array(let tokens)? = self["tokens"] else { return false }
        return tokens.contains { $0["id"]?.stringValue == id }
    }
}
