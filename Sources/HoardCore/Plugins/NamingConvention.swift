/// What a naming convention reads from one file's path.
public struct AssetNaming: Sendable, Hashable {
    /// The asset's kind.
    public var kind: AssetKind
    /// The asset's name, unique within its kind in a pack (sub-folders included: `monsters/ogre`).
    public var name: String
    /// Grid footprint.
    public var footprint: Footprint
    /// LOD scale of this file: 1, 2, 3, 4 or 8.
    public var scale: Int
    /// Whether the path itself gave the footprint (`_2x2`, a size word, an override) rather than the kind's default.
    /// A variant without one takes the footprint its siblings give (`dragon_4x4.png` + `dragon@2x.png`).
    public var isFootprintExplicit: Bool

    /// Creates a naming.
    public init(kind: AssetKind, name: String, footprint: Footprint, scale: Int, isFootprintExplicit: Bool = true) {
        self.kind = kind
        self.name = name
        self.footprint = footprint
        self.scale = scale
        self.isFootprintExplicit = isFootprintExplicit
    }

    /// The LOD scales a variant may have.
    public static let allowedScales: Set<Int> = [1, 2, 3, 4, 8]
}

/// What a convention may consult: the pack's own `pack.json` and the kinds the server knows.
public struct ConventionContext: Sendable {
    /// The pack's `pack.json`, or an empty one.
    public var packFile: PackFile
    /// Every registered kind.
    public var kinds: [any AssetKindDefinition]

    /// Creates a context.
    public init(packFile: PackFile, kinds: [any AssetKindDefinition]) {
        self.packFile = packFile
        self.kinds = kinds
    }

    /// The kind whose folder names include `folder` (any case), first from `pack.json`'s `kinds`, then the registry.
    public func kind(forFolder folder: String) -> (any AssetKindDefinition)? {
        let key = folder.lowercased()
        if let mapped = packFile.kinds?.first(where: { $0.key.lowercased() == key })?.value {
            return kinds.first { $0.kind == mapped }
        }
        return kinds.first { $0.folderNames.contains(key) }
    }

    /// The definition of a kind, if registered.
    public func definition(of kind: AssetKind) -> (any AssetKindDefinition)? {
        kinds.first { $0.kind == kind }
    }
}

/// A filename convention, as a plugin: turns a path inside a pack into a kind, a name, a footprint and a scale.
///
/// Conventions are asked in registration order; the first that returns a naming wins. Implementations must be
/// pure (no I/O) and fast: they run once per entry.
public protocol NamingConvention: Sendable {
    /// A unique, stable identifier, e.g. `hoard.default`.
    var id: String { get }
    /// Reads one picture's path. Returns nil when the path is not this convention's to name (the next one is
    /// asked), or throws a ``Problem`` (code and message for the pack author) when it is but breaks a rule.
    func interpret(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming?
}

extension Problem: Error {}
