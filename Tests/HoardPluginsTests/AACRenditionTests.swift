import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Testing

@testable import HoardPlugins

/// Short sounds made with ffmpeg for the AAC plugin's tests: (entry in the pack, lavfi seconds, rate, ffmpeg options).
private let sounds: [(entry: String, seconds: Double, rate: Int, options: [String])] = [
    ("Music/Tavern.ogg", 1.3, 44_100, ["-c:a", "libvorbis"]),
    ("Ambience/Wind.opus", 1.7, 48_000, ["-c:a", "libopus", "-b:a", "48k"]),
    ("Ambience/Rain.flac", 2.2, 44_100, ["-c:a", "flac"]),
    ("SFX/Chime.webm", 0.9, 48_000, ["-c:a", "libopus", "-f", "webm"]),
    ("Music/Battle.mp3", 1.1, 44_100, ["-c:a", "libmp3lame", "-b:a", "96k"]),
    ("SFX/Door.wav", 0.6, 22_050, ["-c:a", "pcm_s16le"]),
    ("Sounds/Harp.m4a", 1.2, 44_100, ["-c:a", "aac", "-b:a", "96k"]),
]

/// The sounds Apple devices cannot play, which get a rendition.
private let converted: Set = ["Tavern", "Wind", "Rain", "Chime"]

extension PluginFixtures {
    /// A stored zip of `sounds`, each a tone made by ffmpeg in the scratch folder.
    func soundPack(_ name: String, _ chosen: [(entry: String, seconds: Double, rate: Int, options: [String])] = sounds) throws -> String {
        var files: [[String]] = []
        for (index, sound) in chosen.enumerated() {
            let file = directory + "/sound-\(index)." + (sound.entry.split(separator: ".").last.map(String.init) ?? "bin")
            let source = "sine=frequency=\(330 + index * 55):sample_rate=\(sound.rate):duration=\(sound.seconds)"
            let made = try ChildProcess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-ac", "2"] + sound.options + [file])
            guard made.status == 0 else { throw ProblemMessage("ffmpeg could not make \(sound.entry): \(made.errorText)") }
            files.append([sound.entry, file])
        }
        let path = directory + "/" + name
        let script = """
            import json, sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
                for name, file in json.load(sys.stdin):
                    z.write(file, name)
            """
        let outcome = try ChildProcess.run(["python3", "-c", script, path], input: try JSONSerialization.data(withJSONObject: files))
        guard outcome.status == 0 else { throw ProblemMessage("python3 could not write \(path): \(outcome.errorText)") }
        return path
    }

    /// Writes a lying audio processor: it takes Ogg sounds and answers `mode`: garbage bytes, the source itself, a
    /// picture, or a real AAC sound of 0.3 s, each claimed to be a `compatible` AAC rendition; or a preview of the sound.
    func install(lyingAudio mode: String) throws {
        let folder = directory + "/plugins/" + mode
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let manifest = """
            {"id": "\(mode)", "version": "0.0.1", "protocol": 1, "hooks": ["processor"], "command": ["python3", "plugin.py"],
             "sources": ["audio/ogg"], "roles": ["compatible"], "requires": ["python3"]}
            """
        try manifest.write(toFile: folder + "/plugin.json", atomically: true, encoding: .utf8)
        let script = """
            import base64, json, os, subprocess, sys, tempfile
            def short():
                path = os.path.join(tempfile.mkdtemp(), "short.m4a")
                subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=duration=0.3", "-c:a", "aac", path], check=True)
                return base64.b64encode(open(path, "rb").read()).decode()
            png = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d494844520000000100000001080600000000")).decode()
            for line in sys.stdin:
                request = json.loads(line)
                if request["method"] == "hello":
                    result = {"protocol": 1, "id": "\(mode)"}
                else:
                    data = {"garbage": base64.b64encode(b"not a sound at all " * 40).decode(),
                            "echo": request["params"]["data"], "picture": png, "preview": request["params"]["data"],
                            "short": None}["\(mode)"] or short()
                    role = "preview" if "\(mode)" == "preview" else "compatible"
                    result = {"outputs": [{"role": role, "mediaType": "audio/mp4", "data": data}]}
                sys.stdout.write(json.dumps({"id": request["id"], "result": result}) + "\\n")
                sys.stdout.flush()
            """
        try script.write(toFile: folder + "/plugin.py", atomically: true, encoding: .utf8)
    }
}

@Suite("The AAC rendition plugin")
struct AACRenditionTests {
    @Test func oggOpusFLACAndWebMSoundsGetAnAACRenditionAsLongAsTheSourceAndOthersNone() async throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try fixtures.install(example: "aac-rendition")
        let (hoard, loadErrors) = try fixtures.hoard()
        #expect(loadErrors.isEmpty, "ffmpeg is on this machine's PATH: \(loadErrors)")
        let report = try await hoard.importPack(at: try fixtures.soundPack("sounds.zip"))
        #expect(report.renditionJobs == converted.count, "one job per Ogg, Opus, FLAC and WebM sound")
        let waiting = try hoard.catalog.assets(kind: .audio)
        #expect(waiting.count == sounds.count)
        for sound in waiting {
            #expect(sound.pending == (converted.contains(sound.name) ? ["compatible"] : nil), "\(sound.name)")
            #expect(sound.compatible == nil)
        }
        let run = await hoard.makeRenditions()
        #expect(run.done == converted.count && run.failed == 0, "\(run.problems)")
        for sound in try hoard.catalog.assets(kind: .audio) {
            #expect(sound.pending == nil, "\(sound.name)")
            guard converted.contains(sound.name) else {
                #expect(sound.compatible == nil, "\(sound.name) plays everywhere: no rendition")
                continue
            }
            let rendition = try #require(sound.compatible, "\(sound.name)")
            let bytes = try #require(try await hoard.store.read(rendition.digest, range: nil))
            #expect(bytes.count == Int(rendition.size))
            let info = try AudioHeader.read([UInt8](bytes))
            #expect(rendition.mediaType == .m4a && info.mediaType == .m4a && info.codec == "aac", "\(sound.name): \(info)")
            let described = try #require(try await hoard.store.read(sound.digest, range: nil))
            let descriptor = try JSONDecoder().decode(AssetDescriptor.self, from: Data(described))
            let source = try #require(descriptor.variants.first?.durationMs, "the descriptor says how long the sound is")
            #expect(abs(info.durationMs - source) <= 50, "\(sound.name): \(info.durationMs) ms from \(source) ms")
        }
        // A listing page (GET /v1/assets) and a session's manifest name the rendition too, and a seat may fetch it.
        let listed = try hoard.catalog.assetPage(AssetQuery(kind: .audio)).assets
        #expect(Set(listed.filter { $0.compatible != nil }.map(\.name)) == converted)
        let rain = try #require(listed.first { $0.name == "Rain" })
        let resolved = try hoard.catalog.resolve([rain.digest])
        let compatible = try #require(resolved.assets.first?.compatible)
        #expect(compatible == rain.compatible && resolved.reachable.contains(compatible.digest))
    }

    @Test func withoutFFmpegOnPathThePluginIsOffOnceAndTheImportSucceedsWithoutRenditionsUntilItIsImportedAgainWithIt()
        async throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try fixtures.install(example: "aac-rendition")
        try fixtures.install(example: "png-preview")
        let bare = fixtures.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bare, withIntermediateDirectories: true)
        let python = try #require(ChildProcess.locate("python3", path: ProcessInfo.processInfo.environment["PATH"] ?? ""))
        try FileManager.default.createSymbolicLink(atPath: bare + "/python3", withDestinationPath: python)
        var registry = PluginRegistry.builtIn()
        let loaded = registry.registerPlugins(in: fixtures.directory + "/plugins", searchPath: bare)
        #expect(loaded.plugins.map(\.manifest.id) == ["png-preview"], "the other plugins still load")
        #expect(loaded.errors.count == 1, "said once: \(loaded.errors)")
        #expect(loaded.errors.first?.code == .missingTool)
        #expect(loaded.errors.first?.message.contains("aac-rendition is off: ffmpeg is not on PATH") == true)
        let archive = try fixtures.soundPack("sounds.zip", Array(sounds.prefix(3)))
        do {
            let hoard = try Hoard(dataDirectory: fixtures.directory + "/data", registry: registry)
            let report = try await hoard.importPack(at: archive)
            #expect(report.assetsByKind["audio"] == 3)
            #expect(report.renditionJobs == 0, "no job is queued for a plugin that is off")
            #expect(try hoard.catalog.assets(kind: .audio).allSatisfy { $0.compatible == nil && $0.pending == nil })
        }
        // ffmpeg installed and Hoard started again: the same archive, imported again, is unchanged and gets its renditions.
        let (hoard, loadErrors) = try fixtures.hoard()
        #expect(loadErrors.isEmpty, "\(loadErrors)")
        let again = try await hoard.importPack(at: archive)
        #expect(again.outcome == .unchanged && again.renditionJobs == 3)
        #expect(try hoard.catalog.assets(kind: .audio).allSatisfy { $0.pending == ["compatible"] })
        let run = await hoard.makeRenditions()
        #expect(run.done == 3 && run.failed == 0, "\(run.problems)")
        #expect(try hoard.catalog.assets(kind: .audio).allSatisfy { $0.compatible != nil && $0.pending == nil })
    }

    @Test(arguments: [
        ("garbage", "no sound Hoard reads"), ("echo", "vorbis in audio/ogg (claimed audio/mp4); it must be AAC in audio/mp4"),
        ("picture", "no sound Hoard reads"), ("short", "ms from a sound of 1300 ms"), ("preview", "made a preview of a sound"),
    ])
    func aPluginThatLiesAboutTheRenditionHasItsJobFailAndNothingStored(_ mode: String, _ reason: String) async throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        try fixtures.install(lyingAudio: mode)
        let (hoard, loadErrors) = try fixtures.hoard()
        #expect(loadErrors.isEmpty)
        let report = try await hoard.importPack(at: try fixtures.soundPack("sounds.zip", Array(sounds.prefix(1))))
        #expect(report.renditionJobs == 1)
        let before = try hoard.catalog.blobs()
        let run = await hoard.makeRenditions()
        #expect(run.done == 0 && run.failed == 1, "\(run)")
        let problem = try #require(run.problems.first)
        #expect(problem.code == .pluginFailure && problem.entry == "Music/Tavern.ogg")
        #expect(problem.message.contains("generator \(mode) ") && problem.message.contains(reason), "\(problem.message)")
        #expect(problem.message.contains("nothing it made was kept"))
        #expect(try hoard.catalog.blobs() == before, "no blob row for what the plugin made")
        #expect(try await hoard.store.allDigests().count == before.count, "no blob stored either")
        let sound = try #require(try hoard.catalog.assets(kind: .audio).first)
        #expect(sound.compatible == nil && sound.pending == nil)
        let problems = try hoard.catalog.jobProblems(pack: report.pack, group: nil)
        #expect(problems.map(\.asset) == ["Tavern"] && problems.first?.message == problem.message)
    }

    @Test func aPictureIsNeverSentToThePluginNorASoundToAPicturePlugin() throws {
        func processor(_ sources: [String]?) -> ExternalProcessor {
            ExternalProcessor(channel: PluginChannel(
                manifest: PluginManifest(
                    id: "p", version: "1", protocol: 1, hooks: [.processor], command: ["/nonexistent"], sources: sources), folder: "/nonexistent"))
        }
        let audio = processor(["audio/ogg", "audio/flac", "audio/webm"])
        #expect(audio.accepts(.ogg) && audio.accepts(.flac) && audio.accepts(.webmAudio))
        #expect(!audio.accepts(.mp3) && !audio.accepts(.wav) && !audio.accepts(.m4a) && !audio.accepts(.png))
        let pictures = processor(nil)
        #expect(pictures.accepts(.png) && pictures.accepts(.webp) && !pictures.accepts(.ogg) && !pictures.accepts(.flac))
    }
}
