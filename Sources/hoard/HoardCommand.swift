import ArgumentParser
import Foundation
import HoardImport

/// `hoard`: a self-hosted content and asset server for virtual-tabletop apps.
@main
struct HoardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hoard",
        abstract: "A self-hosted content and asset server for virtual-tabletop apps.",
        discussion: """
            Art packs (zip, tar or tar.gz archives of tokens, objects, textures, walls and backgrounds) are imported \
            into a data directory: every file is hashed, stored once by its SHA-256 digest and catalogued.
            """,
        version: "0.1.0",
        subcommands: [
            ImportCommand.self, PacksCommand.self, AssetsCommand.self, DeleteCommand.self, VerifyCommand.self, GCCommand.self,
            ServeCommand.self, GroupCommand.self, TokenCommand.self, BackupCommand.self, RestoreCommand.self, JoinCommand.self, SessionCommand.self,
        ]
    )
}

/// The `--data-dir` option every command shares.
struct DataOptions: ParsableArguments {
    @Option(
        name: .customLong("data-dir"),
        help: ArgumentHelp("The data directory: catalog and blobs. Created if missing.", valueName: "DIR"))
    var dataDirectory: String = ProcessInfo.processInfo.environment["HOARD_DATA_DIR"] ?? "hoard-data"

    func open() throws -> Hoard {
        do {
            return try Hoard(dataDirectory: dataDirectory)
        } catch {
            throw CLIError("cannot open the data directory '\(dataDirectory)': \(error)")
        }
    }
}

/// A failure the CLI reports in one line and exits 1 on.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
