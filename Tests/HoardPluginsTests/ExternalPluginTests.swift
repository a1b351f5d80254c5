import Foundation
import HoardCore
import HoardRepository
import HoardPlugins
import Testing

/// Imports `entries` with the plugins installed in `fixtures`; returns the refusal's errors (empty when imported).
private func errors(_ fixtures: PluginFixtures, _ entries: [(String, String)], pack: String = "pack.zip") async throws -> [Problem] {
    let (hoard, loadErrors) = try fixtures.hoard()
    #expect(loadErrors.isEmpty)
    let archive = try fixtures.zip(pack, entries)
    do {
        _ = try await hoard.importPack(at: archive)
        return []
    } catch {
        #expect(try hoard.catalog.blobs().isEmpty, "a refused import stores nothing")
        return error.errors
    }
}

@Suite("Out-of-process plugins")
struct ExternalPluginTests {
    @Test func theForgottenAdventuresConventionNamesFilesEndToEnd() async throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try fixtures.install(example: "fa-naming")
        let (hoard, loadErrors) = try fixtures.hoard()
        #expect(loadErrors.isEmpty)
        let archive = try fixtures.zip("fa.zip", [
            ("Objects/Table_Wood_A1_2x1.png", "png:512:256"), ("Creatures/Goblin_Archer_Large_Scale150_03.png", "png:512:512"),
            ("FA_Tokens/Humanoids/Bandit_Medium_01.png", "png:256:256"),
        ])
        let report = try await hoard.importPack(at: archive)
        let assets = try hoard.catalog.assets(pack: report.pack, kind: nil)
        let named = Set(assets.map { "\($0.kind.rawValue) \($0.name) \($0.footprint)" })
        #expect(named == ["object Table Wood A1 2x1", "token Goblin Archer 03 2x2", "token Humanoids/Bandit 01 1x1"])
    }

    @Test func theExampleProcessorAddsAPreviewEndToEnd() async throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try fixtures.install(example: "png-preview")
        let (hoard, _) = try fixtures.hoard()
        let report = try await hoard.importPack(at: try fixtures.zip("preview.zip", [("tokens/ogre_2x2.png", "png:512:512")]))
        #expect(report.renditionJobs == 1)
        #expect(await hoard.makeRenditions().done == 1, "the plugin's preview is a job, made after the import")
        let pictures = try hoard.catalog.blobs().filter { $0.mediaType == "image/png" }
        #expect(pictures.count == 2, "the shipped picture and its 16×16 preview (8 px per tile) are stored")
    }

    @Test func aHangingPluginTimesOutAndTheFileIsRefused() async throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try fixtures.install(hostile: "hang", timeout: 2)
        let found = try await errors(fixtures, [("tokens/ogre.png", "png:256:256")])
        #expect(found.map(\.code) == [.pluginFailure])
        #expect(found.first?.entry == "tokens/ogre.png")
        #expect(found.first?.message.contains("did not answer in time") == true)
        #expect(found.first?.message.contains("it was stopped") == true)
    }

    @Test func aCrashingPluginIsAFileErrorAndIsRestartedForTheNextImport() async throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try fixtures.install(hostile: "crash-once")
        let (hoard, _) = try fixtures.hoard()
        let first = try fixtures.zip("one.zip", [("tokens/ogre.png", "png:256:256")])
        let refused = await #expect(throws: ImportError.self) { try await hoard.importPack(at: first) }
        #expect(refused?.errors.map(\.code) == [.pluginFailure])
        let report = try await hoard.importPack(at: try fixtures.zip("two.zip", [("tokens/ogre.png", "png:256:256")]))
        #expect(try hoard.catalog.assets(pack: report.pack, kind: nil).map(\.name) == ["renamed ogre"])
    }

    /// A plugin that always crashes, writes garbage, names a file outside the pack, or claims 10,000 tiles: each is a
    /// per-file error with its own code and words, and the import stores nothing.
    @Test(arguments: [
        ("crash", ProblemCode.pluginFailure, "process ended"), ("garbage", .pluginFailure, "not a protocol line"),
        ("outside", .unsafePath, "not a name inside the pack"), ("huge", .badFootprint, "10000×10000"),
    ])
    func aMisbehavingPluginIsAFileError(mode: String, code: ProblemCode, words: String) async throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try fixtures.install(hostile: mode)
        let found = try await errors(fixtures, [("tokens/ogre.png", "png:256:256")])
        #expect(found.map(\.code) == [code])
        #expect(found.first?.entry == "tokens/ogre.png")
        #expect(found.first?.message.contains(words) == true)
    }

    @Test func aFolderWithABadManifestIsReportedAndSkipped() throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try FileManager.default.createDirectory(atPath: fixtures.directory + "/plugins/broken", withIntermediateDirectories: true)
        try #"{"id": "Broken!", "version": "1", "protocol": 1, "hooks": ["naming"], "command": ["true"]}"#
            .write(toFile: fixtures.directory + "/plugins/broken/plugin.json", atomically: true, encoding: .utf8)
        let (hoard, loadErrors) = try fixtures.hoard()
        #expect(loadErrors.map(\.code) == [.badManifest])
        #expect(hoard.registry.conventions.map(\.id) == ["hoard.default"])
    }
}
