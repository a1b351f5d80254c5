import CHoardSystem
import Foundation
import HoardCatalog
import HoardCore
import HoardStore

/// The workers that make the rendition queue's pictures (generated LODs, previews, thumbnails; ``JobSpec``): threads
/// of their own, below the server's (a lower CPU priority, and by default one core fewer than the machine has, so the
/// event loops always keep one), each taking one job at a time from the catalog under a lease.
///
/// A job is made as every write is (``Hoard/publishAndRecord(_:thenStaging:in:published:record:)``): its pictures are
/// staged and hashed, published (durable, content-addressed), and only then recorded, in one transaction that also
/// gives them to the job's assets; that commit is refused when the lease was lost. So `kill -9` at any moment loses
/// no job (an unfinished one is taken again once its lease runs out) and leaves no half-written picture (at most
/// published blobs no row names, which gc removes; a job made twice stores nothing new, its blobs being the same).
///
/// Failures: a generator's refusal (an undecodable picture) fails the job for good at once, with its problem, which
/// its packs show; anything else (the store, the catalog) is retried after 1, 2, 4, 8… seconds, and after
/// ``Configuration/maxAttempts`` takes the job fails for good. A job whose taker died each time counts its takes too.
public final class RenditionWorkers: @unchecked Sendable {
    /// How the workers run.
    public struct Configuration: Sendable {
        /// Worker threads: by default one fewer than the cores (at least one), leaving the event loops a core.
        public var workers: Int = RenditionWorkers.defaultWorkers
        /// How long a job stays leased without renewal: a job whose worker died is taken again this long after, at most.
        /// Renewed every third of it while the job is made.
        public var lease: TimeInterval = 60
        /// How often idle workers look for jobs other processes queued (this process's imports wake them at once).
        public var idlePoll: TimeInterval = 1
        /// Takes after which a job fails for good.
        public var maxAttempts = 5
        /// The first retry's delay; each later one doubles it (at most 5 minutes).
        public var retryDelay: TimeInterval = 1
        /// The workers' nice value (0 to 19; nil keeps the caller's): generation runs below serving.
        public var niceness: Int32? = 10
        /// Which jobs to take.
        public var scope: JobScope = .any
        /// Stop once no job is free and none is being made (`hoard import` making its own pack's pictures).
        public var stopsWhenIdle = false
        /// This pool's name in the catalog's leases: host, process and a random part.
        public var name: String = RenditionWorkers.uniqueName()
        /// Limits the made pictures are checked against.
        public var limits = ImportLimits()

        /// The defaults.
        public init() {}
    }

    /// What became of one job.
    public struct Outcome: Sendable {
        /// The job as it was taken.
        public var lease: JobLease
        /// The assets that got pictures (done), nil otherwise.
        public var assets: [Digest]?
        /// Why it failed (for good when ``isFinal``), or nil.
        public var problem: Problem?
        /// Whether the job is over: done, failed for good, or taken by another worker.
        public var isFinal: Bool
        /// How long making it took.
        public var seconds: Double
    }

    /// One fewer than the cores, at least one.
    public static var defaultWorkers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount - 1) }

    /// `host:pid:random`.
    public static func uniqueName() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        return "\(host):\(getpid()):\(UUID().uuidString.prefix(8).lowercased())"
    }

    private let hoard: Hoard
    /// How the workers run.
    public let configuration: Configuration
    private let onOutcome: @Sendable (Outcome) -> Void
    private let condition = NSCondition()
    private var isStopping = false
    private var wakeups = 0
    private var alive = 0
    private var making = 0
    private var started = false
    private var ended: [CheckedContinuation<Void, Never>] = []

    /// Workers over `hoard`'s catalog, store and generators; `onOutcome` is told of every job taken (on a worker thread).
    public init(hoard: Hoard, configuration: Configuration = Configuration(), onOutcome: @escaping @Sendable (Outcome) -> Void = { _ in }) {
        self.hoard = hoard
        self.configuration = configuration
        self.onOutcome = onOutcome
    }

    /// Starts the threads (once).
    public func start() {
        condition.lock()
        guard !started else {
            condition.unlock()
            return
        }
        started = true
        alive = max(1, configuration.workers) + 1
        condition.unlock()
        for index in 0..<max(1, configuration.workers) {
            let thread = Thread { [self] in work() }
            thread.name = "hoard-render-\(index)"
            thread.start()
        }
        let renewer = Thread { [self] in renew() }
        renewer.name = "hoard-render-leases"
        renewer.start()
    }

    /// Tells idle workers to look for jobs now (an import just queued some).
    public func wake() {
        condition.lock()
        wakeups += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Asks the workers to stop: none takes another job; jobs being made are finished.
    public func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once every thread has ended (after ``stop()``, or when idle with ``Configuration/stopsWhenIdle``).
    public func finished() async {
        await withCheckedContinuation { continuation in
            condition.lock()
            if alive == 0 && started {
                condition.unlock()
                continuation.resume()
            } else {
                ended.append(continuation)
                condition.unlock()
            }
        }
    }

    /// Starts the workers and returns when they stop (``Configuration/stopsWhenIdle``, or ``stop()``).
    public func run() async {
        start()
        await finished()
    }

    private func threadEnded() {
        condition.lock()
        alive -= 1
        let waiting = alive == 0 ? ended : []
        if alive == 0 { ended = [] }
        condition.broadcast()
        condition.unlock()
        for continuation in waiting { continuation.resume() }
    }

    /// One worker: take a job, make it, tell; wait for work when there is none.
    private func work() {
        if let niceness = configuration.niceness { _ = hoard_lower_thread_priority(niceness) }
        defer { threadEnded() }
        let catalog = hoard.catalog
        while true {
            condition.lock()
            if isStopping {
                condition.unlock()
                return
            }
            let seen = wakeups
            making += 1
            condition.unlock()
            var lease: JobLease?
            var failed = false
            do {
                let now = Date()
                lease = try catalog.leaseJob(
                    worker: configuration.name, token: UUID().uuidString, now: now, until: now.addingTimeInterval(configuration.lease),
                    scope: configuration.scope)
            } catch {
                failed = true
            }
            if let lease {
                let outcome = make(lease)
                condition.lock()
                making -= 1
                condition.unlock()
                onOutcome(outcome)
                continue
            }
            condition.lock()
            making -= 1
            if configuration.stopsWhenIdle && !failed && making == 0 {
                isStopping = true
                condition.broadcast()
                condition.unlock()
                return
            }
            if wakeups == seen && !isStopping {
                _ = condition.wait(until: Date().addingTimeInterval(failed ? max(configuration.idlePoll, 1) : configuration.idlePoll))
            }
            condition.unlock()
        }
    }

    /// Renews this pool's leases while jobs are being made, every third of a lease.
    private func renew() {
        defer { threadEnded() }
        while true {
            condition.lock()
            _ = condition.wait(until: Date().addingTimeInterval(configuration.lease / 3))
            let stop = isStopping && making == 0
            let renewing = making > 0
            condition.unlock()
            if stop { return }
            if renewing { _ = try? hoard.catalog.renewJobLeases(worker: configuration.name, until: Date().addingTimeInterval(configuration.lease)) }
        }
    }

    /// Makes one job and records what became of it.
    private func make(_ lease: JobLease) -> Outcome {
        let started = Date()
        let catalog = hoard.catalog
        func outcome(assets: [Digest]? = nil, problem: Problem? = nil, isFinal: Bool) -> Outcome {
            Outcome(lease: lease, assets: assets, problem: problem, isFinal: isFinal, seconds: Date().timeIntervalSince(started))
        }
        /// Fails the job for good.
        func fail(_ problem: Problem) -> Outcome {
            _ = try? catalog.failJob(lease, problem: problem, retryAt: nil, now: Date())
            return outcome(problem: problem, isFinal: true)
        }
        /// Gives the job back to be taken again later, or fails it for good after the last take.
        func retry(_ problem: Problem) -> Outcome {
            guard lease.attempts < configuration.maxAttempts else { return fail(problem) }
            let delay = min(300, configuration.retryDelay * pow(2, Double(max(0, lease.attempts - 1))))
            _ = try? catalog.failJob(lease, problem: problem, retryAt: Date().addingTimeInterval(delay), now: Date())
            return outcome(problem: problem, isFinal: false)
        }
        guard lease.attempts <= configuration.maxAttempts else {
            return fail(Problem(
                .storageFailure, "the job was taken \(lease.attempts - 1) times and never finished (the process making it stopped each "
                    + "time); retry it with hoard jobs retry"))
        }
        guard let request = try? JSONDecoder().decode(RenditionJobRequest.self, from: Data(lease.request.utf8)) else {
            return fail(Problem(.storageFailure, "the job's request cannot be read by this Hoard; upgrade it"))
        }
        let made: Result<[PictureGeneration.Made], Problem>
        do {
            guard let result = try withSource(lease.source, { bytes -> Result<[PictureGeneration.Made], Problem> in
                guard BlobHasher.digest(of: bytes) == lease.source else {
                    return .failure(Problem(
                        .storageFailure, "the stored picture does not hash to its digest (run hoard verify)", entry: request.entry))
                }
                return PictureGeneration.make(
                    request, source: bytes, generators: hoard.registry.generators, limits: configuration.limits, kinds: hoard.registry.kinds)
            }) else {
                return fail(Problem(.storageFailure, "the picture to render is no longer stored", entry: request.entry))
            }
            made = result
        } catch {
            return retry(Problem(.storageFailure, "the picture to render could not be read: \(error)", entry: request.entry))
        }
        let pictures: [PictureGeneration.Made]
        switch made {
        case .success(let found): pictures = found
        case .failure(let problem): return fail(problem)
        }
        do {
            let assets = try record(lease, pictures)
            return outcome(assets: assets, isFinal: true)
        } catch {
            return retry(Problem(.storageFailure, "the pictures could not be stored: \(error)", entry: request.entry))
        }
    }

    /// Calls `body` with the source's bytes: its file mapped when the store keeps files here, else read whole. Nil when
    /// the blob is absent.
    private func withSource<T>(_ digest: Digest, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        if let path = hoard.localPath(of: digest) {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                if errno == ENOENT { return nil }
                throw BlobStoreError(.io, "cannot open \(path)", cause: String(cString: strerror(errno)))
            }
            defer { close(fd) }
            var status = stat()
            guard fstat(fd, &status) == 0 else { throw BlobStoreError(.io, "cannot read \(path)", cause: String(cString: strerror(errno))) }
            let length = Int(status.st_size)
            guard length > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            guard let base = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
                throw BlobStoreError(.io, "cannot map \(path)", cause: String(cString: strerror(errno)))
            }
            defer { munmap(base, length) }
            return try body(UnsafeRawBufferPointer(start: base, count: length))
        }
        let hoard = hoard
        guard let bytes = try blocking({ try await hoard.read(digest) }) else { return nil }
        return try bytes.withUnsafeBytes(body)
    }

    /// Stages, publishes and records a job's pictures (the write order); the assets that got them, or nil when the
    /// lease was lost (the pictures are then published but named by no row: gc's to remove).
    private func record(_ lease: JobLease, _ pictures: [PictureGeneration.Made]) throws -> [Digest]? {
        let hoard = hoard
        let catalog = hoard.catalog
        let area = try hoard.store.makeStagingArea()
        defer { area.discard() }
        var staged: [StagedBlob] = []
        var outputs: [JobOutput] = []
        for picture in pictures {
            let blob = try area.stage(picture.bytes)
            staged.append(blob)
            outputs.append(JobOutput(
                role: picture.role.name, blob: BlobRecord(digest: blob.digest, size: blob.size, mediaType: picture.info.mediaType.rawValue),
                width: picture.info.width, height: picture.info.height))
        }
        let ready = staged
        let rows = outputs
        return try blocking {
            try await hoard.publishAndRecord(ready, in: area, record: .alongsidePublish { afterPublish in
                try afterPublish()
                return try catalog.completeJob(lease, outputs: rows, now: Date())
            }).recorded
        }
    }

    /// Runs async work from a worker thread (never a Swift-concurrency one), blocking it until done.
    private func blocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        Task {
            do {
                box.result = .success(try await work())
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }
}

/// A result handed from a task to the thread that waits for it (the semaphore orders the accesses).
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// What ``Hoard/makeRenditions(scope:workers:progress:)`` did.
public struct RenditionRun: Sendable, Hashable {
    /// Jobs made.
    public var done = 0
    /// Jobs that failed for good.
    public var failed = 0
    /// Jobs given back to be retried later (left in the queue).
    public var retried = 0
    /// The failures, in the order they came.
    public var problems: [Problem] = []

    /// Counts.
    public init(done: Int = 0, failed: Int = 0, retried: Int = 0, problems: [Problem] = []) {
        self.done = done
        self.failed = failed
        self.retried = retried
        self.problems = problems
    }
}

extension Hoard {
    /// Makes the queued pictures of `scope` in this process, at the caller's priority, until none is free and none is
    /// being made (a job given back to be retried later stays queued). What `hoard import` does for its own packs, and
    /// `hoard jobs run` for the whole queue. A server sharing the catalog may take some of the jobs meanwhile.
    public func makeRenditions(
        scope: JobScope = .any, workers: Int = ProcessInfo.processInfo.activeProcessorCount,
        progress: (@Sendable (RenditionRun) -> Void)? = nil
    ) async -> RenditionRun {
        var configuration = RenditionWorkers.Configuration()
        configuration.workers = max(1, workers)
        configuration.niceness = nil
        configuration.scope = scope
        configuration.stopsWhenIdle = true
        let tally = RunTally()
        let pool = RenditionWorkers(hoard: self, configuration: configuration) { outcome in
            let now = tally.add(outcome)
            progress?(now)
        }
        await pool.run()
        return tally.run
    }
}

/// A run's counts, added to from worker threads.
private final class RunTally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts = RenditionRun()

    var run: RenditionRun { lock.withLock { counts } }

    func add(_ outcome: RenditionWorkers.Outcome) -> RenditionRun {
        lock.withLock {
            if outcome.assets != nil {
                counts.done += 1
            } else if let problem = outcome.problem {
                if outcome.isFinal { counts.failed += 1 } else { counts.retried += 1 }
                counts.problems.append(problem)
            }
            return counts
        }
    }
}
