/// A map's grid: square tiles, or hexes in one of the four layouts tabletop apps use. The one place that knows how
/// cells neighbour, how far apart they are, which cells a token covers and where a cell is drawn.
///
/// Positions are always `(x, y)` = (column, row) in **offset coordinates**, so every op, fog rectangle and paint
/// rectangle keeps its form on every grid. On hexes the geometry works in **cube coordinates** (q, r, s with
/// q + r + s = 0: Red Blob Games' "Hexagonal Grids"), where neighbours are six fixed steps, distance is half the
/// sum of the three differences and rounding a fractional cell is exact.
public enum Grid: Sendable, Hashable {
    /// Square tiles: eight neighbours, distance in king moves, footprints are rectangles from their top-left tile.
    case square
    /// Hexes laid out as `layout` says.
    case hex(HexLayout)

    /// A map's `grid` object (`map.schema.json`): square when absent or when it names no type; nil when a type,
    /// orientation or offset is not one the schema allows.
    public init?(map grid: JSONValue?) {
        guard case .object(let members)? = grid else {
            self = .square
            return
        }
        func choice<T: RawRepresentable<String>>(_ key: String, default value: T) -> T? {
            guard let given = members[key] else { return value }
            return given.stringValue.flatMap(T.init(rawValue:))
        }
        switch members["type"] {
        case nil, .string("square")?:
            self = .square
        case .string("hex")?:
            guard let orientation = choice("orientation", default: HexLayout.Orientation.flat),
                let parity = choice("offset", default: HexLayout.Parity.odd)
            else { return nil }
            self = .hex(HexLayout(orientation, parity))
        default:
            return nil
        }
    }

    /// The cells `size` covers when placed at `cell`: on squares the `width × height` rectangle whose top-left is
    /// `cell`; on hexes (where a token's size is its width) 1, 3, 7 or 19 hexes for sizes 1 to 4, as MapTool's
    /// Medium, Large, Huge and Humongous: size 2 is `cell` and the two hexes below it and beside it (a triangle
    /// that meets at a corner, so it never sits off the grid), sizes 3 and 4 the rings around `cell`. Nil for a hex
    /// size over 4.
    public func cells(of size: Footprint, at cell: Cell) -> [Cell]? {
        switch self {
        case .square:
            return (0..<size.height).flatMap { dy in (0..<size.width).map { dx in Cell(x: cell.x + dx, y: cell.y + dy) } }
        case .hex(let layout):
            let centre = layout.cube(of: cell)
            let cubes: [Cube]
            switch size.width {
            case 1: cubes = [centre]
            case 2: cubes = [centre, centre + Cube.directions[0], centre + Cube.directions[1]]
            case 3, 4: cubes = centre.within(size.width - 2)
            default: return nil
            }
            return cubes.map(layout.cell(of:))
        }
    }

    /// Whether every cell `size` covers at `cell` is on a `columns × rows` grid.
    public func fits(_ size: Footprint, at cell: Cell, columns: Int, rows: Int) -> Bool {
        guard let cells = cells(of: size, at: cell) else { return false }
        return cells.allSatisfy { (0..<columns).contains($0.x) && (0..<rows).contains($0.y) }
    }

    /// The cells next to `cell`: eight on squares, six on hexes (some may be off the map).
    public func neighbours(of cell: Cell) -> [Cell] {
        switch self {
        case .square:
            return [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)].map { Cell(x: cell.x + $0, y: cell.y + $1) }
        case .hex(let layout):
            let cube = layout.cube(of: cell)
            return Cube.directions.map { layout.cell(of: cube + $0) }
        }
    }

    /// The fewest steps from `a` to `b` moving to a neighbour each step.
    public func distance(_ a: Cell, _ b: Cell) -> Int {
        switch self {
        case .square: return max(abs(a.x - b.x), abs(a.y - b.y))
        case .hex(let layout): return layout.cube(of: a).distance(to: layout.cube(of: b))
        }
    }
}

/// A cell of a grid, in offset coordinates: column `x`, row `y`.
public struct Cell: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }

    public var description: String { "(\(x), \(y))" }
}

/// A hex in cube coordinates: `q + r + s == 0`.
public struct Cube: Sendable, Hashable {
    public let q: Int
    public let r: Int
    public var s: Int { -q - r }

    public init(q: Int, r: Int) {
        self.q = q
        self.r = r
    }

    /// The six steps to a neighbour, each next to the one before (so 0 and 1 meet at a corner with the centre).
    public static let directions = [
        Cube(q: 1, r: 0), Cube(q: 0, r: 1), Cube(q: -1, r: 1), Cube(q: -1, r: 0), Cube(q: 0, r: -1), Cube(q: 1, r: -1),
    ]

    public static func + (a: Cube, b: Cube) -> Cube { Cube(q: a.q + b.q, r: a.r + b.r) }

    /// Hex steps between the two.
    public func distance(to other: Cube) -> Int {
        (abs(q - other.q) + abs(r - other.r) + abs(s - other.s)) / 2
    }

    /// This hex and every hex at most `radius` steps from it: 1, 7, 19, … (3n² + 3n + 1) hexes.
    public func within(_ radius: Int) -> [Cube] {
        (-radius...radius).flatMap { dq in
            (max(-radius, -dq - radius)...min(radius, -dq + radius)).map { dr in self + Cube(q: dq, r: dr) }
        }
    }

    /// The hex a fractional cube position falls in: each coordinate rounded, then the one that moved most is the
    /// one recomputed from the other two, so the three still sum to zero.
    public static func rounded(q: Double, r: Double) -> Cube {
        let s = -q - r
        var (rq, rr, rs) = (q.rounded(), r.rounded(), s.rounded())
        let (dq, dr, ds) = (abs(rq - q), abs(rr - r), abs(rs - s))
        if dq > dr, dq > ds {
            rq = -rr - rs
        } else if dr > ds {
            rr = -rq - rs
        }
        return Cube(q: Int(rq), r: Int(rr))
    }
}

/// How hexes sit: flat-topped in columns or pointy-topped in rows, and which columns (rows) are pushed half a hex
/// down (right). Foundry's four hex grids are these four.
public struct HexLayout: Sendable, Hashable {
    /// Flat tops (columns of hexes) or pointy tops (rows of hexes).
    public enum Orientation: String, Sendable, Hashable, CaseIterable, Codable {
        case flat, pointy
    }

    /// Which columns (flat) or rows (pointy) are pushed half a hex down (right): the odd ones or the even ones.
    public enum Parity: String, Sendable, Hashable, CaseIterable {
        case odd, even
    }

    public let orientation: Orientation
    public let parity: Parity

    public init(_ orientation: Orientation, _ parity: Parity) {
        self.orientation = orientation
        self.parity = parity
    }

    /// Every layout.
    public static let all = Orientation.allCases.flatMap { o in Parity.allCases.map { HexLayout(o, $0) } }

    /// The cube coordinates of an offset cell.
    public func cube(of cell: Cell) -> Cube {
        // `n & 1` is 0 or 1 for negative `n` too, and `n ∓ (n & 1)` is even: the halving is exact.
        switch (orientation, parity) {
        case (.flat, .odd): return Cube(q: cell.x, r: cell.y - (cell.x - (cell.x & 1)) / 2)
        case (.flat, .even): return Cube(q: cell.x, r: cell.y - (cell.x + (cell.x & 1)) / 2)
        case (.pointy, .odd): return Cube(q: cell.x - (cell.y - (cell.y & 1)) / 2, r: cell.y)
        case (.pointy, .even): return Cube(q: cell.x - (cell.y + (cell.y & 1)) / 2, r: cell.y)
        }
    }

    /// The offset cell of cube coordinates.
    public func cell(of cube: Cube) -> Cell {
        switch (orientation, parity) {
        case (.flat, .odd): return Cell(x: cube.q, y: cube.r + (cube.q - (cube.q & 1)) / 2)
        case (.flat, .even): return Cell(x: cube.q, y: cube.r + (cube.q + (cube.q & 1)) / 2)
        case (.pointy, .odd): return Cell(x: cube.q + (cube.r - (cube.r & 1)) / 2, y: cube.r)
        case (.pointy, .even): return Cell(x: cube.q + (cube.r + (cube.r & 1)) / 2, y: cube.r)
        }
    }
}

/// Where hex cells are drawn, for hexes whose pictures are `width × height` pixels (a hex's bounding box; art such as
/// Wesnoth's 72 × 72 flat hexes is wider than a regular hexagon, so the two sizes are kept apart). Cell (0, 0)'s box
/// starts at pixel (0, 0) in the odd layouts; the even ones are pushed half a hex so no cell starts above or left of
/// the origin.
public struct HexPixels: Sendable, Hashable {
    public let layout: HexLayout
    public let width: Double
    public let height: Double

    public init(layout: HexLayout, width: Double, height: Double) {
        self.layout = layout
        self.width = width
        self.height = height
    }

    /// The centre of `cell`, in pixels.
    public func centre(of cell: Cell) -> (x: Double, y: Double) {
        let cube = layout.cube(of: cell)
        let (q, r) = (Double(cube.q), Double(cube.r))
        let (ox, oy) = origin
        switch layout.orientation {
        case .flat: return (ox + width * 0.75 * q, oy + height * (r + q / 2))
        case .pointy: return (ox + width * (q + r / 2), oy + height * 0.75 * r)
        }
    }

    /// The cell whose hexagon holds the pixel (on an edge, one of the two).
    public func cell(atX x: Double, y: Double) -> Cell {
        let (ox, oy) = origin
        let (px, py) = (x - ox, y - oy)
        switch layout.orientation {
        case .flat:
            let q = px / (width * 0.75)
            return layout.cell(of: .rounded(q: q, r: py / height - q / 2))
        case .pointy:
            let r = py / (height * 0.75)
            return layout.cell(of: .rounded(q: px / width - r / 2, r: r))
        }
    }

    /// The centre of cell (0, 0).
    private var origin: (Double, Double) {
        switch (layout.orientation, layout.parity) {
        case (.flat, .odd): return (width / 2, height / 2)
        case (.flat, .even): return (width / 2, height)
        case (.pointy, .odd): return (width / 2, height / 2)
        case (.pointy, .even): return (width, height / 2)
        }
    }
}
