import Testing

@testable import HoardCore

/// A plugin kind for tests.
private struct TestKind: AssetKindDefinition {
    var kind: AssetKind
    var folderNames: Set<String>
    var defaultFootprint = Footprint.single
    var checksFootprintAgainstPixels = false
    var acceptsSizeWords = false
}

/// A convention that names every picture a wall called by its file name, whatever its folder.
private struct EverythingIsAWall: NamingConvention {
    var id = "test.everything-is-a-wall"
    func interpret(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? {
        AssetNaming(kind: .wall, name: "wall:" + path.fileName, footprint: .single, scale: 1)
    }
}

/// A convention that never recognises anything.
private struct NeverMine: NamingConvention {
    var id = "test.never-mine"
    func interpret(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? { nil }
}

private struct NoOpProcessor: AssetProcessor {
    var id: String
    func process(_ assets: [PlannedAsset], packFile: PackFile) async throws -> [Problem] { [] }
}

private func entry(_ path: String) -> EntryPath {
    EntryPath(components: path.split(separator: "/").map(String.init))
}

/// Names `path` with `registry` and its own kinds.
private func name(_ path: String, with registry: PluginRegistry) throws -> AssetNaming? {
    try registry.name(entry(path), context: ConventionContext(packFile: PackFile(), kinds: registry.kinds))
}

@Test func theBuiltInRegistryHoldsTheSevenKindsAndTheDefaultConvention() {
    let registry = PluginRegistry.builtIn()
    #expect(registry.kinds.map(\.kind) == [.token, .object, .texture, .wall, .background, .dice, .audio])
    #expect(registry.conventions.map(\.id) == ["hoard.default"])
    #expect(registry.processors.isEmpty)
}

@Test func theBuiltInRegistryNamesDefaultLayoutFiles() throws {
    let registry = PluginRegistry.builtIn()
    let ogre = try #require(try name("tokens/ogre_2x2@2x.png", with: registry))
    #expect(ogre.kind == .token)
    #expect(ogre.footprint == Footprint(width: 2, height: 2))
    #expect(try name("backgrounds/parchment.jpg", with: registry)?.kind == .background)
    #expect(try name("dice/Red d20.png", with: registry)?.kind == .dice, "a die's faces are a dice asset")
    #expect(try name("Die/bone.png", with: registry)?.kind == .dice)
    #expect(try name("notes/readme.png", with: registry) == nil)
}

@Test func anEmptyRegistryNamesNothing() throws {
    let registry = PluginRegistry()
    #expect(registry.kinds.isEmpty)
    #expect(try name("tokens/goblin.png", with: registry) == nil)
}

@Test func registeringAKindIdTwiceIsAnError() {
    var registry = PluginRegistry.builtIn()
    let error = #expect(throws: ProblemMessage.self) {
        try registry.register(kind: TestKind(kind: .token, folderNames: ["critters"]))
    }
    #expect(error?.description.contains("token") == true)
    #expect(registry.kinds.count == BuiltInKind.all.count)
}

@Test func claimingAnotherKindsFolderNameIsAnError() {
    var registry = PluginRegistry.builtIn()
    let error = #expect(throws: ProblemMessage.self) {
        try registry.register(kind: TestKind(kind: AssetKind(rawValue: "creature"), folderNames: ["creatures", "tokens"]))
    }
    #expect(error?.description.contains("creature") == true)
    #expect(error?.description.contains("token") == true)
    #expect(!registry.kinds.contains { $0.kind.rawValue == "creature" })
}

@Test func aNewKindWithItsOwnFoldersIsNamedByTheDefaultConvention() throws {
    var registry = PluginRegistry.builtIn()
    try registry.register(kind: TestKind(kind: AssetKind(rawValue: "vehicle"), folderNames: ["vehicles", "vehicle"]))
    let cart = try #require(try name("Vehicles/cart_2x3.png", with: registry))
    #expect(cart.kind == AssetKind(rawValue: "vehicle"))
    #expect(cart.footprint == Footprint(width: 2, height: 3))
    #expect(cart.name == "cart")
}

@Test func registeringAConventionIdTwiceIsAnError() {
    var registry = PluginRegistry.builtIn()
    let error = #expect(throws: ProblemMessage.self) {
        try registry.register(convention: DefaultNamingConvention())
    }
    #expect(error?.description.contains("hoard.default") == true)
    #expect(throws: ProblemMessage.self) { try registry.register(convention: DefaultNamingConvention(), first: true) }
    #expect(registry.conventions.count == 1)
}

@Test func registeringAProcessorIdTwiceIsAnError() throws {
    var registry = PluginRegistry.builtIn()
    try registry.register(processor: NoOpProcessor(id: "test.thumbnails"))
    try registry.register(processor: NoOpProcessor(id: "test.strip"))
    let error = #expect(throws: ProblemMessage.self) {
        try registry.register(processor: NoOpProcessor(id: "test.thumbnails"))
    }
    #expect(error?.description.contains("test.thumbnails") == true)
    #expect(registry.processors.map(\.id) == ["test.thumbnails", "test.strip"])
}

@Test func aConventionRegisteredFirstWins() throws {
    var registry = PluginRegistry.builtIn()
    try registry.register(convention: EverythingIsAWall(), first: true)
    #expect(registry.conventions.map(\.id) == ["test.everything-is-a-wall", "hoard.default"])
    let naming = try #require(try name("tokens/goblin.png", with: registry))
    #expect(naming.kind == .wall)
    #expect(naming.name == "wall:goblin.png")
}

@Test func aConventionRegisteredLastIsOnlyAskedWhenEarlierOnesDecline() throws {
    var registry = PluginRegistry.builtIn()
    try registry.register(convention: EverythingIsAWall())
    #expect(registry.conventions.map(\.id) == ["hoard.default", "test.everything-is-a-wall"])
    #expect(try name("tokens/goblin.png", with: registry)?.kind == .token)
    #expect(try name("misc/goblin.png", with: registry)?.name == "wall:goblin.png")
}

@Test func aConventionThatDeclinesPassesThePathOn() throws {
    var registry = PluginRegistry.builtIn()
    try registry.register(convention: NeverMine(), first: true)
    #expect(try name("tokens/goblin.png", with: registry)?.kind == .token)
}

@Test func aConventionThatRefusesStopsTheSearch() throws {
    var registry = PluginRegistry()
    for kind in BuiltInKind.all { try registry.register(kind: kind) }
    try registry.register(convention: DefaultNamingConvention())
    try registry.register(convention: EverythingIsAWall())
    let problem = #expect(throws: Problem.self) { try name("tokens/ogre@5x.png", with: registry) }
    #expect(problem?.code == .badScale)
}
