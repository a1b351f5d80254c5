import ArgumentParser
import Foundation
import HoardCore
import HoardImaging
import HoardRepository
import HoardPlugins

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
            ImportCommand.self, PluginsCommand.self, PacksCommand.self, AssetsCommand.self, DeleteCommand.self, VerifyCommand.self, GCCommand.self,
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

    @Option(
        name: .customLong("plugins-dir"),
        help: ArgumentHelp("Out-of-process plugins, one folder each with a plugin.json (default: DIR/plugins).", valueName: "DIR"))
    var pluginsDirectory: String?

    @Option(
        name: .customLong("plugin"),
        help: ArgumentHelp("Turn a plugin on or off for every pack unless its pack.json says otherwise, e.g. hoard.generate-lods=off (repeatable).",
                           valueName: "ID=on|off"))
    var pluginChoices: [String] = []

    /// The plugins directory in effect.
    var plugins: String { pluginsDirectory ?? dataDirectory + "/plugins" }

    /// The standard plugins plus those in the plugins directory, and why any plugin folder was not loaded.
    func registry() throws -> (registry: PluginRegistry, plugins: [ExternalPlugin], errors: [PluginError]) {
        var registry = try PluginRegistry.standard()
        for choice in pluginChoices {
            let parts = choice.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, ["on", "off"].contains(parts[1]) else {
                throw ValidationError("--plugin takes ID=on or ID=off, not '\(choice)'")
            }
            registry.serverDefaults[parts[0]] = parts[1] == "on"
        }
        let found = registry.registerPlugins(in: plugins)
        return (registry, found.plugins, found.errors)
    }

    func open() throws -> Hoard {
        do {
            let loaded = try registry()
            for error in loaded.errors { Terminal.err("warning: plugin not loaded: \(error)") }
            return try Hoard(dataDirectory: dataDirectory, registry: loaded.registry)
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
