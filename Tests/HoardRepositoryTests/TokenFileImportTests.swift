import Foundation
import HoardCore
import HoardRepository
import Testing

/// MapTool token files (`.rptok`) import as tokens named and sized by their `content.xml`, inside a pack or alone;
/// the corpora (make-layouts.py, make-hostile.py) cover the layouts and the hostile files.
@Suite struct TokenFileImportTests {
    @Test func aTokenFileStoresItsOwnImageAsAToken() async throws {
        let directory = try Fixtures.layoutsDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let report = try await test.hoard.importPack(at: directory + "/maptool-tokens.zip")
        #expect(report.assetsByKind == ["token": 9])
        let ogre = try #require(try test.hoard.catalog.assets(pack: "maptool-tokens").first { $0.name == "Ogre" })
        let bytes = try #require(try await test.hoard.store.read(ogre.digest, range: nil))
        let descriptor = try JSONDecoder().decode(AssetDescriptor.self, from: Data(bytes))
        let base = try #require(descriptor.variants.first { $0.scale == 1 })
        #expect((base.width, base.height, base.mediaType) == (128, 128, .png))
        let footprint = report.warnings.filter { $0.code == .badFootprint }
        #expect(footprint.map(\.entry) == ["tokens/hex-bee.rptok"] && footprint.allSatisfy { $0.severity == .warning })
    }

    @Test func aTokenFileUploadedWithoutANameMakesAPackNamedAfterItsToken() async throws {
        let directory = try Fixtures.layoutsDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let spool = test.path + "/3f1c.upload"
        try FileManager.default.copyItem(atPath: directory + "/Lone Goblin.rptok", toPath: spool)
        var options = Importer.Options()
        options.namesFromFileName = false
        let report = try await test.hoard.importPack(at: spool, options: options)
        #expect(report.pack == "Goblin Skirmisher")
        #expect(try test.hoard.catalog.assets(pack: "Goblin Skirmisher").map(\.name) == ["Goblin Skirmisher"])
    }

    @Test func aHostileTokenFileRefusesItsPackWholeAndNamesItself() async throws {
        let directory = try Fixtures.hostileDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let before = try test.snapshot()
        await #expect {
            _ = try await test.hoard.importPack(at: directory + "/rptok-entity-expansion.zip")
        } throws: { error in
            let problem = (error as? ImportError)?.errors.first
            return problem?.code == .badTokenFile && problem?.entry == "tokens/bad.rptok" && problem?.message.contains("DTD") == true
        }
        #expect(try test.snapshot() == before)
    }

    @Test func aPacksTokenFilesShareItsEntryBudgetAndTheRefusalSaysSo() async throws {
        let directory = try Fixtures.hostileDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        var options = Importer.Options()
        options.limits.maxEntries = 12
        await #expect {
            _ = try await test.hoard.importPack(at: directory + "/rptok-shared-entries.zip", options: options)
        } throws: { error in
            let problem = (error as? ImportError)?.errors.first
            return problem?.code == .tooManyEntries && problem?.entry == "tokens/bad.rptok"
                && problem?.message.contains("the pack and its token files hold more than 12 entries") == true
        }
    }
}
