import HoardCore

/// How a map's vision shows one participant their table (DESIGN.md, "Vision"): tiles they never explored are dark,
/// explored ones they do not see now dim, the rest lit. Read from the map the server sends them (their own `explored`
/// and `seen` only) or, for the host's "see the table as", from the host's map (everyone's).
public struct SessionVision: Sendable, Hashable {
    /// How one tile is drawn.
    public enum Shade: Sendable, Hashable {
        case dark, dim, lit
    }

    public let width: Int
    public let height: Int
    /// Tiles the participant explored (seen once), what the fog reveals included.
    public private(set) var explored: TileSet
    /// Tiles the participant sees now, what the fog reveals included.
    public private(set) var seen: TileSet

    /// The vision of `map` for `participant`; nil when the map's vision is off (then everything the map holds is lit).
    public init?(map: JSONValue, participant: String) {
        guard map["vision"]?["enabled"] == .bool(true) else { return nil }
        func side(_ value: JSONValue?) -> Int {
            if case .number(let number)? = value, (1...512).contains(number) { Int(number) } else { 512 }
        }
        (width, height) = (side(map["grid"]?["width"]), side(map["grid"]?["height"]))
        let (width, height) = (width, height)
        func tiles(_ rects: JSONValue?) -> TileSet {
            var set = TileSet(count: width * height)
            guard case .array(let items)? = rects else { return set }
            for rect in items.compactMap(TileRect.init(json:)) {
                for y in rect.y..<min(height, rect.y + rect.h) { for x in rect.x..<min(width, rect.x + rect.w) { set.insert(y * width + x) } }
            }
            return set
        }
        let revealed = tiles(map["fog"]?["revealed"])
        explored = tiles(map["vision"]?["explored"]?[participant])
        seen = tiles(map["vision"]?["seen"]?[participant])
        explored.formUnion(revealed)
        seen.formUnion(revealed)
    }

    /// How tile (x, y) is drawn.
    public func shade(x: Int, y: Int) -> Shade {
        guard (0..<width).contains(x), (0..<height).contains(y) else { return .dark }
        let tile = y * width + x
        return seen.contains(tile) ? .lit : explored.contains(tile) ? .dim : .dark
    }
}
