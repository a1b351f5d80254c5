import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Testing

/// A generator that returns fixed pictures, whatever it is asked: to check what Hoard accepts from plugins.
private struct CannedGenerator: PictureGenerator {
    let id = "test.canned"
    let isEnabledByDefault = true
    let pictures: [GeneratedPicture]
    func generate(_ request: GenerationRequest, source: UnsafeRawBufferPointer) throws(Problem) -> [GeneratedPicture] { pictures }
}

/// Imports a one-token pack (256×256 at @1x) with `generator` registered and makes its pictures: the import commits
/// whatever the generator does (it runs later, as a job); a job whose pictures are refused fails for good, records
/// nothing it made, and its problem is the pack's. Returns the pack's problems (empty when the pictures were made).
private func failure(with generator: CannedGenerator) async throws -> [JobProblem] {
    var registry = PluginRegistry.builtIn()
    try registry.register(generator: generator)
    let test = try TestHoard(registry: registry)
    defer { test.remove() }
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try Fixtures.zip(at: directory + "/one.zip", [("tokens/ogre.png", Fixtures.png(width: 256, height: 256))])
    let report = try await test.hoard.importPack(at: directory + "/one.zip")
    #expect(report.renditionJobs == 1)
    let before = try test.hoard.catalog.blobs()
    let run = await test.hoard.makeRenditions()
    let problems = try test.hoard.catalog.jobProblems(pack: report.pack, group: nil)
    if run.failed > 0 {
        #expect(try test.hoard.catalog.blobs() == before, "nothing a refused generator made is recorded")
        #expect(run.problems.allSatisfy { $0.entry == "tokens/ogre.png" })
        #expect(try test.hoard.catalog.packs().first?.renditions?.failed == 1)
    }
    return problems
}

@Suite("What Hoard accepts from generators")
struct GeneratorValidationTests {
    @Test func aWellBehavedGeneratorsPreviewIsStored() async throws {
        let preview = Fixtures.png(width: 32, height: 32, seed: 9)
        var registry = PluginRegistry.builtIn()
        try registry.register(generator: CannedGenerator(pictures: [GeneratedPicture(role: .preview, bytes: preview, mediaType: .png)]))
        let test = try TestHoard(registry: registry)
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Fixtures.zip(at: directory + "/one.zip", [("tokens/ogre.png", Fixtures.png(width: 256, height: 256))])
        let report = try await test.hoard.importPack(at: directory + "/one.zip")
        #expect(report.renditionJobs == 1)
        #expect(try test.hoard.catalog.assets().first?.pending == ["renditions"], "a generator that cannot say what it makes")
        #expect(await test.hoard.makeRenditions().done == 1)
        #expect(try test.hoard.catalog.blobs().contains { $0.size == Int64(preview.count) && $0.mediaType == "image/png" })
        #expect(try test.hoard.catalog.assets().first?.preview?.width == 32)
        #expect(try test.hoard.catalog.assets().first?.pending == nil)
    }

    @Test func aVariantAtAShippedScaleIsRefused() async throws {
        let picture = GeneratedPicture(role: .variant(scale: 1), bytes: Fixtures.png(width: 256, height: 256, seed: 5), mediaType: .png)
        #expect(try await failure(with: CannedGenerator(pictures: [picture])).map(\.code) == ["PLUGIN_FAILURE"])
    }

    @Test func bytesThatAreNoPictureAreRefused() async throws {
        let picture = GeneratedPicture(role: .thumbnail, bytes: Array("garbage".utf8), mediaType: .webp)
        #expect(try await failure(with: CannedGenerator(pictures: [picture])).map(\.code) == ["PLUGIN_FAILURE"])
    }

    @Test func aPictureLargerThanItsSourceIsRefused() async throws {
        let picture = GeneratedPicture(role: .preview, bytes: Fixtures.png(width: 10_000, height: 10_000), mediaType: .png)
        #expect(try await failure(with: CannedGenerator(pictures: [picture])).map(\.code) == ["PLUGIN_FAILURE"])
    }

    @Test func aLODThatDoesNotMatchTheShippedOnesIsRefused() async throws {
        let picture = GeneratedPicture(role: .variant(scale: 2), bytes: Fixtures.png(width: 512, height: 100), mediaType: .png)
        #expect(try await failure(with: CannedGenerator(pictures: [picture])).map(\.code) == ["PLUGIN_FAILURE"])
    }
}
