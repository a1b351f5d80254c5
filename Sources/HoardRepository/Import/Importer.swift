import Foundation
import HoardArchive
import HoardCatalog
import HoardCore
import HoardStore

/// Turns an archive into a pack: streams every entry into staging while hashing it, names and checks the
/// pictures, writes descriptors and the manifest, publishes the blobs durably, then commits the catalog.
///
/// A refused archive changes nothing: its staging area is discarded and no row is written.
public struct Importer: Sendable {
    /// Where blobs and rows go, through its one write path.
    public let hoard: Hoard
    /// Where blobs go.
    public var store: any BlobStore { hoard.store }
    /// Where rows go.
    public var catalog: Catalog { hoard.catalog }
    /// Kinds, conventions and processors.
    public var registry: PluginRegistry { hoard.registry }

    /// Creates an importer into `hoard`.
    public init(hoard: Hoard) {
        self.hoard = hoard
    }

    /// What an import is asked to do.
    public struct Options: Sendable {
        /// The owning group; created if new.
        public var group: String = "default"
        /// A pack name that wins over pack.json and the file name.
        public var packName: String?
        /// Whether the archive's file name may name the pack when neither `packName` nor pack.json does (the
        /// server's spool files have meaningless names).
        public var namesFromFileName = true
        /// Budgets.
        public var limits = ImportLimits()
        /// Whether an archive of archives (a bundle) may be imported, each inner archive as its own pack
        /// (``Importer/importArchive(at:options:progress:)``); when false a bundle is refused before anything is stored.
        public var acceptsBundles = false
        /// The archive's name in reports (and for naming the pack, with `namesFromFileName`) when its path does not
        /// give it: an inner archive staged as `N.blob`, an upload's spool file.
        public var archiveName: String?
        /// Asked between entries and before anything is published: true stops the import (`IMPORT_CANCELLED`), and
        /// nothing is stored. Once the publish has begun the import runs to its end.
        public var isCancelled: (@Sendable () -> Bool)?
        /// Whether a pack of the same name already in the group refuses the import (`PACK_CONFLICT`, nothing stored)
        /// instead of receiving a new version: for an uploader who has not been asked whether to replace it.
        public var isNewPackOnly = false
        /// The CPU priority of the import's reading, hashing and checking threads (a nice value, 0 to 19); nil keeps the
        /// caller's. A server's imports run below its serving (``HoardServer``'s `importNiceness`).
        public var niceness: Int32?
        /// The bundle's budgets when this archive is one of its packs.
        var budget: SharedBudget?
        /// Creates default options.
        public init() {}
    }

    /// Imports one archive file as one pack. Throws ``ImportError`` listing every problem when the archive is refused
    /// (a bundle too: use ``importArchive(at:options:progress:)`` with `options.acceptsBundles`).
    public func importPack(
        at path: String, options: Options = Options(), progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportReport {
        var options = options
        options.acceptsBundles = false
        guard case .pack(let report) = try await importArchive(at: path, options: options, progress: progress) else {
            throw ImportError(archive: (path as NSString).lastPathComponent, problems: [Problem(.storageFailure, "a bundle was imported as a pack")])
        }
        return report
    }

    /// Imports one archive file: one pack, or, for a bundle (an archive holding zip or Dungeondraft archives and no
    /// picture) when `options.acceptsBundles`, each inner archive as its own pack with its own report. The packs of a
    /// bundle share its budgets (entries, decoded bytes, ratio: ``SharedBudget``); archives inside them are skipped
    /// (one level of nesting); a refused inner archive refuses only itself. Throws ``ImportError`` when the archive
    /// (or the bundle itself) is refused.
    public func importArchive(
        at path: String, options: Options = Options(), progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportOutcome {
        let started = Date()
        let archiveName = options.archiveName ?? (path as NSString).lastPathComponent
        func refuse(_ problems: [Problem], cause: String? = nil) -> ImportError {
            ImportError(archive: archiveName, problems: problems, cause: cause)
        }
        let area: StagingArea
        do {
            area = try store.makeStagingArea()
        } catch {
            throw refuse([Problem(.storageFailure, "\(error)")])
        }
        defer { area.discard() }

        var scan: ArchiveScan
        let rewritten: PictureRewriting.Outcome
        let limits = options.limits
        let defaultRewriters = registry.rewriters(for: PackFile())
        let ahead = defaultRewriters.isEmpty ? nil : RewritingAhead(PictureRewriting(rewriters: defaultRewriters, area: area, limits: limits))
        // Runs before the staging area is discarded: nothing may still be rewriting into it.
        defer { ahead?.wait() }
        do {
            var staged: (@Sendable (StagedPicture) -> Void)?
            if let ahead { staged = { ahead.submit($0) } }
            let budget = options.budget
            let stop = options.isCancelled
            scan = try await offloaded(niceness: options.niceness) { [staged] in
                try ArchiveScan.read(path: path, limits: limits, into: area, progress: progress, staged: staged, shared: budget, stop: stop)
            }
            if scan.isBundle {
                ahead?.wait()
                guard options.acceptsBundles else {
                    let names = scan.innerArchives.map(\.path.fileName).joined(separator: ", ")
                    throw ArchiveError(
                        .unsupportedFormat, "the archive is a bundle of \(scan.innerArchives.count) packs (\(names)); import it with "
                            + "`hoard import`, which imports each as its own pack, or import them one by one")
                }
                return .bundle(await importBundle(scan, options: options))
            }
            if scan.isMapToolFile {
                ahead?.wait()
                scan = ArchiveScan(tokenFileAt: path, named: archiveName, archiveSize: scan.archiveSize)
            }
            if !scan.tokenFiles.isEmpty {
                // A pack's token files share its budgets as a bundle's packs share the bundle's (its bundle's, in one).
                let shared = budget ?? SharedBudget(
                    limits: limits, bundleSize: scan.archiveSize, entries: scan.entries, decoded: scan.decodedBytes, names: ("the pack", "its token files"))
                let reading = TokenFileReading(area: area, limits: limits, budget: shared, ownsBudget: budget == nil, staged: staged)
                let files = scan.tokenFiles
                let read = try await offloaded(niceness: options.niceness) { try reading.read(files) }
                scan.pictures += read.pictures
                scan.problems += read.problems
            }
            area.startSyncing()
            let packFile = scan.packFileBytes.flatMap { try? PackFile.parse($0).get() } ?? PackFile()
            let rewriting = PictureRewriting(rewriters: registry.rewriters(for: packFile), area: area, limits: limits)
            let pictures = scan.pictures
            rewritten = try await offloaded(niceness: options.niceness) {
                try ahead?.outcome(of: pictures, rewriters: rewriting.rewriters) ?? rewriting.run(pictures)
            }
        } catch let error as ArchiveError {
            throw refuse([error.problem], cause: error.cause)
        } catch {
            throw refuse([Problem(.storageFailure, "\(error)")])
        }
        scan.pictures = rewritten.pictures
        scan.problems += rewritten.problems
        var problems = scan.problems
        let plan = PackPlanner(registry: registry, limits: options.limits).plan(scan, problems: &problems)
        // Generated LODs, previews and thumbnails are not made here: each asset's are a job of the catalog's queue,
        // committed with the pack and made later by a worker (RenditionWorkers), so the pack is usable at once.
        let drafts = PictureGeneration.jobs(for: plan, generators: registry.generators(for: plan.packFile))
        for processor in registry.processors {
            do {
                problems += try await processor.process(plan.assets, packFile: plan.packFile)
            } catch {
                problems.append(Problem(.storageFailure, "processor \(processor.id) failed: \(error)"))
            }
        }
        var packName = PackNaming.name(
            typed: options.packName, packFile: plan.packFile, wrapper: plan.wrapper, archive: options.namesFromFileName ? archiveName : nil,
            token: scan.isTokenFile ? plan.assets.first?.name : nil)?.0 ?? ""
        if plan.assets.isEmpty, !problems.contains(where: { $0.severity == .error }) {
            problems.append(Problem(.emptyPack, "the archive holds no PNG, JPEG or WebP pictures that Hoard could name; see the warnings"))
        } else if packName.isEmpty {
            problems.append(Problem(.badManifest, "the pack has no name: add \"name\" to pack.json or pass one with the upload"))
        } else {
            switch Self.checkPackName(packName) {
            case .success(let canonical): packName = canonical
            case .failure(let problem): problems.append(problem)
            }
        }
        guard !problems.contains(where: { $0.severity == .error }) else { throw refuse(problems) }
        if options.isCancelled?() == true { throw refuse([ArchiveScan.cancelled.problem]) }

        do {
            let (commit, held, outcome) = try await commitPack(
                plan, jobs: drafts, area: area, packName: packName, group: options.group, isNewPackOnly: options.isNewPackOnly
            ) {
                progress?(ImportProgress(phase: $0, bytesRead: scan.archiveSize, totalBytes: scan.archiveSize, entries: scan.entries))
            }
            let allBytes = commit.blobs.reduce(into: [Digest: Int64]()) { $0[$1.digest] = $1.size }
            // Counted for the group alone: bytes another group holds count as new here, so the report tells no one what
            // other groups hold (as `PUT /v1/blobs` never does).
            let heldBytes = held.reduce(Int64(0)) { $0 + (allBytes[$1] ?? 0) }
            return .pack(ImportReport(
                archive: archiveName, pack: packName, version: commit.version, group: options.group,
                manifestDigest: commit.manifestDigest, outcome: outcome == .recorded ? .imported : .unchanged,
                assets: plan.assets.count, assetsByKind: Dictionary(grouping: plan.assets, by: \.kind.rawValue).mapValues(\.count),
                files: plan.assets.reduce(0) { $0 + $1.variants.count }, bytes: allBytes.values.reduce(0, +),
                newBlobs: allBytes.count - held.count, newBytes: allBytes.values.reduce(0, +) - heldBytes,
                existingBlobs: held.count, existingBytes: heldBytes,
                rewrittenFiles: rewritten.rewritten, gpsFiles: rewritten.gpsPictures, renditionJobs: commit.jobs.count,
                litterFiles: scan.litterFiles, wrapperFolder: plan.wrapper, warnings: problems, seconds: Date().timeIntervalSince(started)))
        } catch let error as CatalogError {
            let code: ProblemCode = error.code == .conflict ? .packConflict : .storageFailure
            throw refuse(problems + [Problem(code, error.message)], cause: error.cause)
        } catch {
            throw refuse(problems + [Problem(.storageFailure, "\(error)")])
        }
    }

    /// Steps 8–10: prepare descriptors and manifest, publish, commit. When pack.json names no version, the version is
    /// chosen from the catalog as it was read; a concurrent import of the same pack may commit that version first
    /// with other content. Then the version is chosen again from the new state (at most 10 times), so concurrent
    /// imports without a version each get their own version, or `unchanged` when their content is the same.
    private func commitPack(
        _ plan: PackPlanner.Plan, jobs drafts: [PictureGeneration.Draft], area: StagingArea, packName: String, group: String,
        isNewPackOnly: Bool, phase: (ImportProgress.Phase) -> Void
    ) async throws -> (ImportCommit, Set<Digest>, RecordOutcome) {
        var attempt = 1
        while true {
            let state = try catalog.packState(named: packName, group: group)
            if let state, !NameRule.spelledAlike(state.name, packName) {
                // The group's pack of the same name under NameRule ("Émoi" for "émoi"): a new pack is refused.
                throw CatalogError(.conflict, SQLiteCatalog.alikePack(state.name, packName, group: state.group))
            }
            if let state, isNewPackOnly {
                throw CatalogError(
                    .conflict, "a pack named '\(state.name)' is already in group '\(state.group)'; upload it again to add a version of it")
            }
            let prepared = try await offloaded {
                var prepared = try PackWriter(plan: plan).prepare(packName: packName, group: group, state: state)
                prepared.commit.jobs = Self.jobs(drafts, of: prepared.commit.assets)
                return prepared
            }
            let held = try Self.blobs(Set(prepared.commit.blobs.map(\.digest)), heldBy: group, catalog)
            phase(.publishing)
            do {
                let pictures = prepared.pictures
                let (outcome, _) = try await hoard.publishAndRecord(
                    pictures, thenStaging: { try PackWriter.stageDocuments(of: prepared, in: area) }, in: area,
                    published: { phase(.committing) },
                    record: .alongsidePublish { [catalog, commit = prepared.commit] afterPublish in
                        // One writer (SQLite): a transaction waiting for the publish would hold every other writer — the
                        // live table's events — for the publish's whole length (seconds). There it starts after it.
                        guard catalog.hasOneWriter else { return try catalog.record(commit, committingAfter: afterPublish) }
                        try afterPublish()
                        return try catalog.record(commit, committingAfter: {})
                    })
                return (prepared.commit, held, outcome)
            } catch let error as CatalogError {
                guard error.code == .conflict, plan.packFile.version == nil, attempt < 10 else { throw error }
                attempt += 1
            }
        }
    }

    /// The import's jobs, each linked to its asset's digest: the first screen's (in listing order, by kind then name)
    /// first, then the rest.
    static func jobs(_ drafts: [PictureGeneration.Draft], of assets: [(descriptor: AssetDescriptor, digest: Digest)]) -> [JobSpec] {
        let order = assets.indices.sorted {
            (assets[$0].descriptor.kind, assets[$0].descriptor.name, assets[$0].digest) < (assets[$1].descriptor.kind, assets[$1].descriptor.name, assets[$1].digest)
        }
        var rank: [Int: Int] = [:]
        for (position, index) in order.enumerated() { rank[index] = position }
        return drafts.sorted { rank[$0.asset] ?? 0 < rank[$1.asset] ?? 0 }.map { draft in
            JobSpec(
                source: draft.source, recipe: draft.recipe, request: draft.request, expects: draft.expects,
                priority: (rank[draft.asset] ?? 0) < JobPriority.firstScreenAssets ? JobPriority.firstScreen : JobPriority.imported,
                assets: [assets[draft.asset].digest])
        }
    }

    /// Which of `digests` group `name` held before this import: referenced by one of its packs (any version) or
    /// uploaded by it. What an import reports as already stored is these alone.
    static func blobs(_ digests: Set<Digest>, heldBy name: String, _ catalog: Catalog) throws -> Set<Digest> {
        guard let groupId = try catalog.group(matching: name)?.id else { return [] }
        let owners = try catalog.blobOwners(Array(digests))
        var packGroups: [Int64: Int64?] = [:]
        var held: Set<Digest> = []
        for (digest, owner) in owners {
            if owner.uploaders.contains(groupId) {
                held.insert(digest)
                continue
            }
            for pack in owner.packs {
                if packGroups[pack] == nil { packGroups[pack] = .some(try catalog.packAccess(id: pack)?.groupId) }
                if packGroups[pack] == .some(groupId) {
                    held.insert(digest)
                    break
                }
            }
        }
        return held
    }

    /// Imports each inner archive of a bundle as its own pack, in name order, within the bundle's shared budgets.
    private func importBundle(_ scan: ArchiveScan, options: Options) async -> [BundleMember] {
        let budget = SharedBudget(limits: options.limits, bundleSize: scan.archiveSize, entries: scan.entries, decoded: scan.decodedBytes)
        var members: [BundleMember] = []
        for inner in scan.innerArchives {
            var innerOptions = options
            innerOptions.packName = nil
            innerOptions.namesFromFileName = true
            innerOptions.archiveName = inner.path.fileName
            innerOptions.budget = budget
            innerOptions.acceptsBundles = false
            do {
                guard case .pack(let report) = try await importArchive(at: inner.blob.path, options: innerOptions) else { continue }
                budget.finishPack(imported: true)
                members.append(BundleMember(archive: inner.path.description, outcome: .success(report)))
            } catch {
                budget.finishPack(imported: false)
                members.append(BundleMember(archive: inner.path.description, outcome: .failure(error)))
            }
        }
        return members
    }

    /// `dungeon-basics.zip` → `dungeon-basics`; also strips `.tar`, `.tar.gz`, `.tgz`, `.dungeondraft_pack`, `.rptok`.
    static func packName(fromArchive name: String) -> String {
        for suffix in [".tar.gz", ".tgz", ".tar", ".zip", ".dungeondraft_pack", ".rptok"] where name.lowercased().hasSuffix(suffix) {
            return String(name.dropLast(suffix.count))
        }
        return name
    }

    /// The pack name as it is stored (``NameRule/canonical(_:as:)``), or why it cannot name a pack.
    static func checkPackName(_ name: String) -> Result<String, Problem> {
        do {
            return .success(try NameRule.canonical(name, as: .pack))
        } catch {
            return .failure(Problem(.badManifest, "the pack name '\(name.prefix(128))' was refused: \(error.message)"))
        }
    }
}
