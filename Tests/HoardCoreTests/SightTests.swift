import Foundation
import HoardCore
import HoardTestSupport
import Testing

/// Line of sight (``SightMap``) against its definition (DESIGN.md, "Who sees what"), decided again by brute force: every
/// tile of the map, every sample point of the tile, every wall, with its own arithmetic (segments met by parameters,
/// hex corners found as the corners two neighbouring hexes share), on random maps of rooms, corridors, doors open and
/// closed, windows, curtains and loose walls, square and hex, after every random change.
@Suite struct SightTests {
    static let grids: [Grid] = [.square] + HexLayout.all.map(Grid.hex)

    // MARK: Cases one can check by eye

    @Test func aTokenInAClosedRoomSeesTheRoomAndNothingElseUntilItsDoorOpens() {
        // A 4 × 3 room from corner (2, 2) to (6, 5); its east wall's middle segment is a door.
        var walls: [[String: JSONValue]] = [
            wall("n", (2, 2), (6, 2)), wall("s", (2, 5), (6, 5)), wall("w", (2, 2), (2, 5)),
            wall("e1", (6, 2), (6, 3)), wall("e2", (6, 4), (6, 5)), wall("door", (6, 3), (6, 4), door: false),
        ]
        let room = Set((2..<5).flatMap { y in (2..<6).map { x in y * 12 + x } })
        var map = SightMap(grid: .square, width: 12, height: 8, walls: walls)
        #expect(Set(map.seen(from: Cell(x: 3, y: 3), range: nil)) == room)
        walls[5]["open"] = .bool(true)
        map.set("door", to: walls[5])
        let open = Set(map.seen(from: Cell(x: 3, y: 3), range: nil))
        // Straight through the doorway, and not around the corner behind the north wall.
        #expect(open.isSuperset(of: room) && open.contains(3 * 12 + 11) && !open.contains(1 * 12 + 7))
    }

    @Test func aWindowLetsSightThroughAndACurtainDoesNot() {
        for (kind, seesThrough) in [("window", true), ("curtain", false), ("wall", false)] {
            var line = wall("w", (3, 0), (3, 6))
            line["kind"] = .string(kind)
            let map = SightMap(grid: .square, width: 6, height: 6, walls: [line])
            #expect(map.seen(from: Cell(x: 0, y: 2), range: nil).contains(2 * 6 + 5) == seesThrough, "\(kind)")
        }
    }

    @Test(arguments: grids)
    func onAnEmptyMapRangeIsADiscOfCentres(_ grid: Grid) {
        let map = SightMap(grid: grid, width: 40, height: 40)
        for range in [0, 1, 2, 7] {
            let seen = map.seen(from: Cell(x: 20, y: 20), range: range)
            let expected = (0..<40).flatMap { y in (0..<40).map { Cell(x: $0, y: y) } }
                .filter { Oracle(grid: grid, width: 40, height: 40, walls: []).isWithin(range, Cell(x: 20, y: 20), $0) }
            #expect(seen == expected.map { $0.y * 40 + $0.x }.sorted(), "\(grid) range \(range)")
        }
        // Range 1 is the tile and its four (square) or six (hex) neighbours.
        #expect(map.seen(from: Cell(x: 20, y: 20), range: 1).count == (grid == .square ? 5 : 7))
    }

    @Test(arguments: HexLayout.all)
    func aHexTokenInsideARingOfWallsSeesTheRingsInside(_ layout: HexLayout) {
        let centre = Cell(x: 8, y: 8)
        let cube = layout.cube(of: centre)
        let inside = Set(cube.within(2).map(layout.cell(of:)))
        var walls: [[String: JSONValue]] = []
        for cell in inside {
            for side in 0..<6 where !inside.contains(layout.cell(of: layout.cube(of: cell) + Cube.directions[side])) {
                walls.append(["id": .string("w\(walls.count)"), "cell": .array([.number(Double(cell.x)), .number(Double(cell.y))]), "side": .number(Double(side))])
            }
        }
        #expect(walls.count == 30)  // the 12 hexes of the outer ring have 30 outward sides: 6 × 3 + 6 × 2
        let map = SightMap(grid: .hex(layout), width: 17, height: 17, walls: walls)
        #expect(Set(map.seen(from: centre, range: nil)) == Set(inside.map { $0.y * 17 + $0.x }))
    }

    // MARK: The property

    @Test(arguments: grids)
    func sightEqualsTheBruteForceOracleOnRandomMapsAfterEveryChange(_ grid: Grid) {
        var random = SeededRandom(seed: grid == .square ? 40 : UInt64(41 + Self.grids.firstIndex(of: grid)!))
        var mismatches: [String] = []
        for round in 0..<12 {
            let (width, height) = (random.int(12...26), random.int(10...22))
            var walls = RandomMap.walls(grid: grid, width: width, height: height, random: &random)
            var map = SightMap(grid: grid, width: width, height: height, walls: walls)
            for step in 0..<8 {
                let oracle = Oracle(grid: grid, width: width, height: height, walls: walls)
                for _ in 0..<3 {
                    let eye = Cell(x: random.int(0...(width - 1)), y: random.int(0...(height - 1)))
                    let range: Int? = random.int(0...3) == 0 ? nil : random.int(0...12)
                    let fast = map.seen(from: eye, range: range)
                    let slow = oracle.seen(from: eye, range: range)
                    if fast != slow, mismatches.count < 3 {
                        mismatches.append(
                            "round \(round) step \(step) eye \(eye) range \(String(describing: range)): only fast "
                                + "\(Set(fast).subtracting(slow).sorted()), only oracle \(Set(slow).subtracting(fast).sorted()); walls \(walls)")
                    }
                    // One tile asked alone (what an ambient sound asks) is seen as it is among all tiles seen.
                    let all = Set(range == nil ? slow : oracle.seen(from: eye, range: nil))
                    for _ in 0..<12 {
                        let tile = Cell(x: random.int(0...(width - 1)), y: random.int(0...(height - 1)))
                        if map.sees(tile, from: eye) != all.contains(tile.y * width + tile.x), mismatches.count < 3 {
                            mismatches.append("round \(round) step \(step): sees(\(tile), from: \(eye)) disagrees; walls \(walls)")
                        }
                    }
                }
                RandomMap.change(&walls, grid: grid, width: width, height: height, random: &random) { id, wall in map.set(id, to: wall) }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    private func wall(_ id: String, _ from: (Int, Int), _ to: (Int, Int), door: Bool? = nil) -> [String: JSONValue] {
        var wall: [String: JSONValue] = [
            "id": .string(id), "from": .array([.number(Double(from.0)), .number(Double(from.1))]),
            "to": .array([.number(Double(to.0)), .number(Double(to.1))]),
        ]
        if let door { (wall["door"], wall["open"]) = (.bool(true), .bool(door)) }
        return wall
    }
}

/// Random maps: rooms (walls around a rectangle or a patch of hexes, a door or two among them, some open), corridors
/// (two long parallel walls on squares), windows, curtains and loose walls (diagonals and points on squares).
enum RandomMap {
    static func walls(grid: Grid, width: Int, height: Int, random: inout SeededRandom) -> [[String: JSONValue]] {
        var walls: [[String: JSONValue]] = []
        func add(_ wall: [String: JSONValue]) {
            var wall = wall
            wall["id"] = .string("w\(walls.count)")
            walls.append(wall)
        }
        for _ in 0..<random.int(1...4) { room(grid: grid, width: width, height: height, random: &random).forEach(add) }
        if grid == .square {
            for _ in 0..<random.int(0...2) {
                let (y, x0, x1) = (random.int(0...(height - 2)), random.int(0...(width / 2)), random.int((width / 2)...width))
                add(segment((x0, y), (x1, y)))
                add(segment((x0, y + 2), (x1, y + 2)))
            }
        }
        for _ in 0..<random.int(0...6) { add(loose(grid: grid, width: width, height: height, random: &random)) }
        return walls
    }

    /// One random change: a door opened or closed, a wall made a window or curtain, taken away or added. `apply` is told
    /// the wall's id and its new state (nil: gone).
    static func change(
        _ walls: inout [[String: JSONValue]], grid: Grid, width: Int, height: Int, random: inout SeededRandom,
        apply: (String, [String: JSONValue]?) -> Void
    ) {
        let choice = walls.isEmpty ? 3 : random.int(0...3)
        switch choice {
        case 0:
            let k = random.int(0...(walls.count - 1))
            walls[k]["door"] = .bool(true)
            walls[k]["open"] = .bool(walls[k]["open"] != .bool(true))
            apply(walls[k]["id"]!.stringValue!, walls[k])
        case 1:
            let k = random.int(0...(walls.count - 1))
            walls[k]["kind"] = .string(["wall", "window", "curtain"][random.int(0...2)])
            apply(walls[k]["id"]!.stringValue!, walls[k])
        case 2:
            let removed = walls.remove(at: random.int(0...(walls.count - 1)))
            apply(removed["id"]!.stringValue!, nil)
        default:
            var wall = loose(grid: grid, width: width, height: height, random: &random)
            wall["id"] = .string("n\(random.int(0...1_000_000))")
            walls.append(wall)
            apply(wall["id"]!.stringValue!, wall)
        }
    }

    static func room(grid: Grid, width: Int, height: Int, random: inout SeededRandom) -> [[String: JSONValue]] {
        var sides: [[String: JSONValue]] = []
        switch grid {
        case .square:
            let (x0, y0) = (random.int(0...(width - 3)), random.int(0...(height - 3)))
            let (x1, y1) = (random.int((x0 + 2)...width), random.int((y0 + 2)...height))
            for x in x0..<x1 { sides += [segment((x, y0), (x + 1, y0)), segment((x, y1), (x + 1, y1))] }
            for y in y0..<y1 { sides += [segment((x0, y), (x0, y + 1)), segment((x1, y), (x1, y + 1))] }
        case .hex(let layout):
            let centre = layout.cube(of: Cell(x: random.int(0...(width - 1)), y: random.int(0...(height - 1))))
            let inside = Set(centre.within(random.int(0...3)))
            for cube in inside.sorted(by: { ($0.q, $0.r) < ($1.q, $1.r) }) {
                for side in 0..<6 where !inside.contains(cube + Cube.directions[side]) {
                    let cell = layout.cell(of: cube)
                    guard (0..<width).contains(cell.x), (0..<height).contains(cell.y) else { continue }
                    sides.append(hexSide(cell, side))
                }
            }
        }
        // One or two doors, open or closed, and now and then a window.
        for _ in 0..<random.int(1...2) where !sides.isEmpty {
            let k = random.int(0...(sides.count - 1))
            sides[k]["door"] = .bool(true)
            sides[k]["open"] = .bool(random.int(0...1) == 1)
        }
        if !sides.isEmpty, random.int(0...2) == 0 { sides[random.int(0...(sides.count - 1))]["kind"] = .string("window") }
        return sides
    }

    static func loose(grid: Grid, width: Int, height: Int, random: inout SeededRandom) -> [String: JSONValue] {
        switch grid {
        case .square:
            let from = (random.int(0...width), random.int(0...height))
            switch random.int(0...3) {
            case 0: return segment(from, from)
            case 1:
                let d = random.int(-4...4)
                return segment(from, (min(width, max(0, from.0 + d)), min(height, max(0, from.1 + d))))
            default: return segment(from, (random.int(0...width), random.int(0...height)))
            }
        case .hex:
            return hexSide(Cell(x: random.int(0...(width - 1)), y: random.int(0...(height - 1))), random.int(0...5))
        }
    }

    static func segment(_ from: (Int, Int), _ to: (Int, Int)) -> [String: JSONValue] {
        ["from": .array([.number(Double(from.0)), .number(Double(from.1))]), "to": .array([.number(Double(to.0)), .number(Double(to.1))])]
    }

    static func hexSide(_ cell: Cell, _ side: Int) -> [String: JSONValue] {
        ["cell": .array([.number(Double(cell.x)), .number(Double(cell.y))]), "side": .number(Double(side))]
    }
}

/// Sight by brute force, written apart from ``SightMap``: each tile in range, each of its sample points, each wall.
struct Oracle {
    let grid: Grid
    let width: Int
    let height: Int
    /// Blocking walls as lattice segments.
    let segments: [((Int, Int), (Int, Int))]

    init(grid: Grid, width: Int, height: Int, walls: [[String: JSONValue]]) {
        (self.grid, self.width, self.height) = (grid, width, height)
        var segments: [((Int, Int), (Int, Int))] = []
        for wall in walls {
            let isOpenDoor = wall["door"] == .bool(true) && wall["open"] == .bool(true)
            guard wall["kind"] != .string("window"), !isOpenDoor else { continue }
            switch grid {
            case .square:
                guard case .array(let from)? = wall["from"], case .array(let to)? = wall["to"] else { continue }
                let n = (from + to).map { Int($0.numberValue!) * 4 }
                segments.append(((n[0], n[1]), (n[2], n[3])))
            case .hex(let layout):
                guard case .array(let cell)? = wall["cell"], let side = wall["side"]?.numberValue else { continue }
                let here = layout.cube(of: Cell(x: Int(cell[0].numberValue!), y: Int(cell[1].numberValue!)))
                let there = here + Cube.directions[Int(side)]
                // The side's ends: the two corners the hex shares with its neighbour across it.
                let shared = Set(Self.corners(here).map { [$0.0, $0.1] }).intersection(Self.corners(there).map { [$0.0, $0.1] })
                let ends = shared.sorted { $0.lexicographicallyPrecedes($1) }
                segments.append(((ends[0][0], ends[0][1]), (ends[1][0], ends[1][1])))
            }
        }
        self.segments = segments
    }

    /// A hex's corners in the axial lattice (six units a hex): each the centre of the triangle of it and two neighbours
    /// that neighbour each other.
    static func corners(_ cube: Cube) -> [(Int, Int)] {
        (0..<6).map { k in
            let (a, b) = (cube + Cube.directions[k], cube + Cube.directions[(k + 1) % 6])
            return (2 * (cube.q + a.q + b.q), 2 * (cube.r + a.r + b.r))
        }
    }

    func centre(_ cell: Cell) -> (Int, Int) {
        switch grid {
        case .square: return (4 * cell.x + 2, 4 * cell.y + 2)
        case .hex(let layout):
            let cube = layout.cube(of: cell)
            return (6 * cube.q, 6 * cube.r)
        }
    }

    func samples(_ cell: Cell) -> [(Int, Int)] {
        let c = centre(cell)
        switch grid {
        case .square: return [c] + [(-1, -1), (1, -1), (-1, 1), (1, 1)].map { (c.0 + $0.0, c.1 + $0.1) }
        case .hex(let layout): return [c] + Self.corners(layout.cube(of: cell)).map { ((c.0 + $0.0) / 2, (c.1 + $0.1) / 2) }
        }
    }

    func isWithin(_ range: Int?, _ eye: Cell, _ tile: Cell) -> Bool {
        guard let range else { return true }
        switch grid {
        case .square:
            let (dx, dy) = (tile.x - eye.x, tile.y - eye.y)
            return dx * dx + dy * dy <= range * range
        case .hex:
            // Centre to centre in the drawn plane, hexes one apart: (dq + dr/2)² + (√3/2 · dr)², times 4.
            let (a, b) = (centre(tile), centre(eye))
            let (dq, dr) = ((a.0 - b.0) / 6, (a.1 - b.1) / 6)
            return (2 * dq + dr) * (2 * dq + dr) + 3 * dr * dr <= 4 * range * range
        }
    }

    func seen(from eye: Cell, range: Int?) -> [Int] {
        let e = centre(eye)
        var seen: [Int] = []
        for y in 0..<height {
            for x in 0..<width where isWithin(range, eye, Cell(x: x, y: y)) {
                if samples(Cell(x: x, y: y)).contains(where: { p in !segments.contains { Self.meets(e, p, $0.0, $0.1) } }) {
                    seen.append(y * width + x)
                }
            }
        }
        return seen
    }

    /// Whether the segment e → p meets the closed segment a → b at a parameter t > 0 along e → p: solved as fractions.
    static func meets(_ e: (Int, Int), _ p: (Int, Int), _ a: (Int, Int), _ b: (Int, Int)) -> Bool {
        func cross(_ u: (Int, Int), _ v: (Int, Int)) -> Int { u.0 * v.1 - u.1 * v.0 }
        let r = (p.0 - e.0, p.1 - e.1)
        let s = (b.0 - a.0, b.1 - a.1)
        let q = (a.0 - e.0, a.1 - e.1)
        if r == (0, 0) { return false }
        let denominator = cross(r, s)
        if denominator == 0 {
            guard cross(q, r) == 0 else { return false }  // parallel, apart
            // On one line: a and b at parameters dot(·, r) / |r|² along e → p; some parameter in (0, 1] of [ta, tb]?
            let length = r.0 * r.0 + r.1 * r.1
            let ta = q.0 * r.0 + q.1 * r.1
            let tb = (b.0 - e.0) * r.0 + (b.1 - e.1) * r.1
            return max(ta, tb) > 0 && min(ta, tb) <= length
        }
        // t = cross(q, s) / d, u = cross(q, r) / d; met when 0 < t ≤ 1 and 0 ≤ u ≤ 1.
        let (t, u) = denominator > 0 ? (cross(q, s), cross(q, r)) : (-cross(q, s), -cross(q, r))
        let d = abs(denominator)
        return t > 0 && t <= d && u >= 0 && u <= d
    }
}

extension JSONValue {
    fileprivate var numberValue: Double? { if case .number(let value) = self { value } else { nil } }
}
