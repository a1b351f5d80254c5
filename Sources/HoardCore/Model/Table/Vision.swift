/// A set of a map's tiles by row-major index (`y * width + x`), one bit each.
public struct TileSet: Sendable, Hashable {
    private(set) var words: [UInt64]

    public init(count: Int) { words = [UInt64](repeating: 0, count: (count + 63) / 64) }

    public init(count: Int, _ tiles: some Sequence<Int>) {
        self.init(count: count)
        for tile in tiles { insert(tile) }
    }

    public func contains(_ tile: Int) -> Bool { tile >= 0 && tile / 64 < words.count && words[tile / 64] & (1 << UInt64(tile % 64)) != 0 }

    public mutating func insert(_ tile: Int) { words[tile / 64] |= 1 << UInt64(tile % 64) }

    /// Adds `other`'s tiles; returns whether any was new.
    @discardableResult
    public mutating func formUnion(_ other: TileSet) -> Bool {
        var grew = false
        for k in words.indices where other.words[k] & ~words[k] != 0 {
            words[k] |= other.words[k]
            grew = true
        }
        return grew
    }

    /// The tiles of this set that are not in `other`.
    func subtracting(_ other: TileSet) -> TileSet {
        var rest = self
        for k in words.indices where k < other.words.count { rest.words[k] &= ~other.words[k] }
        return rest
    }

    public var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    /// Every tile, in increasing order.
    public func forEach(_ body: (Int) -> Void) {
        for (k, word) in words.enumerated() where word != 0 {
            var rest = word
            while rest != 0 {
                body(k * 64 + rest.trailingZeroBitCount)
                rest &= rest - 1
            }
        }
    }

    /// The tiles as rectangles `[x, y, w, h]` on a `width` × `height` grid (the fewest ``MapPalette`` finds).
    func rects(width: Int, height: Int) -> [TileRect] {
        var cells = [Int32](repeating: Floor.unpainted, count: width * height)
        forEach { cells[$0] = 0 }
        return MapPalette.rectangles(cells, width: width, height: height).map { TileRect(x: $0.x, y: $0.y, w: $0.w, h: $0.h) }
    }
}

/// Vision (`vision` in the map): whether players see only what their tokens see (DESIGN.md, "Who sees what"), and
/// the tiles each participant has explored (seen once), which the table keeps across folds and restarts.
struct Vision: Sendable {
    var isEnabled: Bool
    /// Explored tiles by participant id.
    var explored: [String: TileSet]

    /// Reads the map's `vision`; nil when it has none.
    init?(_ json: JSONValue?, width: Int, height: Int) {
        guard case .object(let members)? = json else { return nil }
        isEnabled = members["enabled"] == .bool(true)
        explored = [:]
        if case .object(let entries)? = members["explored"] {
            for (participant, value) in entries {
                guard case .array(let rects) = value else { continue }
                var tiles = TileSet(count: width * height)
                for rect in rects.compactMap(TileRect.init(json:)).compactMap({ $0.clipped(width, height) }) {
                    rect.forEachTile(width: width) { tiles.insert($0) }
                }
                explored[participant] = tiles
            }
        }
    }

    init(isEnabled: Bool) {
        self.isEnabled = isEnabled
        explored = [:]
    }

    /// `{"enabled": …, "explored": {participant: rects}, "seen": {participant: rects}}` (`seen`: the tiles each sees
    /// now, for the page to light; not read back), for the host (`only`: nil) or one participant.
    func json(width: Int, height: Int, seen: [String: TileSet], only participant: String?) -> JSONValue {
        func entries(_ sets: [String: TileSet]) -> JSONValue {
            var entries: [String: JSONValue] = [:]
            for (id, tiles) in sets where participant == nil || participant == id {
                entries[id] = .array(tiles.rects(width: width, height: height).map(\.json))
            }
            return .object(entries)
        }
        return .object(["enabled": .bool(isEnabled), "explored": entries(explored), "seen": entries(seen)])
    }
}

/// A token's sight (`sight` in the map): how far it sees (nil: without limit), and the participants besides its owner
/// who see what it sees.
struct TokenSight: Sendable, Hashable {
    var range: Int?
    var sharedWith: [String]

    /// Reads a token's `sight`; nil when it has none or it is not one.
    init?(_ json: JSONValue?) {
        guard case .object(let members)? = json else { return nil }
        if case .number(let range)? = members["range"] { self.range = Int(range) } else { range = nil }
        if case .array(let ids)? = members["sharedWith"] { sharedWith = ids.compactMap(\.stringValue) } else { sharedWith = [] }
    }

    /// Who sees through the token: its owner and those it is shared with.
    static func viewers(of token: [String: JSONValue]) -> [String] {
        guard let sight = TokenSight(token["sight"]) else { return [] }
        return (token["owner"]?.stringValue.map { [$0] } ?? []) + sight.sharedWith
    }
}
