import Foundation
import HoardCore

/// `plugin.json`, the manifest at the root of a plugin folder (Schemas/plugin-protocol.schema.json, `$defs/manifest`).
public struct PluginManifest: Sendable, Hashable, Codable {
    /// A unique, stable identifier (`fa-naming`); what `pack.json` `plugins` names.
    public var id: String
    /// The plugin's own version, shown by `hoard plugins`.
    public var version: String
    /// The protocol version it speaks; Hoard speaks ``PluginManifest/protocolVersion``.
    public var `protocol`: Int
    /// The hooks it serves: `naming`, `processor`.
    public var hooks: [Hook]
    /// The command and its arguments; a relative first element is resolved inside the plugin folder.
    public var command: [String]
    /// Seconds one call may take before the process is killed (default 10, at most 120).
    public var timeoutSeconds: Double?
    /// Whether it applies to packs whose `pack.json` does not name it (default true).
    public var enabledByDefault: Bool?
    /// A processor's sources: the media types it is sent (`audio/ogg`…; default: every picture type, never a sound).
    public var sources: [String]?
    /// A processor's outputs by role (`preview`, `compatible`…), named as pending while its job waits (default: none said).
    public var roles: [String]?
    /// Commands the plugin runs that must be on `PATH` (`ffmpeg`): without one, the plugin is off (not loaded, said once).
    public var requires: [String]?

    /// A hook a plugin can serve.
    public enum Hook: String, Sendable, Hashable, Codable {
        /// Names files: path → kind, name, footprint, scale.
        case naming
        /// Derives pictures: a variant's bytes → LODs, a preview, a thumbnail.
        case processor
    }

    /// The protocol version this Hoard speaks.
    public static let protocolVersion = 1
    /// The manifest's file name.
    public static let fileName = "plugin.json"

    /// The call time limit in effect.
    public var timeout: Double { min(max(timeoutSeconds ?? 10, 0.1), 120) }

    /// Reads and checks `plugin.json` in `folder`.
    public static func load(from folder: String) throws(PluginError) -> PluginManifest {
        let path = folder + "/" + fileName
        let manifest: PluginManifest
        do {
            manifest = try JSONDecoder().decode(PluginManifest.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw PluginError(.badManifest, "\(path) is not a valid plugin manifest; see Schemas/plugin-protocol.schema.json", cause: "\(error)")
        }
        let idPattern = manifest.id.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E }
        guard idPattern, !manifest.id.isEmpty, manifest.id.utf8.count <= 64, !manifest.id.hasPrefix("hoard.") else {
            throw PluginError(.badManifest, "\(path): id '\(manifest.id)' must be 1 to 64 lowercase letters, digits, '-' or '.', not starting with 'hoard.'")
        }
        guard manifest.protocol == protocolVersion else {
            throw PluginError(.badManifest, "\(path): protocol \(manifest.protocol) is not \(protocolVersion), the one this Hoard speaks; update the plugin")
        }
        guard !manifest.hooks.isEmpty, !manifest.command.isEmpty else {
            throw PluginError(.badManifest, "\(path) needs at least one hook and a command")
        }
        if let unknown = manifest.sources?.first(where: { MediaType(rawValue: $0) == nil }) {
            throw PluginError(.badManifest, "\(path): source '\(unknown)' is not a media type Hoard reads (see MediaType)")
        }
        if let unknown = manifest.roles?.first(where: { GeneratedPicture.Role(name: $0) == nil }) {
            throw PluginError(.badManifest, "\(path): role '\(unknown)' is not @1x…@8x, preview, thumbnail or compatible")
        }
        return manifest
    }
}
