import Foundation
import HoardTestSupport
import Testing

/// `hoard map list|export|import|delete` against a running server, and the commands the web page cites.
@Suite(.timeLimit(.minutes(5))) struct MapCommandTests {
    @Test func mapsAreImportedListedExportedByNameOrDigestAndDeleted() async throws {
        try await ServedData.with { served in
            let (data, token, url) = (served.data, served.token, served.url)
            func map(_ arguments: String...) throws -> CLI.Result {
                try CLI.run(["map"] + arguments, environment: ProcessInfo.processInfo.environment.merging(["HOARD_TOKEN": token]) { $1 })
            }

            let empty = try map("list", url)
            #expect(empty.status == 0 && empty.stdout.contains("No saved maps yet"), "\(empty.stderr)")
            let file = data + "/cellar.json"
            let document: [String: Any] = [
                "schema": "hoard.map/v1", "grid": ["width": 12, "height": 7], "background": ["tiles": [] as [Any]],
                "drawing": ["walls": [] as [Any], "strokes": [] as [Any]], "objects": [] as [Any], "tokens": [] as [Any],
            ]
            try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: file))
            let saved = try map("import", url, file)
            #expect(saved.status == 0 && saved.stdout.contains("Saved the map 'cellar'"), "\(saved.stderr)")
            #expect(try map("import", url, file, "--name", "attic").status == 0)
            let again = try map("import", url, file)
            #expect(again.status != 0, "a name in use is refused")

            let listed = try map("list", url, "--json")
            let maps = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stderr)")
            #expect(Set(maps.compactMap { $0["name"] as? String }) == ["cellar", "attic"])
            let digest = try #require(maps.first { $0["name"] as? String == "cellar" }?["digest"] as? String)

            let out = data + "/out.json"
            #expect(try map("export", url, "cellar", out).status == 0)
            let exported = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])
            #expect((exported["grid"] as? [String: Any])?["width"] as? Int == 12)
            let byDigest = try map("export", url, digest)
            #expect(byDigest.status == 0 && byDigest.stdout.contains("\"width\" : 12"), "\(byDigest.stderr)")
            // What export writes, import reads back.
            #expect(try map("import", url, out, "--name", "cellar copy").status == 0)

            #expect(try map("delete", url, "attic").status == 0)
            let missing = try map("delete", url, "attic")
            #expect(missing.status != 0 && missing.stderr.contains("no saved map named 'attic'"), "\(missing.stderr)")
            let left = try map("list", url)
            #expect(left.stdout.contains("cellar") && !left.stdout.contains("attic"))
        }
    }

    @Test func theMapCommandsHaveHelp() throws {
        let help = try CLI.run(["map", "--help"])
        #expect(help.status == 0)
        for command in ["list", "export", "import", "delete"] { #expect(help.stdout.contains("  \(command) "), "\(command)") }
        #expect(try CLI.run(["map", "export", "--help"]).stdout.contains("NAME|ID"))
    }

    /// Every `hoard …` command the web page shows in a `<code>` exists: its words up to the first placeholder or
    /// option are a command with usage of its own.
    @Test func theCommandsTheWebPageCitesExist() throws {
        let page = CLI.root.appendingPathComponent("Sources/HoardServer/Web/Page")
        let scripts = try FileManager.default.contentsOfDirectory(atPath: page.path).filter { $0.hasSuffix(".js") }
        var cited: Set<[String]> = []
        for script in scripts {
            let text = try String(contentsOf: page.appendingPathComponent(script), encoding: .utf8)
            for match in text.matches(of: /h\('code', \{\}, '(hoard [^']*)'\)/) {
                cited.insert(Array(match.1.split(separator: " ").map(String.init).prefix { $0.allSatisfy(\.isLowercase) }.dropFirst()))
            }
        }
        #expect(cited.contains(["map", "import"]), "\(cited)")
        for words in cited {
            // An unknown subcommand's --help shows its parent's usage: the usage must be the command's own.
            let help = try CLI.run(words + ["--help"])
            let command = "hoard " + words.joined(separator: " ")
            #expect(help.status == 0 && help.stdout.contains("USAGE: \(command) "), "\(command): \(help.stdout.prefix(300))")
        }
    }
}
