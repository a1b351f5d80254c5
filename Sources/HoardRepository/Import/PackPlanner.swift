import HoardCore
import HoardStore

/// One asset planned from staged pictures, before descriptors are written.
struct AssetPlan: Sendable {
    var kind: AssetKind
    var name: String
    var footprint: Footprint
    var pictures: [(scale: Int, picture: StagedPicture)]
}

/// The second pass of an import: pack.json, naming, grouping variants and checking them. Pure: no I/O.
struct PackPlanner: Sendable {
    let registry: PluginRegistry
    let limits: ImportLimits

    struct Plan: Sendable {
        var packFile: PackFile
        var assets: [PlannedAsset]
        var plans: [AssetPlan]
        /// The folder every file sat under, stripped from every path (``ArchiveScan/topFolder`` unless it names a kind).
        var wrapper: String?
        /// The licence, readme and credits files at the pack's root, with their staged blobs.
        var documents: [(document: PackDocument, blob: StagedBlob)] = []
    }

    func plan(_ scan: ArchiveScan, problems: inout [Problem]) -> Plan {
        var packFile = PackFile()
        let packFileBytes = PackNaming.packFileBytes(root: scan.packFileBytes, wrapped: scan.wrappedPackFile, topFolder: scan.topFolder)
        if let wrapped = scan.wrappedPackFile, scan.packFileBytes != nil || wrapped.folder != scan.topFolder {
            problems.append(Problem(
                .ignoredEntry, "pack.json is read only at the pack's root (or in the one folder that holds everything); skipped",
                entry: "\(wrapped.folder)/\(PackFile.fileName)", severity: .warning))
        }
        if let bytes = packFileBytes {
            switch PackFile.parse(bytes) {
            case .success(let parsed): packFile = parsed
            case .failure(let problem): problems.append(problem)
            }
            for key in PackFile.unknownKeys(bytes) {
                problems.append(Problem(
                    .badManifest, "pack.json has a key '\(key)' that Hoard does not know; it was ignored (check its spelling)",
                    entry: PackFile.fileName, severity: .warning))
            }
        }
        let context = ConventionContext(packFile: packFile, kinds: registry.kinds)
        var unclaimedKind: AssetKind? = packFile.effectiveDefaultKind
        if context.definition(of: packFile.effectiveDefaultKind) == nil {
            problems.append(Problem(
                .badManifest, "defaultKind '\(packFile.effectiveDefaultKind)' is no registered kind; use token, object, texture, wall or background",
                entry: PackFile.fileName))
            unclaimedKind = nil
        }
        if !registry.isEnabled(DefaultNamingConvention().id, byDefault: true, for: packFile) { unclaimedKind = nil }
        let wrapper = PackNaming.wrapper(topFolder: scan.topFolder, context: context)
        var pictures = scan.pictures
        if wrapper != nil {
            for index in pictures.indices {
                pictures[index].path = EntryPath(components: Array(pictures[index].path.components.dropFirst()))
            }
        }
        // Pictures are grouped by kind and name; within a group each explicit footprint is one asset
        // (door_1x2 and door_2x1), and pictures without one join the only explicit footprint there is.
        var named: [String: [(AssetNaming, StagedPicture)]] = [:]
        var order: [String] = []
        var unclaimed = SkippedFiles(), defaulted = SkippedFiles()
        // Sorted by the path as shown (each joined once, not on every comparison).
        for (shown, picture) in pictures.map({ ($0.path.description, $0) }).sorted(by: { $0.0 < $1.0 }) {
            do {
                var found: AssetNaming?
                if let token = picture.token {
                    let taken = { (name: String) in named["\(AssetKind.token.rawValue)\u{0}\(name)"] != nil }
                    let (naming, warning) = naming(of: token, at: picture.path, context: context, isTaken: taken)
                    found = naming
                    problems += warning.map { [$0] } ?? []
                } else {
                    found = try registry.name(picture.path, context: context)
                }
                if picture.audio != nil {
                    // A sound is audio wherever it sits, unless a folder says it is something else.
                    if let kind = found?.kind, kind != .audio {
                        problems.append(Problem(
                            .ignoredEntry, "a sound in a folder of \(kind)s; skipped (put it under Music/, Ambience/ or Sounds/)",
                            entry: shown, severity: .warning))
                        continue
                    }
                    if found == nil { found = try DefaultNamingConvention().interpret(picture.path, context: context, unclaimedKind: .audio) }
                }
                if found == nil, let unclaimedKind {
                    found = try DefaultNamingConvention().interpret(picture.path, context: context, unclaimedKind: unclaimedKind)
                    if found != nil { defaulted.add(picture.path) }
                }
                guard var naming = found else {
                    unclaimed.add(picture.path)
                    continue
                }
                if naming.kind == .audio {
                    guard picture.audio != nil else {
                        problems.append(Problem(
                            .ignoredEntry, "a picture in a folder of sounds; skipped (cover art is not imported)", entry: shown, severity: .warning))
                        continue
                    }
                    (naming.footprint, naming.scale) = (.single, 1)
                }
                if let definition = context.definition(of: naming.kind), let problem = pixelBudget(picture, of: definition, shown: shown) {
                    problems.append(problem)
                    continue
                }
                let key = "\(naming.kind.rawValue)\u{0}\(naming.name)"
                if named[key] == nil { order.append(key) }
                named[key, default: []].append((naming, picture))
            } catch {
                problems.append(error)
            }
        }
        problems += unclaimed.problems(
            code: .ignoredEntry, severity: .warning,
            what: "no folder names a kind for this picture; skipped (put it under tokens/, objects/, textures/, walls/ or backgrounds/, "
                + "or map the folder in pack.json \"kinds\")")
        problems += defaulted.problems(
            code: .defaultKind, severity: .warning,
            what: "no folder names a kind, so the picture is a \(packFile.effectiveDefaultKind) (pack.json \"defaultKind\"); "
                + "put it under tokens/, objects/, textures/, walls/ or maps/ to say what it is")
        var groups: [String: AssetPlan] = [:]
        var planOrder: [String] = []
        for key in order {
            let members = named[key] ?? []
            let explicit = Set(members.filter(\.0.isFootprintExplicit).map(\.0.footprint))
            for (naming, picture) in members {
                var footprint = naming.footprint
                if !naming.isFootprintExplicit {
                    guard explicit.count <= 1 else {
                        let footprints = explicit.map(\.description).sorted().joined(separator: ", ")
                        problems.append(Problem(
                            .variantMismatch, "its siblings give several footprints (\(footprints)); "
                                + "name this variant's footprint too, e.g. _2x2", entry: picture.path.description))
                        continue
                    }
                    footprint = explicit.first ?? naming.footprint
                }
                let assetKey = key + "\u{0}\(footprint)"
                if groups[assetKey] == nil {
                    groups[assetKey] = AssetPlan(kind: naming.kind, name: naming.name, footprint: footprint, pictures: [])
                    planOrder.append(assetKey)
                }
                groups[assetKey]?.pictures.append((naming.scale, picture))
            }
        }
        let assetOrder = planOrder
        if packFile.tilePixels == nil {
            packFile.tilePixels = Self.inferredTilePixels(assetOrder.compactMap { groups[$0] }, grid: packFile.effectiveGrid, context: context)
        }
        var plans: [AssetPlan] = []
        for key in assetOrder {
            guard let plan = groups[key], let definition = context.definition(of: plan.kind) else { continue }
            let candidates = plan.pictures.map { VariantRules.Candidate(entry: $0.picture.path.description, scale: $0.scale, info: $0.picture.info) }
            let found = VariantRules.check(candidates, footprint: plan.footprint, kind: definition, tilePixels: packFile.effectiveTilePixels,
                grid: packFile.effectiveGrid)
            problems += found
            if !found.contains(where: { $0.severity == .error }) { plans.append(plan) }
        }
        let soundBytes = plans.flatMap(\.pictures).filter { $0.picture.audio != nil }.reduce(Int64(0)) { $0 + $1.picture.blob.size }
        if soundBytes > limits.maxPackAudioBytes {
            problems.append(Problem(
                .audioTooLarge, "the pack's sounds are \(soundBytes) bytes, over the \(limits.maxPackAudioBytes) a pack may hold "
                    + "(maxPackAudioBytes); split it into several packs"))
        }
        let assets = plans.map { plan in
            let sorted = plan.pictures.sorted { $0.scale < $1.scale }
            return PlannedAsset(
                kind: plan.kind, name: plan.name, footprint: plan.footprint,
                variants: sorted.map { Self.variant(scale: $0.scale, $0.picture) }, entries: sorted.map { $0.picture.path.description })
        }
        let documents = documents(scan, wrapper: wrapper, problems: &problems)
        return Plan(packFile: packFile, assets: assets, plans: plans, wrapper: wrapper, documents: documents)
    }

    /// The asset of a MapTool token file's image: a token named by the token's `<name>` (else the file's), in the file's
    /// folders as any picture's name is (the outermost folder that names a kind left out); a name another token file
    /// took already gives way to the file's. Its footprint is MapTool's (Medium 1×1, Large 2×2, Huge 3×3…); one Hoard
    /// does not know is 1×1, with a warning.
    private func naming(
        of token: MapToolToken, at path: EntryPath, context: ConventionContext, isTaken: (String) -> Bool
    ) -> (AssetNaming, Problem?) {
        let folders = Array(path.components.dropLast())
        let category = folders.firstIndex { context.kind(forFolder: $0) != nil }
        let kept = folders.indices.filter { $0 != category }.map { folders[$0] }
        let stem = DefaultNamingConvention.splitExtension(path.fileName)?.stem ?? path.fileName
        var name = (kept + [token.name.isEmpty ? stem : token.name]).joined(separator: "/")
        if isTaken(name) { name = (kept + [stem]).joined(separator: "/") }
        var warning: Problem?
        if token.footprint == nil {
            warning = Problem(
                .badFootprint, "the token's size (\(token.footprintName ?? "a footprint of its campaign or a hex grid")) is none of MapTool's "
                    + "square-grid sizes Hoard reads; it is imported as 1×1", entry: path.description, severity: .warning)
        }
        return (AssetNaming(kind: .token, name: name, footprint: token.footprint ?? .single, scale: 1), warning)
    }

    /// The documents at the pack's root (after the wrapper): a PDF must be one by its bytes (`TYPE_MISMATCH`); one
    /// elsewhere or over `maxDocumentBytes` is skipped with a warning.
    private func documents(
        _ scan: ArchiveScan, wrapper: String?, problems: inout [Problem]
    ) -> [(document: PackDocument, blob: StagedBlob)] {
        var kept: [(document: PackDocument, blob: StagedBlob)] = []
        for staged in scan.documents {
            let shown = staged.path.description
            let inPack = wrapper == nil ? staged.path.components : Array(staged.path.components.dropFirst())
            guard inPack.count == 1, wrapper == nil || staged.path.components.first == wrapper else {
                problems.append(Problem(
                    .ignoredEntry, "licence, readme and credits files are kept only at the pack's root; skipped", entry: shown, severity: .warning))
                continue
            }
            guard staged.blob.size <= Int64(limits.maxDocumentBytes) else {
                problems.append(Problem(
                    .ignoredEntry, "the document is \(staged.blob.size) bytes, over the \(limits.maxDocumentBytes) kept with a pack; skipped",
                    entry: shown, severity: .warning))
                continue
            }
            if staged.mediaType == "application/pdf" {
                let head = (try? staged.blob.withMappedBytes { Array($0.prefix(5)) }) ?? []
                guard head == Array("%PDF-".utf8) else {
                    problems.append(Problem(.typeMismatch, "the name says PDF but the bytes are not a PDF document; rename it or remove it", entry: shown))
                    continue
                }
            }
            kept.append((PackDocument(name: inPack[0], digest: staged.blob.digest, mediaType: staged.mediaType, size: staged.blob.size), staged.blob))
        }
        return kept
    }

    /// `IMAGE_TOO_LARGE` when the picture is over its kind's pixel budget (map art has the larger one).
    private func pixelBudget(_ picture: StagedPicture, of kind: any AssetKindDefinition, shown: String) -> Problem? {
        let budget = kind.isMapArt ? limits.maxMapPixels : limits.maxImagePixels
        let pixels = picture.info.width * picture.info.height
        guard pixels > budget else { return nil }
        let hint = kind.isMapArt ? "scale it down" : "scale it down, or put a battlemap under maps/ or backgrounds/ (\(limits.maxMapPixels) pixels)"
        return Problem(
            .imageTooLarge, "the picture is \(picture.info.width)×\(picture.info.height) pixels, over the \(budget) pixels a \(kind.kind) may have; \(hint)",
            entry: shown)
    }

    static func variant(scale: Int, _ picture: StagedPicture) -> AssetDescriptor.Variant {
        if let audio = picture.audio { return AssetDescriptor.Variant(digest: picture.blob.digest, size: picture.blob.size, audio: audio) }
        return AssetDescriptor.Variant(
            scale: scale, digest: picture.blob.digest, width: picture.info.width, height: picture.info.height,
            size: picture.blob.size, mediaType: picture.info.mediaType, animation: picture.info.animation)
    }
}
