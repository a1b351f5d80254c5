/// How many grid tiles a piece of art covers: width × height, each from 1 to ``Footprint/maxTiles``.
///
/// Each kind caps its footprints lower (``AssetKindDefinition/maxFootprintSide``): 32 tiles a side for tokens and
/// objects, the whole largest grid for backgrounds.
public struct Footprint: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The largest side a footprint may have, in tiles: the largest grid a map may have (`map.schema.json`).
    public static let maxTiles = 512
    /// The largest side of a footprint of art placed on a map rather than being one (tokens, objects, tiles).
    public static let maxPlacedTiles = 32
    /// One tile.
    public static let single = Footprint(uncheckedWidth: 1, height: 1)

    /// Width in tiles.
    public let width: Int
    /// Height in tiles.
    public let height: Int

    /// A footprint, or nil when a side is outside 1...``maxTiles``.
    public init?(width: Int, height: Int) {
        guard (1...Self.maxTiles).contains(width), (1...Self.maxTiles).contains(height) else { return nil }
        self.width = width
        self.height = height
    }

    init(uncheckedWidth width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case width, height }
        let container = try decoder.container(keyedBy: Keys.self)
        let width = try container.decode(Int.self, forKey: .width)
        let height = try container.decode(Int.self, forKey: .height)
        guard let footprint = Footprint(width: width, height: height) else {
            throw DecodingError.dataCorruptedError(
                forKey: .width, in: container,
                debugDescription: "footprint \(width)x\(height) is outside 1...\(Self.maxTiles) tiles")
        }
        self = footprint
    }

    /// `WxH`, e.g. `2x2`.
    public var description: String { "\(width)x\(height)" }
}
