/// A processor, as a plugin: looks at the assets of a pack before they are stored and reports problems.
///
/// Processors run after every entry is read and named, in registration order. They must not write to the
/// store themselves: they return data and Hoard validates and stores it.
public protocol AssetProcessor: Sendable {
    /// A unique, stable identifier, e.g. `hoard.strip-metadata`.
    var id: String { get }
    /// Inspects the planned assets and returns problems to report (warnings or errors). May be slow: it is
    /// called once per import.
    func process(_ assets: [PlannedAsset], packFile: PackFile) async throws -> [Problem]
}

/// An asset as planned by an import, before its descriptor is written: what processors see.
public struct PlannedAsset: Sendable, Hashable {
    /// The naming the conventions gave it.
    public var kind: AssetKind
    /// Its name.
    public var name: String
    /// Its footprint.
    public var footprint: Footprint
    /// Its variants (digests already known).
    public var variants: [AssetDescriptor.Variant]
    /// The entries the variants came from, in variant order.
    public var entries: [String]

    /// Creates a planned asset.
    public init(kind: AssetKind, name: String, footprint: Footprint, variants: [AssetDescriptor.Variant], entries: [String]) {
        self.kind = kind
        self.name = name
        self.footprint = footprint
        self.variants = variants
        self.entries = entries
    }
}

/// The one place plugins are registered: kinds, naming conventions and processors. A duplicate id is an error.
public struct PluginRegistry: Sendable {
    /// Registered kinds.
    public private(set) var kinds: [any AssetKindDefinition] = []
    /// Registered conventions, asked in this order.
    public private(set) var conventions: [any NamingConvention] = []
    /// Registered processors, run in this order.
    public private(set) var processors: [any AssetProcessor] = []

    /// An empty registry.
    public init() {}

    /// The built-in kinds and the default convention.
    public static func builtIn() -> PluginRegistry {
        // The built-in kinds have distinct ids and folder names (a test checks that registering them one by one
        // succeeds), so they are set directly rather than through the throwing register calls.
        var registry = PluginRegistry()
        registry.kinds = BuiltInKind.all
        registry.conventions = [DefaultNamingConvention()]
        return registry
    }

    /// Adds a kind; throws when its id or one of its folder names is taken.
    public mutating func register(kind: any AssetKindDefinition) throws(ProblemMessage) {
        if kinds.contains(where: { $0.kind == kind.kind }) {
            throw ProblemMessage("the kind '\(kind.kind)' is registered twice")
        }
        if let taken = kinds.first(where: { !$0.folderNames.isDisjoint(with: kind.folderNames) }) {
            throw ProblemMessage("kind '\(kind.kind)' claims a folder name of kind '\(taken.kind)'")
        }
        kinds.append(kind)
    }

    /// Adds a convention; `first` puts it before those registered so far.
    public mutating func register(convention: any NamingConvention, first: Bool = false) throws(ProblemMessage) {
        if conventions.contains(where: { $0.id == convention.id }) {
            throw ProblemMessage("the naming convention '\(convention.id)' is registered twice")
        }
        if first { conventions.insert(convention, at: 0) } else { conventions.append(convention) }
    }

    /// Adds a processor.
    public mutating func register(processor: any AssetProcessor) throws(ProblemMessage) {
        if processors.contains(where: { $0.id == processor.id }) {
            throw ProblemMessage("the processor '\(processor.id)' is registered twice")
        }
        processors.append(processor)
    }

    /// Names a path with the first convention that recognises it; nil when none does.
    public func name(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? {
        for convention in conventions {
            if let naming = try convention.interpret(path, context: context) { return naming }
        }
        return nil
    }
}
