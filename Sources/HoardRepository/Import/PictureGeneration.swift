import Foundation
import HoardCatalog
import HoardCore

/// What a rendition job asks a worker to do, as the catalog keeps it (``JobSpec/request``): the generators to run, in
/// order, on one asset's largest variant, with the request they are given, and the entry that names the source in
/// problems.
public struct RenditionJobRequest: Sendable, Hashable, Codable {
    /// The generators' ids, in registration order.
    public var generators: [String]
    /// The asset (as its import planned it), its largest variant and the pack's pixels per tile.
    public var request: GenerationRequest
    /// The source's path in its archive.
    public var entry: String

    /// A request.
    public init(generators: [String], request: GenerationRequest, entry: String) {
        self.generators = generators
        self.request = request
        self.entry = entry
    }
}

/// Derived pictures (and a sound's compatible rendition), in two halves. An import asks for them
/// (``jobs(for:generators:)``): for every planned asset the generators that apply to the pack (and accept its type)
/// say, with their recipes, what they would make of its largest variant, and that is one job of the queue, keyed by
/// the source's digest and the recipes. A worker makes them later
/// (``make(_:source:generators:limits:kinds:)``): each picture a generator returns is checked — its header must show
/// the type it claims within the limits and no larger than the source; a LOD must be a missing allowed scale that
/// passes the variant rules with the shipped ones; a sound's only output is a `compatible` AAC-in-M4A rendition as long
/// as its source (``checkCompatible(_:of:limits:)``) — and a generator's refusal, or an output that fails, fails the job
/// with one problem that names the source.
enum PictureGeneration {
    /// One job an import queues, before it is linked to its asset's digest (known once the descriptor is encoded).
    struct Draft: Sendable {
        /// The planned asset it renders.
        var asset: Int
        var source: Digest
        var recipe: String
        var request: String
        var expects: [String]
    }

    /// The jobs of a plan's assets, one per asset that some generator has a recipe for; in the plan's order.
    static func jobs(for plan: PackPlanner.Plan, generators: [any PictureGenerator]) -> [Draft] {
        guard !generators.isEmpty else { return [] }
        var drafts: [Draft] = []
        for (index, (asset, assetPlan)) in zip(plan.assets, plan.plans).enumerated() {
            guard let top = assetPlan.pictures.max(by: { $0.scale < $1.scale }),
                  let source = asset.variants.first(where: { $0.scale == top.scale })
            else { continue }
            let request = GenerationRequest(asset: asset, source: source, tilePixels: plan.packFile.effectiveTilePixels)
            var ids: [String] = []
            var keys: [String] = []
            var roles: [String] = []
            // A sound reaches only the generators that take sounds (a plugin whose manifest names them in `sources`).
            for generator in generators where generator.accepts(source.mediaType) {
                guard let recipe = generator.recipe(for: request) else { continue }
                ids.append(generator.id)
                keys.append(recipe.key)
                for role in recipe.roles.isEmpty ? ["renditions"] : recipe.roles.map(\.name) where !roles.contains(role) {
                    roles.append(role)
                }
            }
            guard !ids.isEmpty,
                  let bytes = try? CanonicalJSON.encode(RenditionJobRequest(generators: ids, request: request, entry: top.picture.path.description))
            else { continue }
            drafts.append(Draft(
                asset: index, source: source.digest, recipe: keys.joined(separator: " | "), request: String(decoding: bytes, as: UTF8.self),
                expects: roles))
        }
        return drafts
    }

    /// A picture a job made and Hoard checked.
    struct Made: Sendable {
        var role: GeneratedPicture.Role
        var bytes: [UInt8]
        var info: ImageInfo
    }

    /// Runs a job's generators on its source's bytes, in order, and checks what they make; the pictures, or the one
    /// problem that fails the job (a generator's refusal, or a picture Hoard refuses).
    static func make(
        _ job: RenditionJobRequest, source bytes: UnsafeRawBufferPointer, generators: [any PictureGenerator], limits: ImportLimits,
        kinds: [any AssetKindDefinition]
    ) -> Result<[Made], Problem> {
        let request = job.request
        let asset = request.asset
        let source = request.source
        let entry = job.entry
        func refuse(_ generator: any PictureGenerator, _ message: String) -> Result<[Made], Problem> {
            .failure(Problem(.pluginFailure, "the generator \(generator.id) \(message); nothing it made was kept", entry: entry))
        }
        var made: [Made] = []
        var scales = Set(asset.variants.map(\.scale))
        for id in job.generators {
            guard let generator = generators.first(where: { $0.id == id }) else {
                return .failure(Problem(
                    .pluginFailure, "the generator \(id) is not installed in this Hoard; install it (hoard plugins) and retry the job",
                    entry: entry))
            }
            let outcome = Result { () throws(Problem) -> [GeneratedPicture] in try generator.generate(request, source: bytes) }
            let pictures: [GeneratedPicture]
            switch outcome {
            case .success(let found): pictures = found
            case .failure(let error): return .failure(Problem(error.code, error.message, entry: entry, severity: error.severity))
            }
            for picture in pictures {
                let info: ImageInfo
                if source.mediaType.isAudio || picture.role == .compatible {
                    // A sound's rendition has no pixels: its header is read as a sound's and checked against its source.
                    if let refusal = checkCompatible(picture, of: source, limits: limits) { return refuse(generator, refusal) }
                    info = ImageInfo(mediaType: picture.mediaType, width: 0, height: 0)
                } else {
                    switch ArchiveScan.checkHeader(picture.bytes, isComplete: true, claimed: picture.mediaType, limits: limits) {
                    case .success(let found): info = found
                    case .failure(let problem): return refuse(generator, "made a picture Hoard refuses: \(problem.message)")
                    }
                    guard info.width <= source.width, info.height <= source.height else {
                        return refuse(generator, "made a \(info.width)×\(info.height) picture from a \(source.width)×\(source.height) source")
                    }
                }
                if case .variant(let scale) = picture.role {
                    guard AssetNaming.allowedScales.contains(scale), scales.insert(scale).inserted else {
                        return refuse(generator, "made a variant at scale \(scale), which is not a missing LOD scale")
                    }
                }
                made.removeAll { $0.role == picture.role }
                made.append(Made(role: picture.role, bytes: picture.bytes, info: info))
            }
        }
        let lods = made.compactMap { picture -> (Int, ImageInfo)? in
            guard case .variant(let scale) = picture.role else { return nil }
            return (scale, picture.info)
        }
        if !lods.isEmpty, let definition = ConventionContext(packFile: PackFile(), kinds: kinds).definition(of: asset.kind) {
            let shipped = asset.variants.map { ($0.scale, ImageInfo(mediaType: $0.mediaType, width: $0.width, height: $0.height)) }
            let candidates = (shipped + lods).map { VariantRules.Candidate(entry: entry, scale: $0.0, info: $0.1) }
            let found = VariantRules.check(candidates, footprint: asset.footprint, kind: definition, tilePixels: request.tilePixels)
            if let error = found.first(where: { $0.severity == .error }) {
                return .failure(Problem(.pluginFailure, "a generated LOD does not match the shipped ones: \(error.message)", entry: entry))
            }
        }
        return .success(made)
    }

    /// Why a sound's rendition is refused, or nil: it must be a `compatible` output of a sound, AAC in M4A by its
    /// header (``AudioHeader``), within the limits, and as long as its source (within ``compatibleDurationSlack`` ms).
    static func checkCompatible(_ output: GeneratedPicture, of source: AssetDescriptor.Variant, limits: ImportLimits) -> String? {
        guard output.role == .compatible, source.mediaType.isAudio else {
            return source.mediaType.isAudio
                ? "made a \(output.role.name) of a sound, which only gets a compatible rendition"
                : "made a compatible rendition of a picture, which only a sound gets"
        }
        guard output.bytes.count <= limits.maxAudioBytes else {
            return "made a \(output.bytes.count)-byte sound, over the \(limits.maxAudioBytes) a sound may have"
        }
        let info: AudioInfo
        do {
            info = try AudioHeader.read(output.bytes)
        } catch {
            return "made a compatible rendition that is no sound Hoard reads: \(error.message)"
        }
        guard output.mediaType == .m4a, info.mediaType == .m4a, info.codec == "aac" else {
            return "made a compatible rendition of \(info.codec) in \(info.mediaType.rawValue) (claimed \(output.mediaType.rawValue)); "
                + "it must be AAC in audio/mp4"
        }
        if let expected = source.durationMs, abs(info.durationMs - expected) > compatibleDurationSlack {
            return "made a compatible rendition of \(info.durationMs) ms from a sound of \(expected) ms"
        }
        return nil
    }

    /// How far a compatible rendition's duration may be from its source's, in ms: AAC frames are about 21 ms, and an
    /// encoder's priming and padding add a frame or two.
    static let compatibleDurationSlack = 100
}
