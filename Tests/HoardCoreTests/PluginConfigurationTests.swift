import Testing

@testable import HoardCore

/// A convention that names every picture a wall.
private struct AllWalls: NamingConvention {
    let id = "test.all-walls"
    func interpret(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? {
        AssetNaming(kind: .wall, name: path.fileName, footprint: .single, scale: 1)
    }
}

private func packFile(_ json: String) throws -> PackFile { try PackFile.parse(Array(json.utf8)).get() }

@Suite("Which plugins apply: server defaults and pack.json")
struct PluginConfigurationTests {
    @Test func theServerCanTurnADefaultPluginOffAndAPackCanTurnItBackOn() throws {
        var registry = PluginRegistry.builtIn()
        registry.serverDefaults["hoard.strip-metadata"] = false
        #expect(registry.rewriters(for: PackFile()).isEmpty)
        #expect(registry.rewriters(for: try packFile(#"{"plugins": {"hoard.strip-metadata": true}}"#)).map(\.id) == ["hoard.strip-metadata"])
    }

    @Test func aPackCanTurnANamingConventionOff() throws {
        var registry = PluginRegistry.builtIn()
        try registry.register(convention: AllWalls(), first: true)
        let path = EntryPath(components: ["tokens", "ogre.png"])
        let plain = ConventionContext(packFile: PackFile(), kinds: registry.kinds)
        #expect(try registry.name(path, context: plain)?.kind == .wall)
        let optOut = ConventionContext(packFile: try packFile(#"{"plugins": {"test.all-walls": false}}"#), kinds: registry.kinds)
        #expect(try registry.name(path, context: optOut)?.kind == .token)
    }
}
