/// The identifier of an asset kind: `token`, `object`, `texture`, `wall`, `background`, `dice`, `audio`, or a plugin's.
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
    /// A die's faces or colour set, that players choose to roll with.
    public static let dice = AssetKind(rawValue: "dice")
    /// A sound: music, ambience or an effect (``AudioHeader`` reads it; it has one variant and no picture).
    public static let audio = AssetKind(rawValue: "audio")

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
    /// The largest side of this kind's footprints, in tiles (at most ``Footprint/maxTiles``).
    var maxFootprintSide: Int { get }
    /// Whether this kind's pictures are whole maps (battlemaps): their pixel budget is ``ImportLimits/maxMapPixels``
    /// rather than ``ImportLimits/maxImagePixels``.
    var isMapArt: Bool { get }
}

extension AssetKindDefinition {
    /// ``Footprint/maxPlacedTiles`` unless the kind says otherwise.
    public var maxFootprintSide: Int { Footprint.maxPlacedTiles }
    /// False unless the kind says otherwise.
    public var isMapArt: Bool { false }
}

/// The seven kinds every Hoard knows, as plain definitions.
public struct BuiltInKind: AssetKindDefinition {
    public let kind: AssetKind
    public let folderNames: Set<String>
    public let defaultFootprint: Footprint
    public let checksFootprintAgainstPixels: Bool
    public let acceptsSizeWords: Bool
    public let maxFootprintSide: Int
    public let isMapArt: Bool

    /// The folder names (singular and plural, lowercase) that name each built-in kind: Hoard's own and the ones art
    /// creators and other tools use. PACKS.md lists them.
    public static let synonyms: [AssetKind: [String]] = [
        .token: ["token", "creature", "monster", "unit", "character", "npc", "pc", "hero", "enemy", "enemies", "mini",
                 "minis", "miniature", "people", "beast"],
        .object: ["object", "prop", "item", "furniture", "decor", "decoration", "clutter", "scatter"],
        .texture: ["texture", "tile", "floor", "terrain", "ground"],
        .wall: ["wall"],
        .background: ["background", "map", "battlemap", "battle map", "battle-map", "battle_map", "scene"],
        .dice: ["dice", "die"],
        .audio: ["audio", "music", "ambience", "ambient", "sound", "sfx", "soundtrack", "song", "playlist", "jukebox"],
    ]

    /// A word and its plural (`prop` → `prop`, `props`; `furniture` stays as it is; `-y` → `-ies`).
    static func forms(_ words: [String]) -> Set<String> {
        var forms = Set<String>()
        for word in words {
            forms.insert(word)
            if word == "furniture" || word == "people" || word == "enemies" || word == "minis" || word == "clutter"
                || word == "scatter" || word == "terrain" || word == "decor" || word == "dice" || word == "audio" || word == "music"
                || word == "sfx" || word == "ambient" {
                continue
            }
            forms.insert(word + (word.hasSuffix("o") ? "es" : "s"))
        }
        return forms
    }

    init(_ kind: AssetKind, checksFootprint: Bool, sizeWords: Bool = false, map: Bool = false) {
        self.kind = kind
        folderNames = Self.forms(Self.synonyms[kind] ?? [kind.rawValue])
        defaultFootprint = .single
        checksFootprintAgainstPixels = checksFootprint
        acceptsSizeWords = sizeWords
        maxFootprintSide = map ? Footprint.maxTiles : Footprint.maxPlacedTiles
        isMapArt = map
    }

    /// The built-in definitions: token, object, texture, wall, background, dice, audio.
    public static let all: [BuiltInKind] = [
        BuiltInKind(.token, checksFootprint: true, sizeWords: true),
        BuiltInKind(.object, checksFootprint: true),
        BuiltInKind(.texture, checksFootprint: true),
        BuiltInKind(.wall, checksFootprint: true),
        BuiltInKind(.background, checksFootprint: false, map: true),
        BuiltInKind(.dice, checksFootprint: false),
        BuiltInKind(.audio, checksFootprint: false),
    ]
}
