import Foundation
import Testing

@Suite("hoard plugins")
struct PluginsCommandTests {
    /// `hoard plugins --json` for the repository's example plugins, with `choices` passed as `--plugin`.
    private func listing(_ choices: [String] = []) throws -> [String: [String: Any]] {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let plugins = CLI.root.appendingPathComponent("Plugins").path
        let result = try CLI.run(["plugins", "--data-dir", data, "--plugins-dir", plugins, "--json"] + choices.flatMap { ["--plugin", $0] })
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["id"] as? String).map { ($0, row) } })
    }

    @Test func listsTheBuiltInAndTheExamplePluginsWithTheirHooks() throws {
        let rows = try listing()
        #expect(Set(rows.keys) == [
            "hoard.default", "hoard.strip-metadata", "hoard.generate-lods", "fa-naming", "png-preview", "aac-rendition",
        ])
        #expect(rows["aac-rendition"]?["hooks"] as? [String] == ["processor"])
        #expect(rows["fa-naming"]?["hooks"] as? [String] == ["naming"])
        #expect(rows["fa-naming"]?["version"] as? String == "1.0.0")
        #expect(rows["png-preview"]?["hooks"] as? [String] == ["processor"])
        #expect(rows["hoard.strip-metadata"]?["enabledByDefault"] as? Bool == true)
    }

    @Test func withoutFFmpegOnPathTheAACPluginIsOffAndSaysSoOnce() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        try FileManager.default.createDirectory(atPath: data + "/bin", withIntermediateDirectories: true)
        let plugins = CLI.root.appendingPathComponent("Plugins").path
        let result = try CLI.run(["plugins", "--data-dir", data, "--plugins-dir", plugins], environment: ["PATH": data + "/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        let said = result.stdout.components(separatedBy: "\n").filter { $0.contains("aac-rendition") }
        #expect(said.count == 1, "\(result.stdout)")
        #expect(said.first?.contains("plugin aac-rendition is off: ffmpeg is not on PATH") == true)
        #expect(result.stdout.contains("png-preview"), "the other plugins still load")
    }

    @Test func theServersChoiceChangesWhatAppliesByDefault() throws {
        let rows = try listing(["hoard.generate-lods=off"])
        #expect(rows["hoard.generate-lods"]?["enabledByDefault"] as? Bool == false)
        let refused = try CLI.run(["plugins", "--plugin", "hoard.generate-lods=maybe"])
        #expect(refused.status != 0)
    }
}
