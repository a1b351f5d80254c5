import ArgumentParser
import Foundation
import HoardCore
import HoardPlugins

/// `hoard plugins`: what imports would use — built-in and out-of-process plugins, their hooks and defaults.
struct PluginsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "List the plugins imports use: built-in ones and those in the plugins directory.",
        discussion: "A pack turns a plugin on or off with pack.json, e.g. {\"plugins\": {\"hoard.generate-lods\": false}}.")
    @OptionGroup var data: DataOptions
    @Flag(help: "Print JSON (shape: Schemas/plugin-list.schema.json).") var json = false

    /// One listed plugin.
    struct Row: Encodable {
        var id: String
        var version: String
        var hooks: [String]
        var enabledByDefault: Bool
        var source: String
    }

    func run() async throws {
        let loaded = try data.registry()
        let external = Dictionary(loaded.plugins.map { ($0.manifest.id, $0) }, uniquingKeysWith: { first, _ in first })
        var rows: [Row] = []
        func add(_ id: String, _ hook: String, enabled byDefault: Bool) {
            let enabled = loaded.registry.serverDefaults[id] ?? byDefault
            if let index = rows.firstIndex(where: { $0.id == id }) { return rows[index].hooks.append(hook) }
            let plugin = external[id]
            rows.append(Row(
                id: id, version: plugin?.manifest.version ?? "built-in", hooks: [hook], enabledByDefault: enabled,
                source: plugin?.folder ?? "built-in"))
        }
        for convention in loaded.registry.conventions { add(convention.id, "naming", enabled: true) }
        for rewriter in loaded.registry.rewriters { add(rewriter.id, "rewriter", enabled: rewriter.isEnabledByDefault) }
        for generator in loaded.registry.generators {
            add(generator.id, external[generator.id] == nil ? "generator" : "processor", enabled: generator.isEnabledByDefault)
        }
        for processor in loaded.registry.processors { add(processor.id, "processor", enabled: true) }
        if json { return Terminal.out(try JSONOutput.encode(rows)) }
        var table = [["PLUGIN", "VERSION", "HOOKS", "DEFAULT", "FROM"]]
        for row in rows {
            table.append([row.id, row.version, row.hooks.joined(separator: ", "), row.enabledByDefault ? "on" : "off", row.source])
        }
        Terminal.out(Table.render(table))
        Terminal.out("plugins directory: \(data.plugins)")
        for error in loaded.errors { Terminal.out("not loaded: \(error)") }
    }
}
