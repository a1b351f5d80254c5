import Foundation
import HoardCore
import HoardTestSupport
import Testing

/// The grid geometry against its definitions: conversions that undo each other, distances that are breadth-first step
/// counts, footprints of the sizes MapTool's tables give, and pixels that land in the cell drawn there.
@Suite struct GridTests {
    @Test(arguments: HexLayout.all)
    func offsetToCubeToOffsetIsTheIdentityForAMillionCells(_ layout: HexLayout) {
        var random = SeededRandom(seed: 1)
        var wrong: [Cell] = []
        for _ in 0..<1_000_000 {
            let cell = Cell(x: random.int(-20_000...20_000), y: random.int(-20_000...20_000))
            if layout.cell(of: layout.cube(of: cell)) != cell, wrong.count < 5 { wrong.append(cell) }
        }
        #expect(wrong.isEmpty, "\(layout): \(wrong)")
    }

    @Test(arguments: HexLayout.all)
    func aPixelNearACellsCentreIsInThatCell(_ layout: HexLayout) {
        var random = SeededRandom(seed: 2)
        var wrong: [String] = []
        for (width, height) in [(72.0, 72.0), (100.0, 86.6), (86.6, 100.0), (37.0, 29.0)] {
            let pixels = HexPixels(layout: layout, width: width, height: height)
            // Well inside every hexagon of that box: 0.3 of its smaller side from the centre.
            let reach = 0.3 * min(width, height)
            for _ in 0..<250_000 {
                let cell = Cell(x: random.int(-2_000...2_000), y: random.int(-2_000...2_000))
                let centre = pixels.centre(of: cell)
                let (angle, distance) = (random.unit() * 2 * Double.pi, random.unit() * reach)
                let found = pixels.cell(atX: centre.x + distance * cos(angle), y: centre.y + distance * sin(angle))
                if found != cell, wrong.count < 5 { wrong.append("\(cell) at \(width)×\(height) → \(found)") }
            }
        }
        #expect(wrong.isEmpty, "\(layout): \(wrong)")
    }

    @Test(arguments: HexLayout.all)
    func cellZeroStartsAtTheOriginAndNoCellOfTheMapStartsBeforeIt(_ layout: HexLayout) {
        let pixels = HexPixels(layout: layout, width: 72, height: 72)
        var left = Double.infinity
        var top = Double.infinity
        for x in 0..<6 {
            for y in 0..<6 {
                let centre = pixels.centre(of: Cell(x: x, y: y))
                left = min(left, centre.x - 36)
                top = min(top, centre.y - 36)
            }
        }
        #expect(left == 0 && top == 0, "\(layout): the map's box starts at (\(left), \(top))")
    }

    /// A million pairs up to 16 cells apart on each axis: the distance both ways equals the breadth-first step count.
    /// The counts are taken once from the four cells (0, 0), (1, 0), (0, 1) and (1, 1): moving a pair by even amounts
    /// on both axes keeps its place in every layout's offsets, so each pair is one of theirs moved.
    @Test(arguments: [Grid.square] + HexLayout.all.map(Grid.hex))
    func distanceIsSymmetricAndCountsBreadthFirstStepsForAMillionPairs(_ grid: Grid) {
        let origins = [Cell(x: 0, y: 0), Cell(x: 1, y: 0), Cell(x: 0, y: 1), Cell(x: 1, y: 1)]
        let steps = origins.map { Self.steps(from: $0, within: 26, on: grid) }
        var random = SeededRandom(seed: 3)
        var wrong: [String] = []
        for _ in 0..<1_000_000 {
            let a = Cell(x: random.int(-20_000...20_000), y: random.int(-20_000...20_000))
            let b = Cell(x: a.x + random.int(-16...16), y: a.y + random.int(-16...16))
            let (px, py) = (a.x & 1, a.y & 1)
            let counted = steps[px + 2 * py][Cell(x: b.x - a.x + px, y: b.y - a.y + py)]
            let (there, back) = (grid.distance(a, b), grid.distance(b, a))
            if there != back || there != counted, wrong.count < 5 { wrong.append("\(a) → \(b): \(there), back \(back), BFS \(String(describing: counted))") }
        }
        #expect(wrong.isEmpty, "\(grid): \(wrong)")
    }

    @Test(arguments: [Grid.square] + HexLayout.all.map(Grid.hex))
    func neighboursAreDistinctOneStepAwayAndNeighbourBack(_ grid: Grid) {
        var random = SeededRandom(seed: 4)
        for _ in 0..<1_000 {
            let cell = Cell(x: random.int(-1_000...1_000), y: random.int(-1_000...1_000))
            let neighbours = grid.neighbours(of: cell)
            #expect(Set(neighbours).count == (grid == .square ? 8 : 6))
            #expect(neighbours.allSatisfy { grid.distance(cell, $0) == 1 && grid.neighbours(of: $0).contains(cell) })
        }
    }

    @Test(arguments: HexLayout.all)
    func hexFootprintsCoverOneThreeSevenAndNineteenHexes(_ layout: HexLayout) throws {
        let grid = Grid.hex(layout)
        var random = SeededRandom(seed: 5)
        for _ in 0..<200 {
            let at = Cell(x: random.int(-100...100), y: random.int(-100...100))
            let counts = try (1...4).map { size in Set(try #require(grid.cells(of: Footprint(width: size, height: size)!, at: at))).count }
            #expect(counts == [1, 3, 7, 19])
            // Size 2: three hexes each next to the other two, the first where the token was put.
            let large = try #require(grid.cells(of: Footprint(width: 2, height: 2)!, at: at))
            #expect(large.first == at)
            #expect(large.allSatisfy { a in large.allSatisfy { b in a == b || grid.distance(a, b) == 1 } })
            // Sizes 3 and 4: every hex within one (two) steps of the centre.
            let huge = try #require(grid.cells(of: Footprint(width: 4, height: 4)!, at: at))
            #expect(huge.allSatisfy { grid.distance(at, $0) <= 2 })
        }
        #expect(grid.cells(of: Footprint(width: 5, height: 5)!, at: Cell(x: 3, y: 3)) == nil)
    }

    @Test(arguments: [Grid.square] + HexLayout.all.map(Grid.hex))
    func aFootprintFitsExactlyWhenEachOfItsCellsIsOnTheMap(_ grid: Grid) throws {
        let (columns, rows) = (10, 8)
        var fitting = 0
        for size in 1...4 {
            let footprint = Footprint(width: size, height: size)!
            for x in -3...12 {
                for y in -3...10 {
                    let cells = try #require(grid.cells(of: footprint, at: Cell(x: x, y: y)))
                    let inside = cells.allSatisfy { $0.x >= 0 && $0.x < columns && $0.y >= 0 && $0.y < rows }
                    #expect(grid.fits(footprint, at: Cell(x: x, y: y), columns: columns, rows: rows) == inside)
                    if inside { fitting += 1 }
                }
            }
        }
        #expect(fitting > 100, "some places fit: \(fitting)")
    }

    @Test func aSquareFootprintIsTheRectangleFromItsTopLeftTile() throws {
        let cells = try #require(Grid.square.cells(of: Footprint(width: 3, height: 2)!, at: Cell(x: 4, y: 5)))
        #expect(Set(cells) == Set([4, 5, 6].flatMap { x in [5, 6].map { Cell(x: x, y: $0) } }))
    }

    @Test func aMapSaysItsGridAndTheDoorRefusesOneTheSchemaDoesNotAllow() throws {
        func grid(_ text: String) throws -> JSONValue { try JSONValue(parsing: Data(text.utf8)) }
        #expect(Grid(map: nil) == .square)
        #expect(Grid(map: try grid(#"{"width": 3, "height": 3}"#)) == .square)
        #expect(Grid(map: try grid(#"{"width": 3, "height": 3, "type": "hex"}"#)) == .hex(HexLayout(.flat, .odd)))
        #expect(
            Grid(map: try grid(#"{"width": 3, "height": 3, "type": "hex", "orientation": "pointy", "offset": "even"}"#))
                == .hex(HexLayout(.pointy, .even)))
        for wrong in [#""type": "hexagon""#, #""type": "hex", "orientation": "diagonal""#, #""type": "hex", "offset": 1"#] {
            #expect(Grid(map: try grid("{\"width\": 3, \"height\": 3, \(wrong)}")) == nil, "\(wrong)")
            let map = try grid("{\"grid\": {\"width\": 3, \"height\": 3, \(wrong)}}")
            let problem = MapCheck.problem(in: map)
            #expect(problem?.contains("grid.type is \"square\" or \"hex\"") == true, "\(wrong): \(String(describing: problem))")
        }
        let hex = try grid(#"{"grid": {"width": 30, "height": 20, "type": "hex", "orientation": "flat"}}"#)
        #expect(MapCheck.problem(in: hex) == nil)
    }

    /// Breadth-first steps from `origin` to every cell at most `radius` steps away, over `grid.neighbours`.
    static func steps(from origin: Cell, within radius: Int, on grid: Grid) -> [Cell: Int] {
        var found = [origin: 0]
        var frontier = [origin]
        for step in 1...radius {
            frontier = frontier.flatMap { grid.neighbours(of: $0) }.filter { found[$0] == nil }
            for cell in frontier { found[cell] = step }
            frontier = Array(Set(frontier))
        }
        return found
    }
}

extension SeededRandom {
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next(upperBound: UInt64(range.upperBound - range.lowerBound + 1)))
    }

    /// A number in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
