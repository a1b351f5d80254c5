import HoardCore

/// An out-of-process plugin's `naming` hook as a ``NamingConvention``: each path is sent to the plugin and what it
/// answers is checked before it is believed — a registered kind, a name that stays inside the pack, a footprint of
/// 1 to 32 tiles a side, an allowed LOD scale. Any failure is a problem for that one file.
public struct ExternalNamingConvention: NamingConvention {
    /// The channel to the plugin.
    public let channel: PluginChannel
    /// The plugin's id.
    public var id: String { channel.manifest.id }

    /// Wraps a channel.
    public init(channel: PluginChannel) { self.channel = channel }

    struct Request: Encodable {
        var path: String
        var tilePixels: Int
        var kinds: [String]
    }

    struct Answer: Decodable {
        var kind: String
        var name: String
        var footprint: Size?
        var scale: Int?

        struct Size: Decodable {
            var width: Int
            var height: Int
        }
    }

    public func interpret(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? {
        let shown = path.description
        func refuse(_ code: ProblemCode, _ message: String) -> Problem {
            Problem(code, "plugin \(id) \(message)", entry: shown)
        }
        let reply: PluginReply<Answer>
        do {
            reply = try channel.call(
                "name", Request(path: shown, tilePixels: context.packFile.effectiveTilePixels, kinds: context.kinds.map(\.kind.rawValue)),
                as: Answer.self)
        } catch {
            throw refuse(.pluginFailure, "failed: \(error)")
        }
        let answer: Answer
        switch reply {
        case .answer(nil): return nil
        case .answer(let found?): answer = found
        case .failure(let failure):
            let code = ProblemCode(rawValue: failure.code) ?? .pluginFailure
            throw Problem(code, "plugin \(id): \(failure.message)", entry: shown)
        }
        let kind = AssetKind(rawValue: answer.kind)
        guard context.definition(of: kind) != nil else {
            throw refuse(.pluginFailure, "named it a '\(answer.kind)', a kind no plugin provides")
        }
        guard case .success(let name) = EntryPathPolicy().validate(Array(answer.name.utf8)), !name.components.isEmpty else {
            throw refuse(.unsafePath, "named it '\(answer.name)', which is not a name inside the pack")
        }
        let size = answer.footprint ?? Answer.Size(width: 1, height: 1)
        guard let footprint = Footprint(width: size.width, height: size.height) else {
            throw refuse(.badFootprint, "claims a footprint of \(size.width)×\(size.height) tiles; each side must be 1 to 32")
        }
        let scale = answer.scale ?? 1
        guard AssetNaming.allowedScales.contains(scale) else {
            throw refuse(.badScale, "claims LOD scale \(scale); it must be 1, 2, 3, 4 or 8")
        }
        return AssetNaming(kind: kind, name: name.description, footprint: footprint, scale: scale, isFootprintExplicit: answer.footprint != nil)
    }
}
