import Foundation
import HoardCore

extension PluginRegistry {
    /// Finds every plugin folder in `directory` (each sub-folder with a `plugin.json`, in name order), and registers
    /// its hooks: `naming` as a convention asked before `hoard.default`, `processor` as a generator. A missing
    /// directory holds no plugins. A plugin whose manifest `requires` a command that `searchPath` (default: this
    /// process's `PATH`, the one plugins run with) lacks is off: not registered, so no job is queued for it; its error
    /// says so. Returns the plugins registered and, for the folders that were not, why.
    public mutating func registerPlugins(
        in directory: String, searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    ) -> (plugins: [ExternalPlugin], errors: [PluginError]) {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        var plugins: [ExternalPlugin] = []
        var errors: [PluginError] = []
        for name in names where !name.hasPrefix(".") {
            let folder = directory + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else { continue }
            do throws(PluginError) {
                let manifest = try PluginManifest.load(from: folder)
                if let missing = (manifest.requires ?? []).first(where: { ChildProcess.locate($0, path: searchPath) == nil }) {
                    throw PluginError(
                        .missingTool, "plugin \(manifest.id) is off: \(missing) is not on PATH; install it (scripts/setup.sh does) "
                            + "and restart Hoard")
                }
                let channel = PluginChannel(manifest: manifest, folder: folder)
                var copy = self
                do {
                    for hook in Set(manifest.hooks) {
                        switch hook {
                        case .naming: try copy.register(convention: ExternalNamingConvention(channel: channel), first: true)
                        case .processor: try copy.register(generator: ExternalProcessor(channel: channel))
                        }
                    }
                } catch {
                    throw PluginError(.badManifest, "\(folder): \(error.description)")
                }
                self = copy
                plugins.append(ExternalPlugin(manifest: manifest, folder: folder, channel: channel))
            } catch {
                errors.append(error)
            }
        }
        return (plugins, errors)
    }
}
