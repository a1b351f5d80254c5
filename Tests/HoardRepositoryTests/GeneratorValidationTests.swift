import Foundation
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

/// Imports a one-token pack (256×256 at @1x) with `generator` registered; returns the refusal's error codes.
private func refusal(with generator: CannedGenerator) async throws -> [ProblemCode] {
    var registry = PluginRegistry.builtIn()
    try registry.register(generator: generator)
    let test = try TestHoard(registry: registry)
    defer { test.remove() }
    let directory = try Fixtures.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try Fixtures.zip(at: directory + "/one.zip", [("tokens/ogre.png", Fixtures.png(width: 256, height: 256))])
    let before = try test.snapshot()
    do {
        _ = try await test.hoard.importPack(at: directory + "/one.zip")
        return []
    } catch {
        #expect(try test.snapshot() == before)
        #expect(error.errors.allSatisfy { $0.entry == "tokens/ogre.png" })
        return error.errors.map(\.code)
    }
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
        #expect(report.generatedFiles == 1)
        #expect(try test.hoard.catalog.blobs().contains { $0.size == Int64(preview.count) && $0.mediaType == "image/png" })
    }

    @Test func aVariantAtAShippedScaleIsRefused() async throws {
        let picture = GeneratedPicture(role: .variant(scale: 1), bytes: Fixtures.png(width: 256, height: 256, seed: 5), mediaType: .png)
        #expect(try await refusal(with: CannedGenerator(pictures: [picture])) == [.pluginFailure])
    }

    @Test func bytesThatAreNoPictureAreRefused() async throws {
        let picture = GeneratedPicture(role: .thumbnail, bytes: Array("garbage".utf8), mediaType: .webp)
        #expect(try await refusal(with: CannedGenerator(pictures: [picture])) == [.pluginFailure])
    }

    @Test func aPictureLargerThanItsSourceIsRefused() async throws {
        let picture = GeneratedPicture(role: .preview, bytes: Fixtures.png(width: 10_000, height: 10_000), mediaType: .png)
        #expect(try await refusal(with: CannedGenerator(pictures: [picture])) == [.pluginFailure])
    }

    @Test func aLODThatDoesNotMatchTheShippedOnesIsRefused() async throws {
        let picture = GeneratedPicture(role: .variant(scale: 2), bytes: Fixtures.png(width: 512, height: 100), mediaType: .png)
        #expect(try await refusal(with: CannedGenerator(pictures: [picture])) == [.pluginFailure])
    }
}
