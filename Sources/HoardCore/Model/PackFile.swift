import Foundation

/// The optional `pack.json` at the root of an archive, as its author wrote it.
public struct PackFile: Sendable, Hashable, Codable {
    /// The pack's name; defaults to the archive's file name without extension.
    public var name: String?
    /// The pack's version; defaults to the next whole number when the content changed.
    public var version: String?
    /// Who made the art.
    public var author: String?
    /// Its licence, preferably an SPDX identifier.
    public var license: String?
    /// A sentence about the pack.
    public var description: String?
    /// Pixels per grid tile at scale 1 (default 256); on hexes, a hex's bounding box along its long side.
    public var tilePixels: Int?
    /// The grid the art was made for (default square).
    public var grid: PackGrid?
    /// Folder (lowercase, relative to the root) → kind, for folders the conventions do not know.
    public var kinds: [String: AssetKind]?
    /// The kind of pictures in no folder that names a kind (default `token`, as MapTool and Foundry treat a loose
    /// picture); it must be registered.
    public var defaultKind: AssetKind?
    /// Per-asset corrections, keyed by the path without LOD suffix and extension (`tokens/ogre_2x2`).
    public var overrides: [String: Override]?
    /// Plugin id → whether it applies to this pack (`{"hoard.strip-metadata": false}` keeps the pictures' metadata).
    /// Plugins not named here follow the server's choice.
    public var plugins: [String: Bool]?

    /// A correction the pack author applies to one asset.
    public struct Override: Sendable, Hashable, Codable {
        /// Its kind instead of the folder's.
        public var kind: AssetKind?
        /// Its name instead of the file's.
        public var name: String?
        /// Its footprint instead of the file name's.
        public var footprint: Footprint?
    }

    /// Whether the plugin `id` applies to this pack, given whether it applies when the pack does not say.
    public func isPluginEnabled(_ id: String, byDefault: Bool) -> Bool { plugins?[id] ?? byDefault }

    /// The kind in effect for pictures no folder claims.
    public var effectiveDefaultKind: AssetKind { defaultKind ?? .token }

    /// The grid in effect.
    public var effectiveGrid: PackGrid { grid ?? .square }

    /// The tile size in effect.
    public var effectiveTilePixels: Int { tilePixels ?? 256 }

    /// An empty pack file: every default applies.
    public init() {}

    /// The name of the file in an archive.
    public static let fileName = "pack.json"

    /// Parses and checks `pack.json`; the problem says which field is wrong.
    public static func parse(_ bytes: [UInt8]) -> Result<PackFile, Problem> {
        let file: PackFile
        do {
            file = try JSONDecoder().decode(PackFile.self, from: Data(bytes))
        } catch let DecodingError.typeMismatch(type, context), let DecodingError.valueNotFound(type, context) {
            return .failure(Problem(.badManifest, "\(path(context)) must be \(type)", entry: fileName))
        } catch let DecodingError.keyNotFound(key, context) {
            return .failure(Problem(.badManifest, "\(path(context)) needs the field '\(key.stringValue)'", entry: fileName))
        } catch let DecodingError.dataCorrupted(context) {
            return .failure(Problem(.badManifest, "\(path(context)): \(context.debugDescription)", entry: fileName))
        } catch {
            return .failure(Problem(.badManifest, "pack.json is not valid JSON: \(error)", entry: fileName))
        }
        if let tile = file.tilePixels, !(8...4096).contains(tile) {
            return .failure(Problem(.badManifest, "tilePixels must be between 8 and 4096, not \(tile)", entry: fileName))
        }
        for field in [file.name, file.version] {
            if let field, field.isEmpty || field.utf8.count > 128 || field.unicodeScalars.contains(where: EntryPathPolicy.isForbidden) {
                return .failure(Problem(.badManifest, "name and version must be 1 to 128 printable characters", entry: fileName))
            }
        }
        return .success(file)
    }

    /// Top-level keys of a pack.json that Hoard does not know (often typos such as `tilepixels`), sorted.
    public static func unknownKeys(_ bytes: [UInt8]) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return [] }
        let known: Set<String> = ["name", "version", "author", "license", "description", "tilePixels", "grid", "kinds", "defaultKind", "overrides", "plugins"]
        return object.keys.filter { !known.contains($0) }.sorted()
    }

    private static func path(_ context: DecodingError.Context) -> String {
        let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
        return keys.isEmpty ? "pack.json" : keys.joined(separator: ".")
    }
}
