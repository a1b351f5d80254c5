import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Testing

/// One archive of tools/make-layouts.py's corpus (layouts.json) and what importing it must give.
struct LayoutCase: Decodable, CustomTestStringConvertible, Sendable {
    var file: String
    var pack: String
    var wrapper: String?
    var litter: Int
    var assets: [[String]]
    var warnings: [String: Int]
    var animated: [String: [Int?]]
    var documents: [String]
    var tilePixels: Int?
    var about: String

    var testDescription: String { file }

    static func load() -> [LayoutCase] { Fixtures.cases(Fixtures.layoutsDirectory, "layouts.json") }
}

@Suite("Packs laid out as people and other tools make them")
struct LayoutCorpusTests {
    @Test func corpusIsGenerated() throws {
        let directory = try Fixtures.layoutsDirectory.get()
        #expect(LayoutCase.load().count >= 6, "\(directory)")
    }

    @Test(arguments: LayoutCase.load())
    func layoutImportsWithItsKindsNamesAndFootprints(_ layout: LayoutCase) async throws {
        let directory = try Fixtures.layoutsDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let report = try await test.hoard.importPack(at: directory + "/" + layout.file)
        #expect(report.pack == layout.pack, "\(layout.about)")
        #expect(report.wrapperFolder == layout.wrapper)
        #expect(report.litterFiles == layout.litter)
        let assets = try test.hoard.catalog.assets(pack: layout.pack)
        let found = Set(assets.map { [$0.kind.rawValue, $0.name, $0.footprint.description] })
        #expect(found == Set(layout.assets), "\(layout.about)")
        #expect(try test.hoard.catalog.documents(ofPack: layout.pack).map(\.name) == layout.documents)
        let counts = Dictionary(grouping: report.warnings, by: \.code.rawValue).mapValues(\.count)
        #expect(counts == layout.warnings, "\(report.warnings.map(\.description))")
        if let tilePixels = layout.tilePixels {
            let manifest = try #require(try await test.hoard.store.read(report.manifestDigest, range: nil))
            #expect(try JSONDecoder().decode(PackManifest.self, from: Data(manifest)).tilePixels == tilePixels)
        }
        for asset in assets {
            let expected = layout.animated[asset.name]
            let bytes = try #require(try await test.hoard.store.read(asset.digest, range: nil))
            let descriptor = try JSONDecoder().decode(AssetDescriptor.self, from: Data(bytes))
            for variant in descriptor.variants {
                #expect(variant.isAnimated == (expected != nil), "\(asset.name)")
                #expect(variant.frames == expected?[0] ?? nil, "\(asset.name)")
                #expect(variant.durationMs == expected?[1] ?? nil, "\(asset.name)")
            }
        }
    }

    /// What the web page sends `POST /v1/pack-name` for a zip: its file paths and its pack.json (the root's, else the
    /// first one a folder down), read here with Python's zipfile as the page reads the central directory.
    static func uploaderFacts(of path: String) throws -> PackNaming.Facts {
        let script = """
            import json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            paths = [i.filename for i in z.infolist() if not i.filename.endswith('/')]
            packs = [p for p in paths if p == 'pack.json'] + [p for p in paths if p.count('/') == 1 and p.endswith('/pack.json')]
            pack = {'path': packs[0], 'text': z.read(packs[0]).decode()} if packs else None
            print(json.dumps({'fileName': sys.argv[1].split('/')[-1], 'paths': paths, 'packFile': pack}))
            """
        return try JSONDecoder().decode(PackNaming.Facts.self, from: Data(try Fixtures.run(["python3", "-c", script, path]).utf8))
    }

    @Test(arguments: LayoutCase.load().filter { $0.file.hasSuffix(".zip") })
    func theNameAnUploaderIsToldIsTheNameTheImportFilesItUnder(_ layout: LayoutCase) async throws {
        let directory = try Fixtures.layoutsDirectory.get()
        let facts = try Self.uploaderFacts(of: directory + "/" + layout.file)
        let test = try TestHoard()
        defer { test.remove() }
        let report = try await test.hoard.importPack(at: directory + "/" + layout.file)
        let predicted = PackNaming.predict(facts, kinds: test.hoard.registry.kinds)
        #expect(predicted.name == report.pack && predicted.isSure, "\(layout.about)")
        #expect((predicted.source == .wrapperFolder) == (layout.wrapper != nil && report.pack == layout.wrapper), "\(predicted)")
        var typed = facts
        typed.name = "  Typed Name "
        #expect(PackNaming.predict(typed, kinds: test.hoard.registry.kinds).name == "Typed Name")
        var unread = facts
        unread.paths = nil
        unread.packFile = nil
        let unsure = PackNaming.predict(unread, kinds: test.hoard.registry.kinds)
        #expect(!unsure.isSure && unsure.source == .fileName)
    }

    @Test func aSkippedFolderOfThousandsOfFilesIsOneWarning() async throws {
        let directory = try Fixtures.layoutsDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let report = try await test.hoard.importPack(at: directory + "/twenty-thousand.zip")
        let skipped = report.warnings.filter { $0.code == .ignoredEntry }
        #expect(skipped.map(\.entry) == ["extras/a/", "extras/b/", "extras/c/"])
        #expect(skipped.last?.message.contains("6667 files") == true, "\(skipped.last?.message ?? "")")
    }

    @Test func theDefaultKindWarningNamesTheFolderOnce() async throws {
        let directory = try Fixtures.layoutsDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let report = try await test.hoard.importPack(at: directory + "/creator-folders.zip")
        let defaulted = report.warnings.filter { $0.code == .defaultKind }
        #expect(defaulted.map(\.entry) == ["barrel_large.png", "Misc/"])
        #expect(defaulted.allSatisfy { $0.message.contains("token") && $0.message.contains("defaultKind") })
    }

    @Test func aPackJSONDefaultKindThatNoPluginProvidesIsRefused() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let before = try test.snapshot()
        let error = await #expect(throws: ImportError.self) {
            try await test.importZip([
                ("pack.json", Array(#"{"defaultKind": "vehicle"}"#.utf8)), ("tokens/goblin.png", Fixtures.png(width: 256, height: 256)),
            ])
        }
        #expect(error?.code == .badManifest)
        #expect(error?.errors.first?.message.contains("vehicle") == true)
        #expect(try test.snapshot() == before)
    }

    @Test func aFolderThatNamesAKindIsNoWrapper() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let report = try await test.importZip([
            ("tokens/goblin.png", Fixtures.png(width: 256, height: 256)), ("tokens/orc.png", Fixtures.png(width: 256, height: 256, seed: 1)),
        ], named: "only-tokens.zip")
        #expect(report.wrapperFolder == nil)
        #expect(report.pack == "only-tokens")
        #expect(report.assetsByKind == ["token": 2])
    }

    @Test func aWrappedPackJSONIsReadAndOverridesUseThePathInsideTheWrapper() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let packJSON = #"{"name": "Goblin Raiders", "overrides": {"tokens/boss": {"name": "Boss Goblin"}}}"#
        let report = try await test.importZip([
            ("Raiders/pack.json", Array(packJSON.utf8)), ("Raiders/tokens/boss.png", Fixtures.png(width: 256, height: 256)),
        ])
        #expect(report.pack == "Goblin Raiders")
        #expect(report.wrapperFolder == "Raiders")
        #expect(try test.hoard.catalog.assets(pack: "Goblin Raiders").map(\.name) == ["Boss Goblin"])
    }
}

@Suite("Pack documents: licence, readme, credits")
struct PackDocumentTests {
    /// Imports a zip of `entries` into a fresh Hoard; returns it and the report, or why the pack was refused.
    private func importing(_ entries: [(String, [UInt8])]) async throws -> (TestHoard, Result<ImportReport, ImportError>) {
        let test = try TestHoard()
        do {
            return (test, .success(try await test.importZip(entries, named: "docs.zip")))
        } catch let error as ImportError {
            return (test, .failure(error))
        }
    }

    @Test func documentsAtTheRootAreStoredAndListedByTheManifest() async throws {
        let licence = Array("CC BY 4.0: credit Example Art".utf8)
        let (test, result) = try await importing([
            ("pack.json", Array(#"{"name": "docs", "license": "CC-BY-4.0", "author": "Example Art"}"#.utf8)),
            ("tokens/goblin.png", Fixtures.png(width: 256, height: 256)), ("LICENSE", licence), ("Credits.md", Array("# Credits".utf8)),
            ("tokens/README.txt", Array("not at the root".utf8)),
        ])
        defer { test.remove() }
        let report = try result.get()
        let documents = try test.hoard.catalog.documents(ofPack: "docs")
        #expect(documents.map(\.name) == ["Credits.md", "LICENSE"])
        #expect(documents.map(\.mediaType) == ["text/markdown; charset=utf-8", "text/plain; charset=utf-8"])
        #expect(try await test.hoard.store.read(documents[1].digest, range: nil) == licence)
        let manifestBytes = try #require(try await test.hoard.store.read(report.manifestDigest, range: nil))
        let manifest = try JSONDecoder().decode(PackManifest.self, from: Data(manifestBytes))
        #expect(manifest.documents == documents)
        #expect(manifest.license == "CC-BY-4.0")
        #expect(report.warnings.contains { $0.code == .ignoredEntry && $0.entry == "tokens/README.txt" })
        // Garbage collection keeps them while the version lives.
        _ = try await test.hoard.collectGarbage(grace: 0)
        #expect(try await test.hoard.store.read(documents[1].digest, range: nil) == licence)
    }

    @Test func aPDFThatIsNotAPDFIsRefusedAndChangesNothing() async throws {
        let (test, result) = try await importing([
            ("tokens/goblin.png", Fixtures.png(width: 256, height: 256)), ("credits.pdf", Array("plain text".utf8)),
        ])
        defer { test.remove() }
        guard case .failure(let error) = result else {
            Issue.record("a fake PDF was accepted")
            return
        }
        #expect(error.code == .typeMismatch)
        #expect(error.errors.first?.entry == "credits.pdf")
        #expect(try test.hoard.catalog.packs().isEmpty)
    }

    @Test func aPackWithoutDocumentsKeepsItsManifestDigest() async throws {
        let (test, result) = try await importing([("tokens/goblin.png", Fixtures.png(width: 256, height: 256))])
        defer { test.remove() }
        let report = try result.get()
        let bytes = try #require(try await test.hoard.store.read(report.manifestDigest, range: nil))
        #expect(!String(decoding: bytes, as: UTF8.self).contains("documents"))
    }

    @Test(arguments: [
        ("LICENSE", true), ("licence.txt", true), ("COPYING", true), ("README.md", true), ("Readme.markdown", true),
        ("CREDITS.pdf", true), ("license-art.txt", true), ("LICENSE.png", false), ("licenses.txt", false), ("readme.docx", false),
        ("notes.txt", false),
    ])
    func documentNamesAreRecognised(_ name: String, _ isDocument: Bool) {
        #expect((PackDocument.mediaType(forFileName: name) != nil) == isDocument, "\(name)")
    }
}
