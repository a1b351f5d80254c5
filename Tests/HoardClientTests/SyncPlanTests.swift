import Foundation
import HoardCore
import Testing

@testable import HoardClient

@Suite struct SyncPlanTests {
    /// Fake blobs: only sizes matter to a plan.
    static func blob(_ name: String, _ size: Int) -> (digest: Digest, bytes: Data) {
        (digest(of: Data(name.utf8)), Data(count: size))
    }

    @Test func theSmallestVariantOfEveryAssetComesBeforeAnythingElse() {
        let goblin = asset("goblin", [Self.blob("g1", 100), Self.blob("g2", 400), Self.blob("g4", 1600)])
        let dragon = asset("dragon", [Self.blob("d1", 200_000), Self.blob("d2", 800_000)])
        let background = ManifestBlob(digest: Self.blob("bg", 50).digest, size: 50, mediaType: "image/png")
        let plan = SyncPlan(manifest: SessionManifest(assets: [goblin, dragon], blobs: [background]), isCached: { _ in false })
        let order = plan.units.flatMap(\.items)
        let firstRender = order.prefix { $0.phase == .firstRender }.map(\.digest)
        #expect(Set(firstRender) == [Self.blob("g1", 0).digest, Self.blob("d1", 0).digest])
        #expect(order.dropFirst(firstRender.count).allSatisfy { $0.phase == .rest })
        #expect(order.count == 6)
        let rest = order.dropFirst(2).map(\.digest)
        #expect(rest.firstIndex(of: Self.blob("g2", 0).digest)! < rest.firstIndex(of: Self.blob("g4", 0).digest)!,
                "lower scales first within the rest")
    }

    @Test func smallBlobsAreBatchedAndLargeOnesFetchedAlone() {
        let small = (0..<5).map { Self.blob("s\($0)", 1000) }
        let large = Self.blob("large", 100_000)
        let plan = SyncPlan(
            manifest: SessionManifest(assets: [asset("a", [small[0], large])] + small.dropFirst().map { asset("x", [$0]) }),
            isCached: { _ in false }, batchThreshold: 64 << 10, batchMaxCount: 2)
        #expect(plan.units == [
            .batch(Array(plan.missing.prefix(2))), .batch(Array(plan.missing.dropFirst(2).prefix(2))), .batch([plan.missing[4]]),
            .single(plan.missing[5]),
        ])
        #expect(plan.missing.last?.digest == large.digest)
    }

    @Test func batchesStayUnderTheirByteBudget() {
        let blobs = (0..<10).map { Self.blob("b\($0)", 30_000) }
        let plan = SyncPlan(
            manifest: SessionManifest(assets: blobs.map { asset("b", [$0]) }), isCached: { _ in false }, batchMaxBytes: 100_000)
        #expect(plan.units.count == 4)
        for unit in plan.units { #expect(unit.items.reduce(0) { $0 + $1.size } <= 100_000) }
    }

    @Test func manySmallBlobsAreSpreadOverAsManyBatchesAsConnections() {
        let blobs = (0..<1000).map { Self.blob("t\($0)", 5_000) }
        let manifest = SessionManifest(assets: blobs.map { asset("t", [$0]) })
        let spread = SyncPlan(manifest: manifest, isCached: { _ in false }, spreadOver: 8)
        #expect(spread.units.count == 8)
        #expect(spread.units.allSatisfy { $0.items.count == 125 })
        #expect(spread.missing.map(\.digest) == blobs.map(\.digest), "same blobs, same order")
        #expect(SyncPlan(manifest: manifest, isCached: { _ in false }).units.count == 2, "one connection: the 4 MiB budget decides")
        let few = SessionManifest(assets: blobs.prefix(20).map { asset("t", [$0]) })
        #expect(SyncPlan(manifest: few, isCached: { _ in false }, spreadOver: 8).units.count == 2, "at least 16 blobs a batch")
    }

    @Test func cachedBlobsAreNotFetchedAndSharedBlobsAreFetchedOnce() {
        let shared = Self.blob("shared", 10)
        let cached = Self.blob("cached", 10)
        let plan = SyncPlan(
            manifest: SessionManifest(assets: [asset("a", [shared, cached]), asset("b", [shared])]),
            isCached: { $0 == cached.digest })
        #expect(plan.wanted.map(\.digest) == [shared.digest, cached.digest])
        #expect(plan.cached == [cached.digest])
        #expect(plan.missing.map(\.digest) == [shared.digest])
    }

    @Test func aFullyCachedManifestPlansNoRequest() {
        let blobs = (0..<3).map { Self.blob("c\($0)", 10) }
        let plan = SyncPlan(manifest: SessionManifest(assets: [asset("a", blobs)]), isCached: { _ in true })
        #expect(plan.units.isEmpty)
        #expect(plan.wanted.count == 3)
    }
}
