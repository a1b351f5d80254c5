/// Line of sight on a map's grid: which tiles a token sees past the walls that block sight (DESIGN.md, "Who sees
/// what"). A tile is seen from an eye (the centre of the token's tile) when it is within range (centre to centre) and a
/// segment from the eye to one of the tile's **sample points** (its centre and the points halfway from the centre to
/// each corner: 5 on squares, 7 on hexes) meets no blocking wall, a wall's two ends included, at any point but the eye.
///
/// Everything is decided in integers on a **lattice** where the eye, sample points and wall ends are whole points:
/// squares at four units a tile (tile (x, y)'s centre is (4x + 2, 4y + 2), corners are multiples of 4); hexes in axial
/// coordinates (``Cube``'s q and r) at six units a hex (centre (6q, 6r), corners two units along two neighbouring
/// directions). A linear map takes the lattice to the drawn map and keeps which segments meet, so the answer is the
/// drawn map's, exactly.
public struct SightMap: Sendable {
    /// A point of the lattice.
    public struct Point: Sendable, Hashable {
        public var x: Int
        public var y: Int

        public init(_ x: Int, _ y: Int) {
            (self.x, self.y) = (x, y)
        }
    }

    /// A wall that blocks sight, between two lattice points.
    public struct Segment: Sendable, Hashable {
        public var a: Point
        public var b: Point

        public init(_ a: Point, _ b: Point) {
            (self.a, self.b) = (a, b)
        }
    }

    public let grid: Grid
    public let width: Int
    public let height: Int
    let lattice: Lattice
    /// Blocking walls by slot; nil once removed (the slot is reused).
    private var segments: [Segment?] = []
    private var slotOf: [String: Int] = [:]
    private var freeSlots: [Int] = []
    /// Slots of the walls whose bounding box meets each bucket of ``bucketSide`` × ``bucketSide`` tiles (in the
    /// lattice's tile columns and rows: offset columns on squares, axial q and r on hexes).
    private var buckets: [[Int32]]
    private let bucketColumns: Int
    private let bucketRows: Int
    /// The lattice's tile columns and rows the map covers (on hexes a parallelogram's box), as `min` and `count`.
    private let columns: (min: Int, count: Int)
    private let rows: (min: Int, count: Int)
    static let bucketSide = 8

    /// An empty map of `width` × `height` tiles: nothing blocks sight.
    public init(grid: Grid, width: Int, height: Int) {
        (self.grid, self.width, self.height) = (grid, width, height)
        lattice = Lattice(grid)
        var (minI, maxI, minJ, maxJ) = (Int.max, Int.min, Int.max, Int.min)
        for cell in [Cell(x: 0, y: 0), Cell(x: width - 1, y: 0), Cell(x: 0, y: height - 1), Cell(x: width - 1, y: height - 1)] {
            let (i, j) = lattice.index(of: cell)
            (minI, maxI, minJ, maxJ) = (min(minI, i), max(maxI, i), min(minJ, j), max(maxJ, j))
        }
        // On hexes a row's offset zig-zags by one between corners: one more column each side covers it.
        (minI, maxI, minJ, maxJ) = (minI - 1, maxI + 1, minJ - 1, maxJ + 1)
        columns = (minI, maxI - minI + 1)
        rows = (minJ, maxJ - minJ + 1)
        bucketColumns = (columns.count + Self.bucketSide - 1) / Self.bucketSide
        bucketRows = (rows.count + Self.bucketSide - 1) / Self.bucketSide
        buckets = Array(repeating: [], count: bucketColumns * bucketRows)
    }

    /// A map's walls as ``SightMap`` reads them: each wall that blocks sight (``blocksSight(_:)``), by id.
    public init(grid: Grid, width: Int, height: Int, walls: [[String: JSONValue]]) {
        self.init(grid: grid, width: width, height: height)
        for (index, wall) in walls.enumerated() { set(wall["id"]?.stringValue ?? "#\(index)", to: wall) }
    }

    /// Whether a wall blocks sight: every wall but a window (`"kind": "window"`) and an open door.
    public static func blocksSight(_ wall: [String: JSONValue]) -> Bool {
        wall["kind"] != .string("window") && !(wall["door"] == .bool(true) && wall["open"] == .bool(true))
    }

    /// The wall `id` as it is now (nil: gone), blocking sight or not.
    public mutating func set(_ id: String, to wall: [String: JSONValue]?) {
        let segment = wall.flatMap { Self.blocksSight($0) ? lattice.segment(of: $0) : nil }
        if let slot = slotOf[id], let old = segments[slot] {
            if old == segment { return }
            forEachBucket(of: old) { bucket in buckets[bucket].removeAll { $0 == Int32(slot) } }
            segments[slot] = nil
            slotOf[id] = nil
            freeSlots.append(slot)
        }
        guard let segment else { return }
        let slot = freeSlots.popLast() ?? segments.count
        if slot == segments.count { segments.append(segment) } else { segments[slot] = segment }
        slotOf[id] = slot
        forEachBucket(of: segment) { buckets[$0].append(Int32(slot)) }
    }

    /// The blocking walls, in the lattice.
    public var blockingSegments: [Segment] { segments.compactMap { $0 } }

    private func forEachBucket(of segment: Segment, _ body: (Int) -> Void) {
        let (i0, i1) = lattice.tiles(spanning: min(segment.a.x, segment.b.x), max(segment.a.x, segment.b.x))
        let (j0, j1) = lattice.tiles(spanning: min(segment.a.y, segment.b.y), max(segment.a.y, segment.b.y))
        let side = Self.bucketSide
        let (b0, b1) = (max(0, (i0 - columns.min) / side), min(bucketColumns - 1, (i1 - columns.min) / side))
        let (c0, c1) = (max(0, (j0 - rows.min) / side), min(bucketRows - 1, (j1 - rows.min) / side))
        guard b0 <= b1, c0 <= c1 else { return }
        for row in c0...c1 { for column in b0...b1 { body(row * bucketColumns + column) } }
    }

    /// The tiles seen from `cell` with sight `range` (whole tiles, centre to centre; nil: unlimited), as row-major
    /// indices (`y * width + x`), in increasing order. The eye's own tile is always seen; an eye off the map sees nothing.
    public func seen(from cell: Cell, range: Int?) -> [Int] {
        guard (0..<width).contains(cell.x), (0..<height).contains(cell.y) else { return [] }
        let (ei, ej) = lattice.index(of: cell)
        let eye = lattice.centre(ei, ej)
        // The window of lattice tiles that may be in range, within the map's box.
        let reach = range.map { lattice.reach(of: $0) } ?? Int.max / 4
        let i0 = max(columns.min, ei - reach), i1 = min(columns.min + columns.count - 1, ei + reach)
        let j0 = max(rows.min, ej - reach), j1 = min(rows.min + rows.count - 1, ej + reach)
        let w = i1 - i0 + 1
        let h = j1 - j0 + 1
        let full = lattice.fullMask
        // Per window tile: its map index (-1: off the map or out of range), and the sample points found blocked.
        var tileIndex = [Int32](repeating: -1, count: w * h)
        var blocked = [UInt8](repeating: 0, count: w * h)
        for j in j0...j1 {
            for i in i0...i1 {
                if let range, !lattice.isWithin(range, di: i - ei, dj: j - ej) { continue }
                let place = lattice.cell(i, j)
                guard (0..<width).contains(place.x), (0..<height).contains(place.y) else { continue }
                tileIndex[(j - j0) * w + i - i0] = Int32(place.y * width + place.x)
            }
        }
        // Each blocking wall near the window marks the sample points in its shadow.
        let side = Self.bucketSide
        let b0 = (i0 - columns.min) / side, b1 = (i1 - columns.min) / side
        let c0 = (j0 - rows.min) / side, c1 = (j1 - rows.min) / side
        var visited = Set<Int32>()
        let pitch = lattice.pitch, half = lattice.half, offset = lattice.offset
        let samples = lattice.samples
        for row in c0...c1 {
            for column in b0...b1 {
                for slot in buckets[row * bucketColumns + column] where visited.insert(slot).inserted {
                    guard let wall = segments[Int(slot)] else { continue }
                    let shadow = Shadow(eye: eye, wall: wall)
                    guard let (top, bottom) = shadow.yRange else { continue }
                    let first = max(j0, Self.ceilDiv(Int(top.rounded(.down)) - 1 - half - offset, pitch))
                    let last = min(j1, Self.floorDiv(Int(bottom.rounded(.up)) + 1 + half - offset, pitch))
                    guard first <= last else { continue }
                    for j in first...last {
                        let cy = pitch * j + offset
                        guard let (left, right) = shadow.xRange(Double(cy - half) - 0.5, Double(cy + half) + 0.5) else { continue }
                        let from = max(i0, Self.ceilDiv(Int(left.rounded(.down)) - 1 - half - offset, pitch))
                        let to = min(i1, Self.floorDiv(Int(right.rounded(.up)) + 1 + half - offset, pitch))
                        guard from <= to else { continue }
                        let base = (j - j0) * w - i0
                        for i in from...to where tileIndex[base + i] >= 0 && blocked[base + i] != full {
                            let cx = pitch * i + offset
                            var mask = blocked[base + i]
                            for (bit, sample) in samples.enumerated() where mask & (1 << bit) == 0 {
                                if Self.blocks(eye, Point(cx + sample.x, cy + sample.y), wall) { mask |= 1 << bit }
                            }
                            blocked[base + i] = mask
                        }
                    }
                }
            }
        }
        var seen: [Int] = []
        for k in tileIndex.indices where tileIndex[k] >= 0 && blocked[k] != full { seen.append(Int(tileIndex[k])) }
        seen.sort()
        return seen
    }

    /// Whether `target` is seen from `cell` without a range limit: ``seen(from:range:)``'s rule for one tile (what an
    /// ambient sound's tile asks of a hearer's), checking only the walls near the segment between them.
    public func sees(_ target: Cell, from cell: Cell) -> Bool {
        let map = { (c: Cell) in (0..<width).contains(c.x) && (0..<height).contains(c.y) }
        guard map(cell), map(target) else { return false }
        let (ei, ej) = lattice.index(of: cell)
        let (ti, tj) = lattice.index(of: target)
        let eye = lattice.centre(ei, ej)
        let centre = lattice.centre(ti, tj)
        let half = lattice.half
        // A wall that meets a segment to a sample point meets this box: it shares a bucket with it.
        let box = Segment(
            Point(min(eye.x, centre.x - half), min(eye.y, centre.y - half)), Point(max(eye.x, centre.x + half), max(eye.y, centre.y + half)))
        var near = Set<Int32>()
        forEachBucket(of: box) { near.formUnion(buckets[$0]) }
        let walls = near.compactMap { segments[Int($0)] }
        return lattice.samples.contains { sample in
            let point = Point(centre.x + sample.x, centre.y + sample.y)
            return !walls.contains { Self.blocks(eye, point, $0) }
        }
    }

    /// Whether the segment from the eye `e` to `p` meets the closed segment `wall` at a point other than `e`.
    public static func blocks(_ e: Point, _ p: Point, _ wall: Segment) -> Bool {
        let (a, b) = (wall.a, wall.b)
        if a == b {
            // A wall of no length: a point, met when it lies on the segment and is not the eye.
            return a != e && orientation(e, p, a) == 0 && min(e.x, p.x) <= a.x && a.x <= max(e.x, p.x)
                && min(e.y, p.y) <= a.y && a.y <= max(e.y, p.y)
        }
        let d1 = orientation(a, b, e)
        if d1 == 0 {
            // The eye is on the wall's line: only a segment along that line meets it elsewhere.
            guard orientation(a, b, p) == 0 else { return false }
            let alongX = a.x != b.x || e.x != p.x
            let (ue, up) = alongX ? (e.x, p.x) : (e.y, p.y)
            let (ua, ub) = alongX ? (a.x, b.x) : (a.y, b.y)
            let low = max(min(ue, up), min(ua, ub))
            let high = min(max(ue, up), max(ua, ub))
            return low < high || (low == high && low != ue)
        }
        let d2 = orientation(a, b, p)
        if (d1 > 0 && d2 > 0) || (d1 < 0 && d2 < 0) { return false }
        let d3 = orientation(e, p, a)
        let d4 = orientation(e, p, b)
        return !((d3 > 0 && d4 > 0) || (d3 < 0 && d4 < 0))
    }

    /// Twice the signed area of the triangle (a, b, c): positive when c is left of a → b.
    static func orientation(_ a: Point, _ b: Point, _ c: Point) -> Int {
        (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
    }

    static func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }
    static func ceilDiv(_ a: Int, _ b: Int) -> Int { -floorDiv(-a, b) }
}

extension SightMap {
    /// The lattice of a grid: where tiles' centres, sample points and wall ends are, in whole units.
    struct Lattice: Sendable {
        let grid: Grid
        /// Units between neighbouring centres along a lattice axis.
        let pitch: Int
        /// Tile (i, j)'s centre is (pitch·i + offset, pitch·j + offset).
        let offset: Int
        /// How far a sample point lies from its centre along each axis, at most.
        let half: Int
        /// The sample points, from their tile's centre: the centre, then halfway to each corner.
        let samples: [Point]

        init(_ grid: Grid) {
            self.grid = grid
            switch grid {
            case .square:
                (pitch, offset, half) = (4, 2, 1)
                samples = [Point(0, 0), Point(-1, -1), Point(1, -1), Point(-1, 1), Point(1, 1)]
            case .hex:
                (pitch, offset, half) = (6, 0, 2)
                samples = [Point(0, 0)] + Self.hexCorners.map { Point($0.x / 2, $0.y / 2) }
            }
        }

        /// A hex's corners from its centre, corner k between the sides toward `Cube.directions[k]` and `[k + 1]`.
        static let hexCorners: [Point] = (0..<6).map { k in
            let (d, e) = (Cube.directions[k], Cube.directions[(k + 1) % 6])
            return Point(2 * (d.q + e.q), 2 * (d.r + e.r))
        }

        /// A mask with one bit per sample point.
        var fullMask: UInt8 { UInt8((1 << samples.count) - 1) }

        /// The lattice tile of a cell: (x, y) on squares, (q, r) on hexes.
        func index(of cell: Cell) -> (Int, Int) {
            guard case .hex(let layout) = grid else { return (cell.x, cell.y) }
            let cube = layout.cube(of: cell)
            return (cube.q, cube.r)
        }

        /// The cell of lattice tile (i, j).
        func cell(_ i: Int, _ j: Int) -> Cell {
            guard case .hex(let layout) = grid else { return Cell(x: i, y: j) }
            return layout.cell(of: Cube(q: i, r: j))
        }

        func centre(_ i: Int, _ j: Int) -> Point { Point(pitch * i + offset, pitch * j + offset) }

        /// The lattice tiles along one axis whose centres bracket the lattice span [low, high]: a wall in it can only
        /// hide sample points from an eye when both are in a window that reaches one of them.
        func tiles(spanning low: Int, _ high: Int) -> (Int, Int) {
            (SightMap.floorDiv(low - offset, pitch), SightMap.ceilDiv(high - offset, pitch))
        }

        /// Whether a tile (di, dj) lattice tiles away is within `range`, centre to centre.
        func isWithin(_ range: Int, di: Int, dj: Int) -> Bool {
            switch grid {
            case .square: di * di + dj * dj <= range * range
            // Axial coordinates are 60° apart: a neighbour is 1 away, (1, 1) √3.
            case .hex: di * di + dj * dj + di * dj <= range * range
            }
        }

        /// The most lattice tiles along one axis a tile within `range` may be from the eye.
        func reach(of range: Int) -> Int {
            switch grid {
            case .square: range
            case .hex: range * 1155 / 1000 + 1  // 2/√3 ≈ 1.1547, rounded up
            }
        }

        /// A wall's ends in the lattice: corners `from` and `to` on squares, the two corners of `cell`'s `side` on
        /// hexes; nil when it has neither form.
        func segment(of wall: [String: JSONValue]) -> Segment? {
            func pair(_ value: JSONValue?) -> (Int, Int)? {
                guard case .array(let items)? = value, items.count == 2, case .number(let x) = items[0], case .number(let y) = items[1],
                    abs(x) < 1e6, abs(y) < 1e6
                else { return nil }
                return (Int(x), Int(y))
            }
            switch grid {
            case .square:
                guard let from = pair(wall["from"]), let to = pair(wall["to"]) else { return nil }
                return Segment(Point(4 * from.0, 4 * from.1), Point(4 * to.0, 4 * to.1))
            case .hex:
                guard let place = pair(wall["cell"]), case .number(let number)? = wall["side"], (0...5).contains(number) else { return nil }
                let side = Int(number)
                let (i, j) = index(of: Cell(x: place.0, y: place.1))
                let centre = centre(i, j)
                let (a, b) = (Self.hexCorners[(side + 5) % 6], Self.hexCorners[side])
                return Segment(Point(centre.x + a.x, centre.y + a.y), Point(centre.x + b.x, centre.y + b.y))
            }
        }
    }

    /// What a wall hides from an eye, as a convex region to find candidate sample points in (every point whose segment
    /// to the eye meets the wall lies in it; ``blocks(_:_:_:)`` decides each): the quadrilateral from the wall's ends out
    /// along the rays from the eye, far past any map.
    struct Shadow {
        /// The region's corners in order: the wall's ends and their far points.
        let corners: [(x: Double, y: Double)]

        init(eye: Point, wall: Segment) {
            // Far enough that the far side stays outside any map even for a wall seen at almost 180°.
            let far = 1e9
            func out(_ p: Point) -> (x: Double, y: Double) {
                let (dx, dy) = (Double(p.x - eye.x), Double(p.y - eye.y))
                let length = (dx * dx + dy * dy).squareRoot()
                guard length > 0 else { return (Double(p.x), Double(p.y)) }
                return (Double(p.x) + dx / length * far, Double(p.y) + dy / length * far)
            }
            let (a, b) = ((x: Double(wall.a.x), y: Double(wall.a.y)), (x: Double(wall.b.x), y: Double(wall.b.y)))
            if SightMap.orientation(wall.a, wall.b, eye) == 0 {
                // The eye on the wall's line: the line beyond it both ways (a thin region around it is enough).
                corners = [out(wall.a), a, b, out(wall.b)]
                    + (wall.a == eye || wall.b == eye ? [(x: Double(eye.x), y: Double(eye.y))] : [])
            } else {
                corners = [a, b, out(wall.b), out(wall.a)]
            }
        }

        /// The region's extent in y, widened by a unit.
        var yRange: (Double, Double)? {
            let ys = corners.map(\.y)
            guard let low = ys.min(), let high = ys.max() else { return nil }
            return (low - 1, high + 1)
        }

        /// The region's extent in x between the lines y = `top` and y = `bottom`, widened by a unit; nil when it does not
        /// reach that band.
        func xRange(_ top: Double, _ bottom: Double) -> (Double, Double)? {
            var (low, high) = (Double.infinity, -Double.infinity)
            func include(_ x: Double) { (low, high) = (min(low, x), max(high, x)) }
            for k in corners.indices {
                let p = corners[k]
                let q = corners[(k + 1) % corners.count]
                if p.y >= top && p.y <= bottom { include(p.x) }
                if (p.y < top && q.y > top) || (p.y > top && q.y < top) { include(p.x + (q.x - p.x) * (top - p.y) / (q.y - p.y)) }
                if (p.y < bottom && q.y > bottom) || (p.y > bottom && q.y < bottom) {
                    include(p.x + (q.x - p.x) * (bottom - p.y) / (q.y - p.y))
                }
            }
            guard low <= high else { return nil }
            return (low - 1, high + 1)
        }
    }
}
