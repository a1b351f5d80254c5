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
public struct PlannedAsset: Sendable, Hashable, Codable {
    /// The naming the conventions gave it.
    public var kind: AssetKind
    /// Its name.
    public var name: String
    /// Its footprint.
    public var footprint: Footprint
    /// Its variants (digests already known).
    public var variants: [AssetDescriptor.Variant]
    /// The entries the variants came from, in variant order (a generated variant names its source's entry).
    public var entries: [String]
    /// The generated preview, once generators ran.
    public var preview: AssetDescriptor.Rendition?
    /// The generated thumbnail, once generators ran.
    public var thumbnail: AssetDescriptor.Rendition?

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
    /// Registered picture rewriters, run in this order on every picture before it is stored.
    public private(set) var rewriters: [any PictureRewriter] = []
    /// Registered generators, run in this order on every planned asset.
    public private(set) var generators: [any PictureGenerator] = []
    /// The server's choices, plugin id → on or off, overriding each plugin's own default; `pack.json` `plugins`
    /// overrides these in turn.
    public var serverDefaults: [String: Bool] = [:]

    /// An empty registry.
    public init() {}

    /// The built-in kinds, the default convention and metadata stripping.
    public static func builtIn() -> PluginRegistry {
        // The built-in kinds have distinct ids and folder names (a test checks that registering them one by one
        // succeeds), so they are set directly rather than through the throwing register calls.
        var registry = PluginRegistry()
        registry.kinds = BuiltInKind.all
        registry.conventions = [DefaultNamingConvention()]
        registry.rewriters = [MetadataStripper()]
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
        try Self.requireUnique(convention.id, among: conventions.map(\.id), "naming convention")
        if first { conventions.insert(convention, at: 0) } else { conventions.append(convention) }
    }

    /// Adds a processor.
    public mutating func register(processor: any AssetProcessor) throws(ProblemMessage) {
        try Self.requireUnique(processor.id, among: processors.map(\.id), "processor")
        processors.append(processor)
    }

    /// Adds a picture rewriter.
    public mutating func register(rewriter: any PictureRewriter) throws(ProblemMessage) {
        try Self.requireUnique(rewriter.id, among: rewriters.map(\.id), "picture rewriter")
        rewriters.append(rewriter)
    }

    /// The rewriters that apply to a pack: each one's default unless `pack.json` `plugins` says otherwise.
    public func rewriters(for packFile: PackFile) -> [any PictureRewriter] {
        rewriters.filter { isEnabled($0.id, byDefault: $0.isEnabledByDefault, for: packFile) }
    }

    /// Adds a generator.
    public mutating func register(generator: any PictureGenerator) throws(ProblemMessage) {
        try Self.requireUnique(generator.id, among: generators.map(\.id), "generator")
        generators.append(generator)
    }

    /// The generators that apply to a pack: each one's default unless `pack.json` `plugins` says otherwise.
    public func generators(for packFile: PackFile) -> [any PictureGenerator] {
        generators.filter { isEnabled($0.id, byDefault: $0.isEnabledByDefault, for: packFile) }
    }

    /// Throws when `id` is taken.
    private static func requireUnique(_ id: String, among ids: [String], _ what: String) throws(ProblemMessage) {
        if ids.contains(id) { throw ProblemMessage("the \(what) '\(id)' is registered twice") }
    }

    /// Whether the plugin `id` applies to a pack: `pack.json` `plugins`, else the server's choice, else `byDefault`.
    public func isEnabled(_ id: String, byDefault: Bool, for packFile: PackFile) -> Bool {
        packFile.isPluginEnabled(id, byDefault: serverDefaults[id] ?? byDefault)
    }

    /// Names a path with the first convention that recognises it (skipping those the pack or server turned off);
    /// nil when none does.
    public func name(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? {
        for convention in conventions where isEnabled(convention.id, byDefault: true, for: context.packFile) {
            if let naming = try convention.interpret(path, context: context) { return naming }
        }
        return nil
    }
}
