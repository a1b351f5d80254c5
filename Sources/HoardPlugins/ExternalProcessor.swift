import Foundation
import HoardCore

/// An out-of-process plugin's `processor` hook as a ``PictureGenerator``: the asset and its largest variant's bytes
/// (base64) go to the plugin; the pictures it returns are checked and stored by Hoard like any generator's. It is sent
/// the types its manifest's `sources` names (default: pictures), so a sound reaches only a plugin that asks for sounds.
public struct ExternalProcessor: PictureGenerator {
    /// The channel to the plugin.
    public let channel: PluginChannel
    /// The plugin's id.
    public var id: String { channel.manifest.id }
    /// The manifest's `enabledByDefault` (default true).
    public var isEnabledByDefault: Bool { channel.manifest.enabledByDefault ?? true }

    /// Wraps a channel.
    public init(channel: PluginChannel) { self.channel = channel }

    /// The manifest's `sources`, or every picture type.
    public func accepts(_ source: MediaType) -> Bool {
        guard let sources = channel.manifest.sources else { return !source.isAudio }
        return sources.contains(source.rawValue)
    }

    /// The default recipe (the id and the whole request's digest), expecting the manifest's `roles`.
    public func recipe(for request: GenerationRequest) -> GenerationRecipe? {
        GenerationRecipe(key: wholeRequestKey(request), roles: (channel.manifest.roles ?? []).compactMap(GeneratedPicture.Role.init(name:)))
    }

    struct Request: Encodable {
        var kind: String
        var name: String
        var footprint: Footprint
        var scale: Int
        var width: Int
        var height: Int
        var mediaType: String
        var tilePixels: Int
        var data: String
        /// A sound's codec, channels, samples a second and duration (absent for a picture).
        var codec: String?
        var channels: Int?
        var sampleRate: Int?
        var durationMs: Int?
    }

    struct Answer: Decodable {
        var outputs: [Output]

        struct Output: Decodable {
            var role: String
            var scale: Int?
            var mediaType: String
            var data: String
        }
    }

    /// The largest picture (or sound) sent to a plugin: its base64 line must stay well under the protocol's 64 MiB line
    /// limit.
    public static let maxSourceBytes = 32 << 20

    public func generate(_ request: GenerationRequest, source: UnsafeRawBufferPointer) throws(Problem) -> [GeneratedPicture] {
        guard source.count <= Self.maxSourceBytes else {
            throw Problem(
                .pluginFailure, "the file is \(source.count) bytes, over the \(Self.maxSourceBytes) a plugin is sent; plugin \(id) skipped it",
                severity: .warning)
        }
        let asset = request.asset
        let body = Request(
            kind: asset.kind.rawValue, name: asset.name, footprint: asset.footprint, scale: request.source.scale,
            width: request.source.width, height: request.source.height, mediaType: request.source.mediaType.rawValue,
            tilePixels: request.tilePixels, data: Data(source).base64EncodedString(), codec: request.source.codec,
            channels: request.source.channels, sampleRate: request.source.sampleRate, durationMs: request.source.durationMs)
        let reply: PluginReply<Answer>
        do {
            reply = try channel.call("process", body, as: Answer.self)
        } catch {
            throw Problem(.pluginFailure, "plugin \(id) failed: \(error)")
        }
        switch reply {
        case .answer(nil): return []
        case .failure(let failure):
            throw Problem(ProblemCode(rawValue: failure.code) ?? .pluginFailure, "plugin \(id): \(failure.message)")
        case .answer(let answer?):
            return try answer.outputs.map { output throws(Problem) in try picture(output) }
        }
    }

    private func picture(_ output: Answer.Output) throws(Problem) -> GeneratedPicture {
        guard let type = MediaType(rawValue: output.mediaType), let bytes = Data(base64Encoded: output.data) else {
            throw Problem(.pluginFailure, "plugin \(id) returned an output of type '\(output.mediaType)' or data that is not base64")
        }
        let role: GeneratedPicture.Role
        switch (output.role, output.scale) {
        case ("variant", let scale?): role = .variant(scale: scale)
        case ("preview", _): role = .preview
        case ("thumbnail", _): role = .thumbnail
        case ("compatible", _): role = .compatible
        default:
            throw Problem(
                .pluginFailure, "plugin \(id) returned an output with role '\(output.role)'; use variant (with a scale), preview, thumbnail or compatible")
        }
        return GeneratedPicture(role: role, bytes: [UInt8](bytes), mediaType: type)
    }
}
