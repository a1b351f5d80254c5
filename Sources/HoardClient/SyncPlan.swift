import HoardCore

/// The order in which a sync fetches a manifest's blobs, decided locally against the cache (no request).
///
/// Phase 1 (``Phase/firstRender``) holds each asset's first picture: its generated preview (about 32 pixels a
/// tile), else its smallest variant; once they are cached the map can be drawn. Phase 2 (``Phase/rest``) holds the
/// plain blobs and the smallest variant of every asset, then each asset's picture for the resolution asked for
/// (``ManifestAsset/picture(forPixelsPerTile:)``; by default its @1x variant, usually that same smallest one): then
/// the map is playable. Sharper variants are not fetched until asked for
/// (``HoardClient/variant(for:pixelsPerTile:in:)``). A digest that appears twice is fetched once, in the earliest
/// place it appears. Blobs under the batch threshold are grouped into batch requests; larger ones are fetched one GET
/// each. A phase's small blobs are spread over at least `spreadOver` batches when there are enough of them, so that
/// they travel (and are written to the cache) on that many connections at once rather than one after the other.
/// Every unit of phase 1 comes before any unit of phase 2.
public struct SyncPlan: Sendable {
    /// Which part of a sync a blob belongs to.
    public enum Phase: Int, Sendable, Comparable {
        /// The first picture of every asset.
        case firstRender = 1
        /// The plain blobs and every asset at the resolution asked for.
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
    /// What the cache must keep while the map is drawn at this resolution, by asset (or plain blob) digest.
    public var inUse: [Digest: Set<Digest>]

    /// Plans a sync of `manifest` at `pixelsPerTile` (nil: the @1x variants) against `isCached`.
    public init(
        manifest: SessionManifest, pixelsPerTile: Double? = nil, isCached: (Digest) -> Bool, batchThreshold: Int64 = 64 << 10,
        batchMaxCount: Int = 1000, batchMaxBytes: Int64 = 4 << 20, spreadOver: Int = 1
    ) {
        var seen = Set<Digest>()
        var wanted: [Item] = []
        func want(_ picture: AssetPicture?, _ phase: Phase) {
            guard let picture else { return }
            if seen.insert(picture.digest).inserted { wanted.append(Item(digest: picture.digest, size: picture.size, phase: phase)) }
        }
        // Each asset's pictures are listed once: its first, its smallest variant and its picture for this resolution.
        let chosen = manifest.assets.map { asset in
            let pictures = asset.pictures
            return (
                asset: asset.digest, first: pictures.first, smallest: pictures.first { !$0.isPreview },
                target: ManifestAsset.picture(in: pictures, forPixelsPerTile: pixelsPerTile)
            )
        }
        var inUse: [Digest: Set<Digest>] = [:]
        for pictures in chosen {
            want(pictures.first, .firstRender)
            inUse[pictures.asset, default: []].formUnion([pictures.first, pictures.target].compactMap { $0?.digest })
        }
        for blob in manifest.blobs {
            if seen.insert(blob.digest).inserted { wanted.append(Item(digest: blob.digest, size: blob.size, phase: .rest)) }
            inUse[blob.digest, default: []].insert(blob.digest)
        }
        // The smallest variant of every asset before any sharper one: a real picture everywhere soon, on a slow link.
        for pictures in chosen { want(pictures.smallest, .rest) }
        for pictures in chosen { want(pictures.target, .rest) }
        self.wanted = wanted
        self.inUse = inUse
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
