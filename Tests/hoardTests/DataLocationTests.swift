import Foundation
import HoardPlugins
import Testing

@testable import hoard

/// Where the data directory is without `--data-dir`: one place per user, or the `hoard-data` folder already here.
@Suite struct DataLocationTests {
    let home = "/home/ana"

    func resolve(_ given: String? = nil, _ environment: [String: String] = [:], macOS: Bool = false, here: Bool = false) -> DataLocation {
        DataLocation.resolve(given: given, environment: environment, currentDirectory: "/work/maps", home: home, isMacOS: macOS) { path in
            here && path == "/work/maps/hoard-data"
        }
    }

    @Test func theOptionThenTheEnvironmentThenAFolderHereThenThePerUserFolder() {
        #expect(resolve("d", ["HOARD_DATA_DIR": "/e"], here: true) == DataLocation(path: "d", source: .option))
        #expect(resolve(nil, ["HOARD_DATA_DIR": "/e"], here: true) == DataLocation(path: "/e", source: .environment))
        #expect(resolve(nil, ["HOARD_DATA_DIR": ""], here: true) == DataLocation(path: "/work/maps/hoard-data", source: .currentFolder))
        #expect(resolve() == DataLocation(path: "/home/ana/.local/share/hoard", source: .standard))
        #expect(resolve(nil, ["XDG_DATA_HOME": "/data/ana"]) == DataLocation(path: "/data/ana/hoard", source: .standard))
        #expect(resolve(nil, ["XDG_DATA_HOME": "relative"]) == DataLocation(path: "/home/ana/.local/share/hoard", source: .standard))
        #expect(resolve(macOS: true) == DataLocation(path: "/home/ana/Library/Application Support/Hoard", source: .standard))
    }

    @Test func aCommandRunAnywhereWritesToThePerUserFolderAndSaysSo() throws {
        let home = try CLI.temporaryDirectory()
        let elsewhere = try CLI.temporaryDirectory()
        defer { for path in [home, elsewhere] { try? FileManager.default.removeItem(atPath: path) } }
        let environment = ["HOME": home, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        let created = try ChildProcess.run([CLI.binary, "group", "create", "crew"], environment: environment, directory: elsewhere)
        #expect(created.status == 0, "\(created.errorText)")
        let expected = home + "/.local/share/hoard"
        #expect(created.errorText.contains("data directory: \(expected) (the default"), "\(created.errorText)")
        #expect(FileManager.default.fileExists(atPath: expected + "/catalog.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: elsewhere + "/hoard-data"))

        // An existing ./hoard-data is still found, and named.
        try FileManager.default.createDirectory(atPath: elsewhere + "/hoard-data", withIntermediateDirectories: true)
        let here = try ChildProcess.run([CLI.binary, "group", "create", "local"], environment: environment, directory: elsewhere)
        #expect(here.status == 0 && here.errorText.contains("hoard-data folder found in the current folder"), "\(here.errorText)")
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/hoard-data/catalog.sqlite"))
        let listed = try ChildProcess.run([CLI.binary, "group", "list"], environment: environment, directory: "/")
        #expect(listed.outputText.contains("crew") && !listed.outputText.contains("local"), "\(listed.outputText)")
    }
}
