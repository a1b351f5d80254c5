import Foundation
import HoardCore
import HoardRepository
import Testing

/// A generator that records the media type of every source it is handed.
final class RecordingGenerator: PictureGenerator, @unchecked Sendable {
    let id = "test.recording"
    let isEnabledByDefault = true
    private let lock = NSLock()
    private var seen: [MediaType] = []

    var sources: [MediaType] { lock.withLock { seen } }

    func generate(_ request: GenerationRequest, source: UnsafeRawBufferPointer) throws(Problem) -> [GeneratedPicture] {
        lock.withLock { seen.append(request.source.mediaType) }
        return []
    }
}

@Suite("Audio packs")
struct AudioImportTests {
    @Test func generatorsAreNeverHandedASound() async throws {
        let directory = try Fixtures.audioDirectory.get()
        let generator = RecordingGenerator()
        var registry = PluginRegistry.builtIn()
        try registry.register(generator: generator)
        let test = try TestHoard(registry: registry)
        defer { test.remove() }
        _ = try await test.hoard.importPack(at: directory + "/audio-pack.zip")
        let run = await test.hoard.makeRenditions()
        #expect(run.failed == 0, "\(run.problems)")
        #expect(generator.sources == [.png], "only the pack's one picture (tokens/goblin.png): \(generator.sources)")
    }

    @Test func audioPackImportsItsSoundsAsAudioAssets() async throws {
        let directory = try Fixtures.audioDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let report = try await test.hoard.importPack(at: directory + "/audio-pack.zip")
        #expect(report.assetsByKind["audio"] == 7, "\(report.assetsByKind)")
        #expect(report.assetsByKind["token"] == 1)
        let warned = Set(report.warnings.compactMap(\.entry))
        #expect(warned.contains("Music/cover.png"), "a picture in a folder of sounds is skipped: \(report.warnings)")
        #expect(warned.contains("tokens/roar.mp3"), "a sound in a folder of tokens is skipped: \(report.warnings)")
        let sounds = try test.hoard.catalog.assets(kind: .audio)
        let byName = Dictionary(uniqueKeysWithValues: sounds.map { ($0.name, $0) })
        #expect(Set(byName.keys) == ["Tavern Theme", "Battle", "Rain", "Wind", "Door Creak", "Harp", "Chime"])
        #expect(byName["Chime"]?.variants.first?.mediaType == .webmAudio, "an audio-only .webm is a sound")
        #expect(byName["Rain"]?.variants.first?.mediaType == .flac)
        let blobs = try test.hoard.catalog.blobs()
        #expect(blobs.contains { $0.mediaType == "audio/ogg" } && blobs.contains { $0.mediaType == "audio/mpeg" })
    }

    @Test func descriptorOfASoundCarriesWhatItsHeaderSays() async throws {
        let directory = try Fixtures.audioDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        _ = try await test.hoard.importPack(at: directory + "/audio-pack.zip")
        let rain = try #require(try test.hoard.catalog.assets(kind: .audio).first { $0.name == "Rain" })
        let bytes = try #require(try await test.hoard.store.read(rain.digest, range: nil))
        let descriptor = try JSONDecoder().decode(AssetDescriptor.self, from: Data(bytes))
        let sound = try #require(descriptor.variants.first)
        let probed = try #require(AudioCase.load("corpus.json").first { $0.file == "stereo-44k.flac" })
        #expect(sound.codec == "flac" && sound.channels == 2 && sound.sampleRate == 44_100)
        #expect(abs(Double(sound.durationMs ?? 0) - (probed.durationMs ?? 0)) <= 10)
        #expect(sound.width == 0 && sound.height == 0 && descriptor.thumbnail == nil)
    }

    @Test func packWithALyingSoundIsRefusedNamingIt() async throws {
        let directory = try Fixtures.audioDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let before = try test.snapshot()
        let error = await #expect(throws: ImportError.self) {
            try await test.hoard.importPack(at: directory + "/hostile-pack.zip")
        }
        let problem = error?.errors.first { $0.entry == "Music/Lying.wav" }
        #expect(problem?.code == .unreadableAudio, "\(error?.description ?? "no error")")
        #expect(error?.errors.count == 1, "only the lying file is at fault: \(error?.description ?? "")")
        #expect(try test.snapshot() == before)
    }

    @Test(arguments: [
        ("maxAudioSeconds=2", "Music/Battle.mp3"), ("maxAudioBytes=100000", "SFX/Door Creak.wav"), ("maxPackAudioBytes=200000", ""),
    ])
    func limitsPerSoundAndPerPackRefuseWithAudioTooLarge(_ limit: String, _ entry: String) async throws {
        let directory = try Fixtures.audioDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        var limits = ImportLimits()
        try limits.set(limit)
        var options = Importer.Options()
        options.limits = limits
        let error = await #expect(throws: ImportError.self) {
            try await test.hoard.importPack(at: directory + "/audio-pack.zip", options: options)
        }
        let problem = error?.errors.first { $0.code == .audioTooLarge }
        #expect(problem != nil && (problem?.entry ?? "") == entry, "\(error?.description ?? "no error")")
    }
}
