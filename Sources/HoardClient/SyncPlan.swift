import HoardCore

/// The order in which a sync fetches a manifest's blobs, decided locally against the cache (no request).
///
/// Phase 1 (``Phase/firstRender``) holds the smallest variant of every asset: once they are cached the map can be
/// drawn. Phase 2 (``Phase/rest``) holds the plain blobs, then every other variant, lower scales first. A digest
/// that appears twice is fetched once, in the earliest place it appears. Blobs under the batch threshold are
/// grouped into batch requests; larger ones are fetched one GET each. A phase's small blobs are spread over at least
/// `spreadOver` batches when there are enough of them, so that they travel (and are written to the cache) on that many
/// connections at once rather than one after the other. Every unit of phase 1 comes before any unit of phase 2.
public struct SyncPlan: Sendable {
    /// Which part of a sync a blob belongs to.
    public enum Phase: Int, Sendable, Comparable {
        /// The smallest variant of every asset.
        case firstRender = 1
        /// Everything else.
        case rest = 2

        public static func < (lhs: Phase, rhs: Phase) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One blob to fetch.
    public struct Item: Sendable, Hashable {
        /// Its digest.
        public var digest: Digest
        /// Its size as the manifest gives it.
        public var size: Int64
        /// Its phase.
        public var phase: Phase
    }

    /// One request's worth of work.
    public enum Unit: Sendable, Hashable {
        /// Small blobs fetched with one `POST /v1/blobs/batch`.
        case batch([Item])
        /// One blob fetched with `GET /v1/blobs/{digest}` (resumable).
        case single(Item)

        /// The blobs of this unit.
        public var items: [Item] {
            switch self {
            case .batch(let items): items
            case .single(let item): [item]
            }
        }
    }

    /// Every distinct blob the manifest needs, in fetch order, cached or not.
    public var wanted: [Item]
    /// The wanted blobs already in the cache.
    public var cached: Set<Digest>
    /// The requests to make, in order.
    public var units: [Unit]

    /// Plans a sync of `manifest` against `isCached`.
    public init(
        manifest: SessionManifest, isCached: (Digest) -> Bool, batchThreshold: Int64 = 64 << 10, batchMaxCount: Int = 1000,
        batchMaxBytes: Int64 = 4 << 20, spreadOver: Int = 1
    ) {
        var seen = Set<Digest>()
        var wanted: [Item] = []
        func want(_ digest: Digest, _ size: Int64, _ phase: Phase) {
            if seen.insert(digest).inserted { wanted.append(Item(digest: digest, size: size, phase: phase)) }
        }
        for asset in manifest.assets {
            if let smallest = asset.smallestVariant { want(smallest.digest, smallest.size, .firstRender) }
        }
        for blob in manifest.blobs { want(blob.digest, blob.size, .rest) }
        let others = manifest.assets.flatMap { asset in asset.variants.filter { $0 != asset.smallestVariant } }
        for variant in others.enumerated().sorted(by: { ($0.element.scale, $0.offset) < ($1.element.scale, $1.offset) }).map(\.element) {
            want(variant.digest, variant.size, .rest)
        }
        self.wanted = wanted
        let cached = Set(wanted.map(\.digest).filter(isCached))
        self.cached = cached
        let missing = wanted.filter { !cached.contains($0.digest) }
        var units: [Unit] = []
        for phase in [Phase.firstRender, .rest] {
            let items = missing.filter { $0.phase == phase }
            let small = items.filter { $0.size < batchThreshold }
            // At least 16 blobs a batch: below that a request costs more than the parallelism gains.
            let spread = max(16, (small.count + max(1, spreadOver) - 1) / max(1, spreadOver))
            let maxCount = min(batchMaxCount, spread)
            var batch: [Item] = []
            var batchBytes: Int64 = 0
            for item in small {
                if !batch.isEmpty, batch.count >= maxCount || batchBytes + item.size > batchMaxBytes {
                    units.append(.batch(batch))
                    batch = []
                    batchBytes = 0
                }
                batch.append(item)
                batchBytes += item.size
            }
            if !batch.isEmpty { units.append(.batch(batch)) }
            units += items.filter { $0.size >= batchThreshold }.map(Unit.single)
        }
        self.units = units
    }

    /// The blobs still to fetch.
    public var missing: [Item] { units.flatMap(\.items) }
}
