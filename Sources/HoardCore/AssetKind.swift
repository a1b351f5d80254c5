/// The identifier of an asset kind: `token`, `object`, `texture`, `wall`, `background`, or a plugin's.
///
/// Identifiers are lowercase ASCII words; the registry decides which exist.
public struct AssetKind: Sendable, Hashable, Comparable, Codable, RawRepresentable, CustomStringConvertible {
    /// The identifier, e.g. `token`.
    public let rawValue: String
    /// Wraps an identifier as is.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A creature or character placed on the grid.
    public static let token = AssetKind(rawValue: "token")
    /// Furniture, doors and other things placed on the grid.
    public static let object = AssetKind(rawValue: "object")
    /// A floor texture drawn into one tile.
    public static let texture = AssetKind(rawValue: "texture")
    /// A wall texture for snap-to-grid walls.
    public static let wall = AssetKind(rawValue: "wall")
    /// A main map background.
    public static let background = AssetKind(rawValue: "background")

    public var description: String { rawValue }
    public static func < (lhs: AssetKind, rhs: AssetKind) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A kind of asset, as a plugin: which folders hold it and what its pictures must satisfy.
///
/// Built-in kinds are registered through this same protocol. Implementations must be pure and cheap:
/// they run once per asset during import.
public protocol AssetKindDefinition: Sendable {
    /// The kind this definition describes; unique in a registry.
    var kind: AssetKind { get }
    /// Folder names (lowercase) that hold this kind at the top of a pack, e.g. `tokens`, `token`.
    var folderNames: Set<String> { get }
    /// The footprint used when a file name gives none.
    var defaultFootprint: Footprint { get }
    /// Whether the picture's pixel size must match footprint × tilePixels at scale 1 (a warning when not).
    var checksFootprintAgainstPixels: Bool { get }
    /// Whether file names of this kind may carry a size word (`_large`).
    var acceptsSizeWords: Bool { get }
}

/// The five kinds every Hoard knows, as plain definitions.
public struct BuiltInKind: AssetKindDefinition {
    public let kind: AssetKind
    public let folderNames: Set<String>
    public let defaultFootprint: Footprint
    public let checksFootprintAgainstPixels: Bool
    public let acceptsSizeWords: Bool

    /// The built-in definitions: token, object, texture, wall, background.
    public static let all: [BuiltInKind] = [
        BuiltInKind(kind: .token, folderNames: ["token", "tokens"], defaultFootprint: .single,
                    checksFootprintAgainstPixels: true, acceptsSizeWords: true),
        BuiltInKind(kind: .object, folderNames: ["object", "objects"], defaultFootprint: .single,
                    checksFootprintAgainstPixels: true, acceptsSizeWords: false),
        BuiltInKind(kind: .texture, folderNames: ["texture", "textures"], defaultFootprint: .single,
                    checksFootprintAgainstPixels: true, acceptsSizeWords: false),
        BuiltInKind(kind: .wall, folderNames: ["wall", "walls"], defaultFootprint: .single,
                    checksFootprintAgainstPixels: true, acceptsSizeWords: false),
        BuiltInKind(kind: .background, folderNames: ["background", "backgrounds"], defaultFootprint: .single,
                    checksFootprintAgainstPixels: false, acceptsSizeWords: false),
    ]
}
