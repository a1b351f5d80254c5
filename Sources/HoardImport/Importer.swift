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
    /// Where blobs go.
    public let store: any BlobStore
    /// Where rows go.
    public let catalog: Catalog
    /// Kinds, conventions and processors.
    public let registry: PluginRegistry

    /// How much of a picture's start a header check may read (JPEG headers may follow large EXIF blocks).
    static let headerPrefix = 256 << 10
    /// How much of a picture's start is kept in memory while it is staged: enough for the headers of PNG, WebP and
    /// nearly every JPEG; the rest are read back (``ArchiveScan/checkHeader(of:_:claimed:limits:)``).
    static let quickPrefix = 16 << 10

    /// Creates an importer.
    public init(store: any BlobStore, catalog: Catalog, registry: PluginRegistry = .builtIn()) {
        self.store = store
        self.catalog = catalog
        self.registry = registry
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
        /// Creates default options.
        public init() {}
    }

    /// Imports one archive file. Throws ``ImportError`` listing every problem when the archive is refused.
    public func importPack(
        at path: String, options: Options = Options(), progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportReport {
        let started = Date()
        let archiveName = (path as NSString).lastPathComponent
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
            scan = try await offloaded { [staged] in
                try ArchiveScan.read(path: path, limits: limits, into: area, progress: progress, staged: staged)
            }
            area.startSyncing()
            let packFile = scan.packFileBytes.flatMap { try? PackFile.parse($0).get() } ?? PackFile()
            let rewriting = PictureRewriting(rewriters: registry.rewriters(for: packFile), area: area, limits: limits)
            let pictures = scan.pictures
            rewritten = try await offloaded {
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
        var plan = PackPlanner(registry: registry, limits: options.limits).plan(scan, problems: &problems)
        let generation = PictureGeneration(
            generators: registry.generators(for: plan.packFile), area: area, limits: options.limits, kinds: registry.kinds)
        let generated: (plan: PackPlanner.Plan, problems: [Problem], count: Int)
        do {
            let planned = plan
            generated = try await offloaded {
                var plan = planned
                let outcome = try generation.run(&plan)
                return (plan, outcome.problems, outcome.generated)
            }
        } catch {
            throw refuse(problems + [Problem(.storageFailure, "\(error)")])
        }
        plan = generated.plan
        problems += generated.problems
        for processor in registry.processors {
            do {
                problems += try await processor.process(plan.assets, packFile: plan.packFile)
            } catch {
                problems.append(Problem(.storageFailure, "processor \(processor.id) failed: \(error)"))
            }
        }
        let fileName = options.namesFromFileName ? Self.packName(fromArchive: archiveName) : nil
        let packName = options.packName ?? plan.packFile.name ?? fileName ?? ""
        if plan.assets.isEmpty, !problems.contains(where: { $0.severity == .error }) {
            problems.append(Problem(.emptyPack, "the archive holds no pictures in a known folder (tokens/, objects/, textures/, walls/, backgrounds/)"))
        } else if packName.isEmpty {
            problems.append(Problem(.badManifest, "the pack has no name: add \"name\" to pack.json or pass one with the upload"))
        } else if let problem = Self.checkPackName(packName) {
            problems.append(problem)
        }
        guard !problems.contains(where: { $0.severity == .error }) else { throw refuse(problems) }

        do {
            let (written, summary, outcome) = try await publishAndRecord(plan, area: area, packName: packName, group: options.group) {
                progress?(ImportProgress(phase: $0, bytesRead: scan.archiveSize, totalBytes: scan.archiveSize, entries: scan.entries))
            }
            let allBytes = written.blobs.reduce(into: [Digest: Int64]()) { $0[$1.digest] = $1.size }
            return ImportReport(
                archive: archiveName, pack: packName, version: written.commit.version, group: options.group,
                manifestDigest: written.commit.manifestDigest, outcome: outcome == .recorded ? .imported : .unchanged,
                assets: plan.assets.count, assetsByKind: Dictionary(grouping: plan.assets, by: \.kind.rawValue).mapValues(\.count),
                files: plan.assets.reduce(0) { $0 + $1.variants.count }, bytes: allBytes.values.reduce(0, +),
                newBlobs: summary.newBlobs.count, newBytes: summary.newBytes,
                existingBlobs: allBytes.count - summary.newBlobs.count, existingBytes: allBytes.values.reduce(0, +) - summary.newBytes,
                rewrittenFiles: rewritten.rewritten, gpsFiles: rewritten.gpsPictures, generatedFiles: generated.count,
                warnings: problems, seconds: Date().timeIntervalSince(started))
        } catch let error as CatalogError {
            let code: ProblemCode = error.code == .conflict ? .packConflict : .storageFailure
            throw refuse(problems + [Problem(code, error.message)], cause: error.cause)
        } catch {
            throw refuse(problems + [Problem(.storageFailure, "\(error)")])
        }
    }

    /// Steps 8–10: stage descriptors and manifest, publish, commit. When pack.json names no version, the version is
    /// chosen from the catalog as it was read; a concurrent import of the same pack may commit that version first
    /// with other content. Then the version is chosen again from the new state (at most 10 times), so concurrent
    /// imports without a version each get their own version, or `unchanged` when their content is the same.
    ///
    /// A store that publishes on the calling thread (``BlockingPublisher``, the local file system) publishes on a
    /// thread of its own while the catalog rows are written on another; the transaction commits only once the publish
    /// has returned, and rolls back when it fails. Both are threads of their own, never Swift-concurrency ones: the
    /// transaction holds the catalog's writer while it waits, and the publish it waits for must not queue behind
    /// tasks that wait for that writer. Other stores publish first, then the transaction runs.
    private func publishAndRecord(
        _ plan: PackPlanner.Plan, area: StagingArea, packName: String, group: String, phase: (ImportProgress.Phase) -> Void
    ) async throws -> (PackWriter.Written, PublishSummary, RecordOutcome) {
        var attempt = 1
        while true {
            let state = try catalog.packState(named: packName)
            let written = try await offloaded {
                try PackWriter(plan: plan, area: area).write(packName: packName, group: group, state: state)
            }
            phase(.publishing)
            let (catalog, commit) = (catalog, written.commit)
            let summary: PublishSummary
            let recording: Task<RecordOutcome, any Error>
            if let store = store as? any BlockingPublisher {
                let published = PublishGate()
                let blobs = written.blobs
                Thread { published.open(Result { try store.publishBlocking(blobs) }) }.start()
                recording = Task { try await offloaded { try catalog.record(commit, committingAfter: { _ = try published.wait() }) } }
                do {
                    summary = try await published.value
                } catch {
                    _ = await recording.result
                    throw error
                }
            } else {
                summary = try await store.publish(written.blobs)
                recording = Task { try await offloaded { try catalog.record(commit) } }
            }
            area.removeInBackground(written.blobs)
            phase(.committing)
            let outcome: RecordOutcome
            do {
                outcome = try await recording.value
            } catch let error as CatalogError {
                guard error.code == .conflict, plan.packFile.version == nil, attempt < 10 else { throw error }
                attempt += 1
                continue
            }
            return (written, summary, outcome)
        }
    }

    /// `dungeon-basics.zip` → `dungeon-basics`; also strips `.tar`, `.tar.gz`, `.tgz`, `.dungeondraft_pack`.
    static func packName(fromArchive name: String) -> String {
        for suffix in [".tar.gz", ".tgz", ".tar", ".zip", ".dungeondraft_pack"] where name.lowercased().hasSuffix(suffix) {
            return String(name.dropLast(suffix.count))
        }
        return name
    }

    static func checkPackName(_ name: String) -> Problem? {
        let ok = !name.isEmpty && name.utf8.count <= 128 && !name.contains("/")
            && !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.value == 0x202E })
        return ok ? nil : Problem(.badManifest, "the pack name '\(name)' must be 1 to 128 characters without '/' or control characters")
    }
}

/// The result of a publish running on its own thread, awaited by the catalog transaction (blocking) and by the import
/// (suspending).
private final class PublishGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<PublishSummary, any Error>?
    private var waiters: [CheckedContinuation<PublishSummary, any Error>] = []

    /// Settles the gate; every waiter, present and future, gets `result`.
    func open(_ result: Result<PublishSummary, any Error>) {
        condition.lock()
        self.result = result
        let waiting = waiters
        waiters = []
        condition.broadcast()
        condition.unlock()
        for waiter in waiting { waiter.resume(with: result) }
    }

    /// Blocks the calling thread until the gate opens.
    func wait() throws -> PublishSummary {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return try result!.get()
    }

    /// Suspends until the gate opens.
    var value: PublishSummary {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                condition.lock()
                if let result {
                    condition.unlock()
                    continuation.resume(with: result)
                } else {
                    waiters.append(continuation)
                    condition.unlock()
                }
            }
        }
    }
}
