import Foundation
import HoardCatalog
import HoardCore
import HoardPostgres
import HoardRepository
import HoardStore
import HoardTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A generator that counts how many times it made each source's pictures (and at which CPU priority), and makes a
/// small preview after a pause, so that workers racing for jobs overlap.
private final class CountingGenerator: PictureGenerator, Sendable {
    let id = "test.counting"
    let isEnabledByDefault = true
    let made = Mutex<[Digest: Int]>([:])
    let niceness = Mutex<Set<Int32>>([])

    func generate(_ request: GenerationRequest, source: UnsafeRawBufferPointer) throws(Problem) -> [GeneratedPicture] {
        made.withLock { $0[request.source.digest, default: 0] += 1 }
        #if os(Linux)
        // Linux's who = 0 is the calling thread: nice values are per thread there.
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        niceness.withLock { _ = $0.insert(current) }
        #endif
        Thread.sleep(forTimeInterval: 0.005)
        return [GeneratedPicture(role: .preview, bytes: Fixtures.png(width: 4, height: 4, seed: source.count), mediaType: .png)]
    }

    var counts: [Digest: Int] { made.withLock { $0 } }
}

/// Where the queue lives: two Hoards over one data directory and store, each with its own catalog connection (two
/// processes, or two replicas of one PostgreSQL catalog).
enum QueueBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }

    /// Two Hoards sharing one queue, with `generator` registered; and the folder to remove.
    func hoards(_ generator: some PictureGenerator) throws -> ([Hoard], String) {
        let path = try Fixtures.temporaryDirectory()
        var registry = PluginRegistry.builtIn()
        try registry.register(generator: generator)
        let directory = try DataDirectory(path: path)
        let store = try FileBlobStore(root: directory.blobsPath)
        let url = self == .postgres ? try TestPostgres.newDatabase() : nil
        let hoards = try (0..<2).map { _ -> Hoard in
            let catalog: Catalog = try url.map { try PostgresCatalog(url: $0) } ?? SQLiteCatalog(path: directory.catalogPath)
            return Hoard(directory: directory, store: store, catalog: catalog, registry: registry)
        }
        return (hoards, path)
    }
}

/// Closes the catalogs of `hoards` (a PostgreSQL catalog holds its connections until then) and removes `path`.
private func remove(_ hoards: [Hoard], _ path: String) {
    for hoard in hoards { (hoard.catalog as? PostgresCatalog)?.close() }
    try? FileManager.default.removeItem(atPath: path)
}

/// Imports a pack of `count` distinct tokens through `hoard`; its report.
private func importTokens(_ count: Int, into hoard: Hoard, in path: String, seed: Int = 0) async throws -> ImportReport {
    let entries = (0..<count).map { ("tokens/t\($0).png", Fixtures.png(width: 64, height: 64, seed: seed * 10_000 + $0)) }
    let archive = path + "/tokens-\(seed).zip"
    try Fixtures.zip(at: archive, entries)
    return try await hoard.importPack(at: archive)
}

@Suite("Render workers")
struct RenditionWorkersTests {
    /// Two pools of two workers each (two processes, or two replicas) on one queue of 40 jobs: each picture is made
    /// exactly once, by one of them, and every job is done.
    @Test(arguments: QueueBackend.allCases)
    func twoPoolsSharingOneQueueMakeEachJobOnce(_ backend: QueueBackend) async throws {
        let generator = CountingGenerator()
        let (hoards, path) = try backend.hoards(generator)
        defer { remove(hoards, path) }
        let report = try await importTokens(40, into: hoards[0], in: path)
        #expect(report.renditionJobs == 40)
        async let first = hoards[0].makeRenditions(workers: 2)
        async let second = hoards[1].makeRenditions(workers: 2)
        let runs = await [first, second]
        #expect(runs.map(\.done).reduce(0, +) == 40)
        #expect(runs.allSatisfy { $0.failed == 0 && $0.retried == 0 })
        let counts = generator.counts
        #expect(counts.count == 40 && counts.values.allSatisfy { $0 == 1 }, "each picture made once: \(counts.values.sorted())")
        #expect(try hoards[1].catalog.jobCounts(now: Date()) == JobQueueCounts(queued: 0, running: 0, done: 40, failed: 0, cancelled: 0))
        #expect(try hoards[0].catalog.assets().allSatisfy { $0.preview != nil && $0.pending == nil })
        #expect(try await hoards[0].verify().isHealthy)
    }

    /// A worker that took a job and died (never finished, never renewed): the job is taken again once its lease ran
    /// out, by another worker, and made once.
    @Test(arguments: QueueBackend.allCases)
    func aJobWhoseWorkerDiedIsTakenAgainWhenItsLeaseRunsOut(_ backend: QueueBackend) async throws {
        let generator = CountingGenerator()
        let (hoards, path) = try backend.hoards(generator)
        defer { remove(hoards, path) }
        _ = try await importTokens(3, into: hoards[0], in: path)
        let now = Date()
        let dead = try #require(try hoards[0].catalog.leaseJob(
            worker: "dead", token: "t", now: now, until: now.addingTimeInterval(600), scope: .any))
        #expect(await hoards[1].makeRenditions().done == 2, "the dead worker's job is left while its lease runs")
        // Time passes without the dead worker renewing: its lease runs out.
        try hoards[0].catalog.renewJobLeases(worker: "dead", until: Date().addingTimeInterval(-1))
        #expect(await hoards[1].makeRenditions().done == 1)
        #expect(generator.counts[dead.source] == 1)
        #expect(try hoards[0].catalog.completeJob(dead, outputs: [], now: Date()) == nil, "the dead worker's lease is void")
        #expect(try hoards[0].catalog.jobCounts(now: Date()).done == 3)
    }

    /// A job whose takers all died (a picture that crashes the process, say) fails for good after the last take,
    /// with a problem that says so, rather than being taken forever.
    @Test func aJobTakenTooManyTimesFailsForGood() async throws {
        let generator = CountingGenerator()
        let (hoards, path) = try QueueBackend.sqlite.hoards(generator)
        defer { remove(hoards, path) }
        let report = try await importTokens(1, into: hoards[0], in: path)
        for take in 0..<5 {
            // Each take's lease ran out at once: its taker died.
            let now = Date()
            _ = try #require(try hoards[0].catalog.leaseJob(
                worker: "crashing", token: "t\(take)", now: now, until: now.addingTimeInterval(-10), scope: .any))
        }
        let run = await hoards[0].makeRenditions()
        #expect(run.failed == 1 && run.done == 0)
        #expect(run.problems.first?.message.contains("taken 5 times") == true)
        #expect(generator.counts.isEmpty)
        #expect(try hoards[0].catalog.jobProblems(pack: report.pack, group: nil).count == 1)
    }

    /// The server's workers run below serving: at the nice value they are given (threads they start inherit it).
    @Test func workersRunAtTheirLowerPriority() async throws {
        let generator = CountingGenerator()
        let (hoards, path) = try QueueBackend.sqlite.hoards(generator)
        defer { remove(hoards, path) }
        _ = try await importTokens(4, into: hoards[0], in: path)
        var configuration = RenditionWorkers.Configuration()
        configuration.workers = 2
        configuration.niceness = 10
        configuration.stopsWhenIdle = true
        await RenditionWorkers(hoard: hoards[0], configuration: configuration).run()
        #expect(generator.counts.count == 4)
        #if os(Linux)
        #expect(generator.niceness.withLock { $0 } == [10])
        #endif
    }

    /// New uploads before a backlog: with 300 jobs of a large import queued, a new 20-picture import's jobs are taken
    /// first (its first screen's priority), in its listing order.
    @Test func aNewImportsPicturesGoBeforeABacklog() async throws {
        let generator = CountingGenerator()
        let (hoards, path) = try QueueBackend.sqlite.hoards(generator)
        defer { remove(hoards, path) }
        _ = try await importTokens(300, into: hoards[0], in: path, seed: 1)
        let newer = try await importTokens(20, into: hoards[0], in: path, seed: 2)
        let catalog = hoards[0].catalog
        let manifest = try #require(try catalog.packs().first { $0.name == newer.pack }?.manifestDigest)
        var taken: [JobLease] = []
        for _ in 0..<20 {
            let now = Date()
            taken.append(try #require(try catalog.leaseJob(worker: "w", token: UUID().uuidString, now: now, until: now + 60, scope: .any)))
        }
        // The 20 taken are exactly the new pack's (a worker limited to it finds none left).
        let now = Date()
        #expect(try catalog.leaseJob(worker: "w", token: "x", now: now, until: now + 60, scope: .manifests([manifest])) == nil)
        #expect(Set(taken.map(\.id)).count == 20)
    }
}
