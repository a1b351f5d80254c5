import Foundation
import HoardCore

/// Where a sync stands, as it goes.
public struct SyncProgress: Sendable, Hashable {
    /// The part of the sync under way.
    public enum Phase: String, Sendable, Hashable {
        /// Fetching every asset's first picture (its preview, else its smallest variant).
        case firstRender
        /// Fetching plain blobs and every asset at the resolution asked for.
        case rest
        /// Finished (successfully or not).
        case done
    }

    /// The part under way.
    public var phase: Phase
    /// Blobs fetched so far.
    public var blobsDone: Int
    /// Blobs this sync has to fetch (those not cached when it started).
    public var blobsTotal: Int
    /// Bytes of those blobs on disk so far (a resumed download counts what it had).
    public var bytesDone: Int64
    /// Bytes of the blobs to fetch, as the manifest gives their sizes.
    public var bytesTotal: Int64
    /// Blobs the cache already held when the sync started.
    public var blobsCached: Int
    /// Whether every asset's first picture is in the cache: the map can be drawn.
    public var isFirstRenderReached: Bool
}

/// What a finished sync did.
public struct SyncSummary: Sendable, Hashable, Codable {
    /// Assets in the manifest.
    public var assets: Int
    /// Distinct blobs the manifest needs.
    public var blobs: Int
    /// Of those, blobs the cache already held.
    public var blobsCached: Int
    /// Blobs fetched from the server.
    public var blobsFetched: Int
    /// Bytes received for blobs (a resumed download counts only the rest).
    public var bytesFetched: Int64
    /// Seconds from the start until every asset's first picture was cached (0 when it already was).
    public var firstRenderSeconds: Double?
    /// Bytes received until then.
    public var firstRenderBytes: Int64?
    /// Seconds the whole sync took.
    public var totalSeconds: Double
    /// HTTP requests the sync made (0 when the cache held everything).
    public var requests: Int
}

/// The shared state of one running sync: counters, failures, and the progress stream.
final class SyncRun: Sendable {
    struct State {
        var blobsDone = 0
        var bytesDone: Int64 = 0
        var bytesFetched: Int64 = 0
        var requests = 0
        var firstRenderPending: Set<Digest>
        var firstRenderAt: Duration?
        var firstRenderBytes: Int64?
        var failures: [(Digest, HoardClientError)] = []
        var bytesAtLastReport: Int64 = 0
    }

    let plan: SyncPlan
    let started = ContinuousClock.now
    let blobsTotal: Int
    let bytesTotal: Int64
    private let progress: AsyncStream<SyncProgress>.Continuation?
    private let state: Locked<State>

    init(plan: SyncPlan, progress: AsyncStream<SyncProgress>.Continuation?) {
        self.plan = plan
        self.progress = progress
        let missing = plan.missing
        blobsTotal = missing.count
        bytesTotal = missing.reduce(0) { $0 + $1.size }
        let pending = Set(missing.filter { $0.phase == .firstRender }.map(\.digest))
        state = Locked(State(firstRenderPending: pending, firstRenderAt: pending.isEmpty ? .zero : nil, firstRenderBytes: pending.isEmpty ? 0 : nil))
    }

    func requested() { state.withLock { $0.requests += 1 } }

    /// Bytes written for a blob still arriving (or found in its partial file when resuming).
    func received(_ bytes: Int, fromNetwork: Bool = true) {
        let report = state.withLock { state -> Bool in
            state.bytesDone += Int64(bytes)
            if fromNetwork { state.bytesFetched += Int64(bytes) }
            guard state.bytesDone - state.bytesAtLastReport >= 256 << 10 else { return false }
            state.bytesAtLastReport = state.bytesDone
            return true
        }
        if report { emit() }
    }

    /// A blob is verified and cached.
    func completed(_ digest: Digest) {
        state.withLock { state in
            state.blobsDone += 1
            if state.firstRenderPending.remove(digest) != nil, state.firstRenderPending.isEmpty {
                state.firstRenderAt = ContinuousClock.now - started
                state.firstRenderBytes = state.bytesFetched
            }
        }
        emit()
    }

    /// A blob could not be fetched.
    func failed(_ digest: Digest, _ error: HoardClientError) {
        state.withLock { $0.failures.append((digest, error)) }
    }

    func snapshot(phase: SyncProgress.Phase? = nil) -> SyncProgress {
        state.withLock { state in
            SyncProgress(
                phase: phase ?? (state.firstRenderAt == nil ? .firstRender : .rest), blobsDone: state.blobsDone, blobsTotal: blobsTotal,
                bytesDone: state.bytesDone, bytesTotal: bytesTotal, blobsCached: plan.cached.count,
                isFirstRenderReached: state.firstRenderAt != nil)
        }
    }

    func emit(phase: SyncProgress.Phase? = nil) {
        progress?.yield(snapshot(phase: phase))
    }

    /// The summary, or the error that lists every blob that could not be fetched.
    func finish(assets: Int) throws -> SyncSummary {
        emit(phase: .done)
        progress?.finish()
        let state = state.current
        if let (_, first) = state.failures.first {
            let digests = state.failures.map(\.0).sorted()
            if state.failures.allSatisfy({ $0.1.code == .unavailable }) {
                throw HoardClientError(
                    .unavailable, "the server would not hand over \(digests.count) blob(s) the map references (absent, or not visible to "
                        + "this token); everything else is cached", status: first.status, digests: digests, cause: first)
            }
            throw HoardClientError(first.code, "\(digests.count) blob(s) could not be fetched; the others are cached. First: \(first.message)",
                                   status: first.status, serverCode: first.serverCode, digests: digests, cause: first)
        }
        return SyncSummary(
            assets: assets, blobs: plan.wanted.count, blobsCached: plan.cached.count, blobsFetched: state.blobsDone,
            bytesFetched: state.bytesFetched, firstRenderSeconds: state.firstRenderAt.map(\.seconds),
            firstRenderBytes: state.firstRenderBytes,
            totalSeconds: (ContinuousClock.now - started).seconds, requests: state.requests)
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
