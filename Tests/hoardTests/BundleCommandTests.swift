import Foundation
import HoardPlugins
import Testing

/// `hoard import` of a bundle: one result per inner archive, and the packs' documents in `hoard packs`.
@Suite("hoard import of a bundle")
struct BundleCommandTests {
    /// The bytes of the sample pack `name` from Packs/.
    static func sample(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: CLI.pack(name))) }

    @Test func aBundleGivesOneJSONResultPerInnerArchive() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = directory + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try Self.sample("dungeon-basics.zip").write(to: URL(fileURLWithPath: source + "/dungeon-basics.zip"))
        try Self.sample("scifi-outpost.zip").write(to: URL(fileURLWithPath: source + "/scifi-outpost.zip"))
        try Data("Thanks for buying!\n".utf8).write(to: URL(fileURLWithPath: source + "/README.txt"))
        let script = "import shutil, sys; shutil.make_archive(sys.argv[1], 'zip', sys.argv[2])"
        let zip = try ChildProcess.run(["python3", "-c", script, directory + "/store", source])
        try #require(zip.status == 0, "\(zip.errorText)")
        let result = try CLI.run(["import", directory + "/store.zip", "--data-dir", directory + "/data", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let results = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(results.compactMap { $0["inner"] as? String } == ["dungeon-basics.zip", "scifi-outpost.zip"])
        #expect(results.allSatisfy { ($0["archive"] as? String) == directory + "/store.zip" && $0["report"] != nil })
        let packs = try CLI.run(["packs", "--data-dir", directory + "/data"])
        #expect(packs.stdout.contains("dungeon-basics") && packs.stdout.contains("scifi-outpost") && packs.stdout.contains("DOCUMENTS"))
    }
}
