import Foundation
import HoardCore
import HoardRepository
import Testing

/// One case of tools/make-hostile.py's corpus (cases.json and valid.json).
struct CorpusCase: Decodable, CustomTestStringConvertible, Sendable {
    var file: String
    var codes: [String]?
    var entry: String?
    var limits: ImportLimits?
    var about: String?
    var assets: Int?

    var testDescription: String { file }

    static func load(_ name: String) -> [CorpusCase] { Fixtures.cases(Fixtures.hostileDirectory, name) }
}

@Suite("Hostile and broken archives")
struct HostileArchiveTests {
    @Test func corpusIsGenerated() throws {
        let directory = try Fixtures.hostileDirectory.get()
        #expect(CorpusCase.load("cases.json").count >= 40, "\(directory)")
        #expect(CorpusCase.load("valid.json").count >= 4)
    }

    @Test(arguments: CorpusCase.load("cases.json"))
    func hostileArchiveIsRefusedAndChangesNothing(_ sample: CorpusCase) async throws {
        let directory = try Fixtures.hostileDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        // Something already stored must stay exactly as it is.
        _ = try await test.hoard.importPack(at: Fixtures.pack("scifi-outpost.zip"))
        let before = try test.snapshot()
        var options = Importer.Options()
        options.limits = sample.limits ?? ImportLimits()
        let error = await #expect(throws: ImportError.self, "\(sample.about ?? sample.file)") {
            try await test.hoard.importPack(at: directory + "/" + sample.file, options: options)
        }
        let codes = error?.errors.map(\.code.rawValue) ?? []
        #expect(codes.contains { sample.codes?.contains($0) == true }, "got \(error?.description ?? "no error")")
        if let entry = sample.entry {
            let named = error?.errors.contains { $0.entry == entry || ($0.entry ?? "").contains(entry) || $0.message.contains(entry) } ?? false
            #expect(named, "the error should name \(entry): \(error?.description ?? "")")
        }
        #expect(error?.errors.allSatisfy { !$0.message.isEmpty } ?? false)
        #expect(try test.snapshot() == before, "a refused archive must leave the store and catalog as they were")
    }

    @Test(arguments: CorpusCase.load("valid.json"))
    func trickyButValidArchiveImports(_ sample: CorpusCase) async throws {
        let directory = try Fixtures.hostileDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let report = try await test.hoard.importPack(at: directory + "/" + sample.file)
        #expect(report.assets == sample.assets, "\(sample.about ?? "")")
        #expect(Fixtures.files(under: test.path + "/blobs/v1/staging").isEmpty)
    }

    @Test func aGoodEntryBeforeABadOneIsNeverPublished() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = Fixtures.png(width: 256, height: 256, seed: 7)
        try Fixtures.zip(at: directory + "/mixed.zip", [("tokens/good.png", good), ("../evil.png", good)])
        await #expect(throws: ImportError.self) { try await test.hoard.importPack(at: directory + "/mixed.zip") }
        #expect(Fixtures.files(under: test.path + "/blobs").isEmpty)
        #expect(try test.hoard.catalog.blobs().isEmpty)
    }

    @Test func everyFileProblemIsReportedNotJustTheFirst() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Fixtures.zip(at: directory + "/many.zip", [
            ("tokens/a_40x40.png", Fixtures.png(width: 64, height: 64)),
            ("tokens/b.png", Array("not a picture".utf8)),
            ("textures/c@5x.png", Fixtures.png(width: 64, height: 64)),
            ("tokens/d.png", Fixtures.png(width: 20000, height: 20000)),
        ])
        let error = await #expect(throws: ImportError.self) { try await test.hoard.importPack(at: directory + "/many.zip") }
        let found = Dictionary(uniqueKeysWithValues: (error?.errors ?? []).map { ($0.entry ?? "", $0.code) })
        #expect(found == [
            "tokens/a_40x40.png": .badFootprint, "tokens/b.png": .typeMismatch, "textures/c@5x.png": .badScale,
            "tokens/d.png": .imageTooLarge,
        ])
    }

    @Test func aMissingFileIsAClearError() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let error = await #expect(throws: ImportError.self) { try await test.hoard.importPack(at: "/nonexistent/pack.zip") }
        #expect(error?.code == .unreadableInput)
    }
}
