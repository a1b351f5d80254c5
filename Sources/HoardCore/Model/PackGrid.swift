/// The grid a pack's art was made for (`pack.json`'s `grid`): square tiles (the default), or hexes, flat-topped or
/// pointy-topped. A hex pack's `tilePixels` is a hex's bounding box along its long side (corner to corner); the other
/// side may be shorter, down to a regular hexagon's (√3/2 of it), so transparent corners are not a smaller picture.
public struct PackGrid: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `square` or `hex`.
    public enum Kind: String, Sendable, Hashable, Codable {
        case square, hex
    }

    /// The kind of grid.
    public var type: Kind
    /// On hexes, flat tops (columns) or pointy tops (rows); absent on squares.
    public var orientation: HexLayout.Orientation?

    /// A grid; a hex grid's orientation defaults to flat, as a map's does, and a square one has none.
    public init(type: Kind, orientation: HexLayout.Orientation? = nil) {
        self.type = type
        self.orientation = type == .hex ? orientation ?? .flat : nil
    }

    enum CodingKeys: String, CodingKey { case type, orientation }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(Kind.self, forKey: .type)
        let orientation = try container.decodeIfPresent(HexLayout.Orientation.self, forKey: .orientation)
        if type == .square, orientation != nil {
            throw DecodingError.dataCorruptedError(
                forKey: .orientation, in: container, debugDescription: "a square grid has no orientation; remove it, or say \"type\": \"hex\"")
        }
        self.init(type: type, orientation: orientation)
    }

    /// Square tiles.
    public static let square = PackGrid(type: .square)

    /// Whether the grid is hexes.
    public var isHex: Bool { type == .hex }

    /// `square`, `hex-flat` or `hex-pointy`: how the catalog keeps it, and the listing's filter value.
    public var description: String { orientation.map { "hex-\($0.rawValue)" } ?? "square" }

    /// The grid a ``description`` names; nil for any other text.
    public init?(_ text: String) {
        switch text {
        case "square": self = .square
        case "hex-flat": self.init(type: .hex, orientation: .flat)
        case "hex-pointy": self.init(type: .hex, orientation: .pointy)
        default: return nil
        }
    }

    /// The shortest a picture's side may be against the `footprint × tilePixels` it should measure: a regular
    /// hexagon's short side is √3/2 (0.866) of its long one; on squares both sides are the full length.
    public var shortestSide: Double { isHex ? 3.0.squareRoot() / 2 : 1 }
}
