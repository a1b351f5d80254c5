import Foundation
import HoardPlugins
import Testing

/// Runs the real `hoard` binary built next to the test bundle.
struct CLI {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let binary: String = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hoard").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return root.appendingPathComponent(".build/debug/hoard").path
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        let outcome = try ChildProcess.run([binary] + arguments, environment: environment)
        return Result(status: outcome.status, stdout: outcome.outputText, stderr: outcome.errorText)
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "hoard-cli-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func pack(_ name: String) -> String { root.appendingPathComponent("Packs/\(name)").path }
}

@Suite("hoard command line")
struct CommandLineTests {
    @Test func helpListsEveryCommand() throws {
        let result = try CLI.run(["--help"])
        #expect(result.status == 0)
        for command in ["import", "packs", "assets", "verify", "gc", "delete"] {
            #expect(result.stdout.contains("  \(command) "), "missing \(command)")
        }
    }

    @Test func importThenListAsJSON() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let imported = try CLI.run(["import", CLI.pack("dungeon-basics.zip"), CLI.pack("scifi-outpost.zip"), "--data-dir", data, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let results = try #require(try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [[String: Any]])
        #expect(results.count == 2)
        #expect(results.allSatisfy { $0["report"] != nil && $0["error"] == nil })

        let listed = try CLI.run(["assets", "--data-dir", data, "--pack", "dungeon-basics", "--kind", "texture", "--json"])
        #expect(listed.status == 0)
        let assets = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(!assets.isEmpty)
        for asset in assets {
            // `hoard import` made the generated pictures before it returned: nothing is pending.
            #expect(Set(asset.keys) == ["digest", "kind", "name", "pack", "footprint", "variants", "thumbnail", "preview"])
            #expect(asset["kind"] as? String == "texture")
            let variants = try #require(asset["variants"] as? [[String: Any]])
            for variant in variants {
                #expect(Set(variant.keys) == ["scale", "digest", "width", "height", "size", "mediaType"])
            }
        }
        let packs = try CLI.run(["packs", "--data-dir", data])
        #expect(packs.stdout.contains("dungeon-basics"))
        #expect(packs.stdout.contains("scifi-outpost"))
        let verify = try CLI.run(["verify", "--data-dir", data])
        #expect(verify.status == 0)
        #expect(verify.stdout.contains("OK"))
    }

    @Test func aRefusedArchiveExitsOneAndSaysWhatToFix() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let bogus = data + "/not-a-pack.zip"
        try Data("this is plain text, not an archive".utf8).write(to: URL(fileURLWithPath: bogus))
        let result = try CLI.run(["import", bogus, "--data-dir", data + "/store"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("UNSUPPORTED_FORMAT"))
        #expect(result.stderr.contains("nothing was stored"))
        let json = try CLI.run(["import", bogus, "--data-dir", data + "/store", "--json"])
        let results = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let error = try #require(results.first?["error"] as? [String: Any])
        #expect(error["code"] as? String == "UNSUPPORTED_FORMAT")
    }

    @Test func anUnknownLimitIsAUsageError() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let result = try CLI.run(["import", CLI.pack("scifi-outpost.zip"), "--limit", "maxBogus=3", "--data-dir", data])
        #expect(result.status != 0)
        #expect(result.stderr.contains("maxEntries"))
    }

    @Test func deleteThenGCFreesTheBlobs() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        #expect(try CLI.run(["import", CLI.pack("scifi-outpost.zip"), "--data-dir", data]).status == 0)
        #expect(try CLI.run(["delete", "scifi-outpost", "--data-dir", data]).status == 0)
        let gc = try CLI.run(["gc", "--data-dir", data, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(gc.stdout.utf8)) as? [String: Any])
        #expect((report["deletedBlobs"] as? Int ?? 0) > 0)
        #expect(try CLI.run(["delete", "scifi-outpost", "--data-dir", data]).status != 0)
    }
}
