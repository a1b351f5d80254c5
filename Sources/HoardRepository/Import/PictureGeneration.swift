import Dispatch
import Foundation
import HoardCore
import HoardStore

/// Step 6a of an import: the generators that apply to the pack make derived pictures of every planned asset from
/// its largest variant (memory-mapped). Hoard checks each one — its header must show the type it claims within the
/// limits and no larger than the source; a LOD must be a missing allowed scale that passes the variant rules with
/// the shipped ones — then stages it and adds it to the plan: LODs as variants marked `generated`, previews and
/// thumbnails as the descriptor's renditions. Assets run in parallel; a generator's refusal is a per-file problem.
struct PictureGeneration: Sendable {
    let generators: [any PictureGenerator]
    let area: StagingArea
    let limits: ImportLimits
    let kinds: [any AssetKindDefinition]

    /// What generation added to one asset.
    private struct Additions {
        var variants: [(scale: Int, picture: StagedPicture)] = []
        var preview: (AssetDescriptor.Rendition, StagedPicture)?
        var thumbnail: (AssetDescriptor.Rendition, StagedPicture)?
        var count: Int { variants.count + (preview == nil ? 0 : 1) + (thumbnail == nil ? 0 : 1) }
    }

    /// Adds the generated pictures to `plan`; returns the problems and how many pictures were added. Throws only
    /// when staging fails.
    func run(_ plan: inout PackPlanner.Plan) throws -> (problems: [Problem], generated: Int) {
        guard !generators.isEmpty, !plan.assets.isEmpty else { return ([], 0) }
        let snapshot = plan
        let results = try concurrentMap(snapshot.assets.count) { index in
            try additions(for: snapshot.assets[index], snapshot.plans[index], tilePixels: snapshot.packFile.effectiveTilePixels)
        }
        var problems: [Problem] = []
        var generated = 0
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let additions):
                generated += additions.count
                apply(additions, to: &plan, at: index)
            case .failure(let problem):
                problems.append(problem)
            }
        }
        return (problems, generated)
    }

    /// Runs every generator on one asset and checks what they made.
    private func additions(
        for asset: PlannedAsset, _ assetPlan: AssetPlan, tilePixels: Int
    ) throws -> Result<Additions, Problem> {
        // Generators make pictures from pictures: a sound is no source for any of them (nor sent to a plugin's).
        guard let top = assetPlan.pictures.max(by: { $0.scale < $1.scale }),
            let source = asset.variants.first(where: { $0.scale == top.scale }), !source.mediaType.isAudio
        else { return .success(Additions()) }
        let entry = top.picture.path.description
        func refuse(_ generator: any PictureGenerator, _ message: String) -> Result<Additions, Problem> {
            .failure(Problem(.pluginFailure, "the generator \(generator.id) \(message); nothing it made was kept", entry: entry))
        }
        var additions = Additions()
        var scales = Set(asset.variants.map(\.scale))
        let request = GenerationRequest(asset: asset, source: source, tilePixels: tilePixels)
        for generator in generators {
            let outcome = try top.picture.blob.withMappedBytes { buffer in
                Result { () throws(Problem) -> [GeneratedPicture] in try generator.generate(request, source: buffer) }
            }
            let made: [GeneratedPicture]
            switch outcome {
            case .success(let pictures): made = pictures
            case .failure(let error): return .failure(Problem(error.code, error.message, entry: entry, severity: error.severity))
            }
            for picture in made {
                let info: ImageInfo
                switch ArchiveScan.checkHeader(picture.bytes, isComplete: true, claimed: picture.mediaType, limits: limits) {
                case .success(let found): info = found
                case .failure(let problem): return refuse(generator, "made a picture Hoard refuses: \(problem.message)")
                }
                guard info.width <= source.width, info.height <= source.height else {
                    return refuse(generator, "made a \(info.width)×\(info.height) picture from a \(source.width)×\(source.height) source")
                }
                let staged = StagedPicture(path: top.picture.path, blob: try area.stage(picture.bytes), info: info)
                let rendition = AssetDescriptor.Rendition(
                    digest: staged.blob.digest, width: info.width, height: info.height, size: staged.blob.size, mediaType: info.mediaType)
                switch picture.role {
                case .variant(let scale):
                    guard AssetNaming.allowedScales.contains(scale), scales.insert(scale).inserted else {
                        return refuse(generator, "made a variant at scale \(scale), which is not a missing LOD scale")
                    }
                    additions.variants.append((scale, staged))
                case .preview: additions.preview = (rendition, staged)
                case .thumbnail: additions.thumbnail = (rendition, staged)
                }
            }
        }
        if !additions.variants.isEmpty, let definition = ConventionContext(packFile: PackFile(), kinds: kinds).definition(of: asset.kind) {
            let all = assetPlan.pictures + additions.variants
            let candidates = all.map { VariantRules.Candidate(entry: entry, scale: $0.scale, info: $0.picture.info) }
            let found = VariantRules.check(candidates, footprint: asset.footprint, kind: definition, tilePixels: tilePixels)
            if let error = found.first(where: { $0.severity == .error }) {
                return .failure(Problem(.pluginFailure, "a generated LOD does not match the shipped ones: \(error.message)", entry: entry))
            }
        }
        return .success(additions)
    }

    /// Puts one asset's generated pictures into the plan.
    private func apply(_ additions: Additions, to plan: inout PackPlanner.Plan, at index: Int) {
        plan.plans[index].pictures += additions.variants
        plan.plans[index].pictures.sort { $0.scale < $1.scale }
        plan.plans[index].renditions = [additions.preview?.1, additions.thumbnail?.1].compactMap { $0 }
        let generated = additions.variants.map { scale, picture in
            var variant = PackPlanner.variant(scale: scale, picture)
            variant.generated = true
            return (variant, picture.path.description)
        }
        let shipped = zip(plan.assets[index].variants, plan.assets[index].entries).map { ($0, $1) }
        let merged = (shipped + generated).sorted { $0.0.scale < $1.0.scale }
        plan.assets[index].variants = merged.map(\.0)
        plan.assets[index].entries = merged.map(\.1)
        plan.assets[index].preview = additions.preview?.0
        plan.assets[index].thumbnail = additions.thumbnail?.0
    }
}
