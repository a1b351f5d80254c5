import Foundation
import HoardCore
import HoardRepository
import Testing

/// A second convention written only against HoardCore's protocols, as a third party would: Forgotten
/// Adventures-style names, `Props_FA/Table_Wood_A1_2x1.png` → a `prop` called "Table Wood A1", 2×1.
struct ForgottenAdventuresStyle: NamingConvention {
    let id = "test.forgotten-adventures"

    func interpret(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? {
        guard path.components.count == 2, path.components[0] == "Props_FA", path.fileName.hasSuffix(".png") else { return nil }
        var words = path.fileName.dropLast(4).split(separator: "_").map(String.init)
        var footprint = Footprint.single
        if let last = words.last, let x = last.firstIndex(of: "x"),
           let width = Int(last[..<x]), let height = Int(last[last.index(after: x)...]) {
            guard let parsed = Footprint(width: width, height: height) else {
                throw Problem(.badFootprint, "FA footprint \(last) is out of range", entry: path.description)
            }
            footprint = parsed
            words.removeLast()
        }
        return AssetNaming(kind: PropKind().kind, name: words.joined(separator: " "), footprint: footprint, scale: 1)
    }
}

/// A plugin kind: props, in `fa-props/` folders (`props/` names the built-in object kind), never checked against the grid.
struct PropKind: AssetKindDefinition {
    let kind = AssetKind(rawValue: "prop")
    let folderNames: Set<String> = ["fa-props", "fa-prop"]
    let defaultFootprint = Footprint.single
    let checksFootprintAgainstPixels = false
    let acceptsSizeWords = false
}

/// A processor that records what it saw and warns about every token.
final class CountingProcessor: AssetProcessor, @unchecked Sendable {
    let id = "test.counting"
    private let lock = NSLock()
    private(set) var seen: [String] = []

    func process(_ assets: [PlannedAsset], packFile: PackFile) async throws -> [Problem] {
        lock.withLock { seen += assets.map(\.name) }
        return assets.filter { $0.kind == .token }.map {
            Problem(.ignoredEntry, "counted \($0.name)", entry: $0.entries.first, severity: .warning)
        }
    }
}

@Suite("Plugins")
struct PluginTests {
    @Test func aSecondConventionAndKindWorkWithoutTouchingTheCore() async throws {
        var registry = PluginRegistry.builtIn()
        try registry.register(kind: PropKind())
        try registry.register(convention: ForgottenAdventuresStyle(), first: true)
        let test = try TestHoard(registry: registry)
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Fixtures.zip(at: directory + "/fa.zip", [
            ("Props_FA/Table_Wood_A1_2x1.png", Fixtures.png(width: 400, height: 200)),
            ("fa-props/barrel.png", Fixtures.png(width: 90, height: 90)),
            ("tokens/goblin.png", Fixtures.png(width: 256, height: 256)),
        ])
        let report = try await test.hoard.importPack(at: directory + "/fa.zip")
        #expect(report.assetsByKind == ["prop": 2, "token": 1])
        let props = try test.hoard.catalog.assets(kind: AssetKind(rawValue: "prop"))
        #expect(props.map(\.name).sorted() == ["Table Wood A1", "barrel"])
        #expect(props.first { $0.name == "Table Wood A1" }?.footprint == Footprint(width: 2, height: 1))
    }

    @Test func withoutThePluginTheSameFolderGetsTheDefaultKindWithAWarning() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Fixtures.zip(at: directory + "/fa.zip", [
            ("Props_FA/Table_Wood_A1_2x1.png", Fixtures.png(width: 400, height: 200)),
            ("tokens/goblin.png", Fixtures.png(width: 256, height: 256)),
        ])
        let report = try await test.hoard.importPack(at: directory + "/fa.zip")
        #expect(report.assetsByKind == ["token": 2])
        #expect(report.warnings.contains { $0.code == .defaultKind && $0.entry == "Props_FA/Table_Wood_A1_2x1.png" })
    }

    @Test func processorsSeeEveryPlannedAssetAndTheirProblemsAreReported() async throws {
        let processor = CountingProcessor()
        var registry = PluginRegistry.builtIn()
        try registry.register(processor: processor)
        let test = try TestHoard(registry: registry)
        defer { test.remove() }
        let report = try await test.hoard.importPack(at: Fixtures.pack("scifi-outpost.zip"))
        #expect(processor.seen.count == report.assets)
        #expect(report.warnings.filter { $0.message.hasPrefix("counted") }.count == report.assetsByKind["token"])
    }
}
