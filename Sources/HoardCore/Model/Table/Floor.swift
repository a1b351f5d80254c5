/// A rectangle of tiles: `[x, y, w, h]` on the wire (the paint and fog ops, the fog's revealed areas).
public struct TileRect: Sendable, Hashable {
    public var x: Int
    public var y: Int
    public var w: Int
    public var h: Int

    public init(x: Int, y: Int, w: Int, h: Int) {
        (self.x, self.y, self.w, self.h) = (x, y, w, h)
    }

    /// Most rectangles one op may carry.
    public static let maxPerOp = 4_096
    /// Most tiles one op's rectangles may cover, overlaps counted: the largest grid once.
    public static let maxTilesPerOp = 512 * 512

    /// Reads `[x, y, w, h]` (a corner on the 512 × 512 grid, sides of 1 to 512); nil when it is not one.
    public init?(json: JSONValue) {
        guard case .array(let items) = json, items.count == 4 else { return nil }
        let numbers = items.compactMap { item -> Int? in
            guard case .number(let value) = item, value == value.rounded(), (0...512).contains(value) else { return nil }
            return Int(value)
        }
        guard numbers.count == 4, numbers[0] < 512, numbers[1] < 512, numbers[2] >= 1, numbers[3] >= 1 else { return nil }
        self.init(x: numbers[0], y: numbers[1], w: numbers[2], h: numbers[3])
    }

    public var json: JSONValue { .array([x, y, w, h].map { .number(Double($0)) }) }

    /// Whether it lies inside a `width` × `height` grid.
    func fits(_ width: Int, _ height: Int) -> Bool { x + w <= width && y + h <= height }

    /// Its tiles' indices in a row-major grid `width` wide, row by row.
    func forEachTile(width: Int, _ body: (Int) -> Void) {
        for row in y..<(y + h) { for column in x..<(x + w) { body(row * width + column) } }
    }
}

/// The floor of a `hoard.map/v2` map, one palette index per tile, so that paint ops, fog and views are exact:
/// `background.palette` and `background.rects` are read into the tiles and written back from them (the same floor,
/// in its fewest rectangles, the palette holding the textures in use, in order of first use).
struct Floor: Sendable {
    /// A tile nobody painted (the default texture shows).
    static let unpainted: Int32 = -2
    /// A tile painted with the default texture (index -1 on the wire).
    static let defaultTexture: Int32 = -1

    let width: Int
    let height: Int
    /// The background's other members (`color`, `texture`) as they came.
    var fields: [String: JSONValue]
    /// Textures by index (some may no longer be in use).
    private var palette: [String] = []
    private var indexOf: [String: Int32] = [:]
    private var cells: [Int32]
    /// Tiles per palette index, and tiles where the default texture shows (painted -1 or unpainted): what the floor
    /// shows is known without reading every tile.
    private var uses: [Int] = []
    private var defaultUses = 0

    /// Reads the background; nil when it is not in the palette form (a v1 `tiles` list or an app's own shape).
    init?(_ background: JSONValue?, width: Int, height: Int) {
        (self.width, self.height) = (width, height)
        cells = [Int32](repeating: Self.unpainted, count: width * height)
        defaultUses = cells.count
        guard let background else {
            fields = [:]
            return
        }
        guard case .object(var members) = background, members["tiles"] == nil else { return nil }
        let givenPalette = members.removeValue(forKey: "palette")
        let givenRects = members.removeValue(forKey: "rects")
        fields = members
        var indices: [Int32] = []
        if case .array(let textures)? = givenPalette {
            for texture in textures { indices.append(texture.stringValue.map { index(of: $0) } ?? Self.unpainted) }
        }
        guard case .array(let rects)? = givenRects else { return }
        var budget = MapPalette.maxPaintedTiles  // what the server accepts (MapPalette.excess); a stored map is within it
        for case .array(let rect) in rects {
            let numbers = rect.compactMap { item -> Int? in
                if case .number(let value) = item, value == value.rounded(), abs(value) < 1e9 { Int(value) } else { nil }
            }
            guard numbers.count == rect.count, numbers.count == 5 || numbers.count == 3 else { continue }
            let (x, y) = (numbers[0], numbers[1])
            let (w, h, i) = numbers.count == 5 ? (numbers[2], numbers[3], numbers[4]) : (1, 1, numbers[2])
            // Off the grid: nothing to paint (the door refuses such maps; one stored before it is read without them).
            guard x >= 0, y >= 0, x < width, y < height, w >= 1, h >= 1, i >= -1, i < indices.count else { continue }
            let value = i == -1 ? Self.defaultTexture : indices[i]
            budget -= min(w, width) * min(h, height)
            guard budget >= 0 else { break }
            for row in y..<min(y + h, height) { for column in x..<min(x + w, width) { cells[row * width + column] = value } }
        }
        recount()
    }

    private mutating func recount() {
        uses = [Int](repeating: 0, count: palette.count)
        defaultUses = 0
        for value in cells { count(value, 1) }
    }

    private mutating func index(of texture: String) -> Int32 {
        if let known = indexOf[texture] { return known }
        palette.append(texture)
        uses.append(0)
        indexOf[texture] = Int32(palette.count - 1)
        return Int32(palette.count - 1)
    }

    /// Whether any tile is painted.
    var isPainted: Bool { cells.contains { $0 != Self.unpainted } }

    /// Paints the tiles of `rects` with `texture` (nil: the paint comes off); returns whether the set of textures the
    /// floor shows changed.
    @discardableResult
    mutating func paint(_ rects: [TileRect], texture: String?) -> Bool {
        let value = texture.map { index(of: $0) } ?? Self.unpainted
        let before = shown
        for rect in rects {
            rect.forEachTile(width: width) { tile in
                count(cells[tile], -1)
                cells[tile] = value
                count(value, 1)
            }
        }
        return shown != before
    }

    private mutating func count(_ value: Int32, _ change: Int) {
        if value >= 0 { uses[Int(value)] += change } else { defaultUses += change }
    }

    /// Which textures show (by palette index), and whether the default does.
    private var shown: (indices: [Bool], showsDefault: Bool) { (uses.map { $0 > 0 }, defaultUses > 0) }

    /// The tiles as `fog` lets them be seen (nil: all).
    private func visibleCells(_ fog: Fog?) -> [Int32] {
        guard let fog else { return cells }
        var visible = cells
        for tile in visible.indices where !fog.revealed[tile] { visible[tile] = Self.unpainted }
        return visible
    }

    /// The background as written: its fields, then the palette and the rectangles of the tiles `fog` lets be seen
    /// (the default texture only when a tile it shows in is seen).
    func json(under fog: Fog?) -> JSONValue {
        let visible = visibleCells(fog)
        var members = fields
        if fog != nil, !shown(under: fog).showsDefault { members["texture"] = nil }
        let (used, rects) = MapPalette.floor(visible, width: width, height: height)
        members["palette"] = .array(used.map { .string(palette[Int($0)]) })
        members["rects"] = .array(rects)
        return .object(members)
    }

    /// Which textures show (by palette index), and whether the default does, in the tiles `fog` lets be seen (nil:
    /// all, from the counts).
    private func shown(under fog: Fog?) -> (indices: [Bool], showsDefault: Bool) {
        guard let fog else { return shown }
        return shown { body in for tile in cells.indices where fog.revealed[tile] { body(tile) } }
    }

    /// Which textures show (by palette index), and whether the default does, in the tiles `forEachTile` visits.
    private func shown(_ forEachTile: ((Int) -> Void) -> Void) -> (indices: [Bool], showsDefault: Bool) {
        var inUse = [Bool](repeating: false, count: palette.count)
        var showsDefault = false
        forEachTile { tile in
            guard tile < cells.count else { return }
            let value = cells[tile]
            if value >= 0 { inUse[Int(value)] = true } else { showsDefault = true }
        }
        return (inUse, showsDefault)
    }

    /// The textures that show in `tiles`, the default texture included.
    func textures(at tiles: TileSet) -> Set<Digest> { digests(shown(tiles.forEach)) }

    /// The textures that show in the tiles `fog` lets be seen (nil: all), the default texture included.
    func textures(under fog: Fog?) -> Set<Digest> { digests(shown(under: fog)) }

    private func digests(_ shown: (indices: [Bool], showsDefault: Bool)) -> Set<Digest> {
        var digests = Set(palette.indices.filter { shown.indices[$0] }.compactMap { Digest(palette[$0]) })
        if shown.showsDefault, let texture = fields["texture"]?.stringValue.flatMap(Digest.init) { digests.insert(texture) }
        return digests
    }
}

/// Fog of war: which tiles players see. The host sees everything; a participant sees the floor, walls, objects and
/// tokens of revealed tiles only (and their own tokens wherever they are).
struct Fog: Sendable {
    let width: Int
    let height: Int
    var isEnabled: Bool
    /// One flag per tile, row by row.
    var revealed: [Bool]

    init(width: Int, height: Int, isEnabled: Bool = false) {
        (self.width, self.height, self.isEnabled) = (width, height, isEnabled)
        revealed = [Bool](repeating: false, count: width * height)
    }

    /// Reads the map's `fog` member; nil when it has none.
    init?(_ json: JSONValue?, width: Int, height: Int) {
        guard case .object(let members)? = json else { return nil }
        self.init(width: width, height: height, isEnabled: members["enabled"] == .bool(true))
        if case .array(let rects)? = members["revealed"] {
            var budget = MapPalette.maxPaintedTiles  // what the server accepts (MapPalette.excess)
            let within = rects.compactMap(TileRect.init(json:)).compactMap { $0.clipped(width, height) }.prefix { rect in
                budget -= rect.w * rect.h
                return budget >= 0
            }
            set(Array(within), to: true)
        }
    }

    mutating func set(_ rects: [TileRect], to value: Bool) {
        for rect in rects { rect.forEachTile(width: width) { revealed[$0] = value } }
    }

    /// Whether players see the tile (x, y); off the grid counts as fogged.
    func reveals(_ x: Int, _ y: Int) -> Bool {
        (0..<width).contains(x) && (0..<height).contains(y) && revealed[y * width + x]
    }

    /// Whether players see a wall from corner (x1, y1) to (x2, y2): when any tile it touches is revealed
    /// (``tiles(touchedByWallFrom:_:to:_:)``).
    func reveals(wallFrom x1: Int, _ y1: Int, to x2: Int, _ y2: Int) -> Bool {
        Self.tiles(touchedByWallFrom: x1, y1, to: x2, y2, width: width, height: height).contains { revealed[$0] }
    }

    /// The tiles (row-major indices) a wall from corner (x1, y1) to (x2, y2) touches: those whose square, edges and
    /// corners included, meets the segment. A wall along a grid line touches the tiles on both sides of it (and those
    /// at its ends' corners); a diagonal wall the tiles it crosses and those it grazes at a corner, never the rest of
    /// its bounding box. Corners off the grid are allowed (the tiles are clipped to the grid).
    static func tiles(touchedByWallFrom x1: Int, _ y1: Int, to x2: Int, _ y2: Int, width: Int, height: Int) -> [Int] {
        let (minX, maxX) = (min(x1, x2), max(x1, x2))
        guard width > 0, height > 0, maxX >= 0, minX <= width else { return [] }
        var tiles: [Int] = []
        for column in max(0, minX - 1)...min(width - 1, max(0, maxX)) {
            // The part of the segment over the column's span [column, column + 1].
            let (low, high) = (max(Double(column), Double(minX)), min(Double(column + 1), Double(maxX)))
            guard low <= high else { continue }
            let (yLow, yHigh): (Double, Double)
            if x1 == x2 {
                (yLow, yHigh) = (Double(min(y1, y2)), Double(max(y1, y2)))
            } else {
                let slope = Double(y2 - y1) / Double(x2 - x1)
                let (a, b) = (Double(y1) + (low - Double(x1)) * slope, Double(y1) + (high - Double(x1)) * slope)
                (yLow, yHigh) = (min(a, b), max(a, b))
            }
            let first = max(0, Int(yLow.rounded(.up)) - 1)
            let last = min(height - 1, Int(yHigh.rounded(.down)))
            guard first <= last else { continue }
            for row in first...last { tiles.append(row * width + column) }
        }
        return tiles
    }

    /// The tiles of `rects` players see, as rectangles (runs along rows).
    func clip(_ rects: [TileRect]) -> [TileRect] {
        var seen: [TileRect] = []
        for rect in rects {
            for row in rect.y..<(rect.y + rect.h) {
                var column = rect.x
                while column < rect.x + rect.w {
                    guard revealed[row * width + column] else { column += 1; continue }
                    let start = column
                    while column < rect.x + rect.w, revealed[row * width + column] { column += 1 }
                    seen.append(TileRect(x: start, y: row, w: column - start, h: 1))
                }
            }
        }
        return seen
    }

    /// `{"enabled": …, "revealed": [[x, y, w, h], …]}`, the revealed tiles in their fewest rectangles.
    var json: JSONValue {
        let cells = revealed.map { $0 ? Int32(0) : Floor.unpainted }
        let rects = MapPalette.rectangles(cells, width: width, height: height)
        return .object([
            "enabled": .bool(isEnabled),
            "revealed": .array(rects.map { .array([$0.x, $0.y, $0.w, $0.h].map { .number(Double($0)) }) }),
        ])
    }
}

extension TileRect {
    /// The part inside a `width` × `height` grid; nil when none is.
    func clipped(_ width: Int, _ height: Int) -> TileRect? {
        guard x < width, y < height else { return nil }
        return TileRect(x: x, y: y, w: min(w, width - x), h: min(h, height - y))
    }
}
