import Foundation
import HoardCore
import Testing

@testable import HoardClient

@Suite struct SyncPlanTests {
    /// Fake blobs: only sizes matter to a plan.
    static func blob(_ name: String, _ size: Int) -> (digest: Digest, bytes: Data) {
        (digest(of: Data(name.utf8)), Data(count: size))
    }

    @Test func previewsComeFirstThenEveryAssetAtTheDefaultResolutionAndNothingSharper() {
        let goblin = asset("goblin", [Self.blob("g1", 400), Self.blob("g2", 1600), Self.blob("g4", 6400)], preview: Self.blob("gp", 100))
        let dragon = asset("dragon", [Self.blob("d1", 200_000), Self.blob("d2", 800_000)])
        let background = ManifestBlob(digest: Self.blob("bg", 50).digest, size: 50, mediaType: "image/png")
        let plan = SyncPlan(manifest: SessionManifest(assets: [goblin, dragon], blobs: [background]), isCached: { _ in false })
        let order = plan.units.flatMap(\.items)
        let firstRender = order.prefix { $0.phase == .firstRender }.map(\.digest)
        #expect(Set(firstRender) == [Self.blob("gp", 0).digest, Self.blob("d1", 0).digest], "the preview, else the smallest variant")
        #expect(Set(order.dropFirst(firstRender.count).map(\.digest)) == [Self.blob("g1", 0).digest, background.digest])
        #expect(order.dropFirst(firstRender.count).allSatisfy { $0.phase == .rest })
        #expect(plan.inUse[goblin.digest] == [Self.blob("gp", 0).digest, Self.blob("g1", 0).digest])
        #expect(plan.inUse[dragon.digest] == [Self.blob("d1", 0).digest])
        #expect(plan.inUse[background.digest] == [background.digest])
    }

    @Test func aResolutionTakesTheLeastSharpPictureThatIsSharpEnough() {
        let goblin = asset("goblin", [Self.blob("g1", 400), Self.blob("g2", 1600), Self.blob("g4", 6400)], preview: Self.blob("gp", 100))
        let picked = { (pixels: Double?) in goblin.picture(forPixelsPerTile: pixels)?.digest }
        #expect(picked(16) == Self.blob("gp", 0).digest && picked(32) == Self.blob("gp", 0).digest)
        #expect(picked(33) == Self.blob("g1", 0).digest && picked(nil) == Self.blob("g1", 0).digest)
        #expect(picked(100) == Self.blob("g2", 0).digest && picked(256) == Self.blob("g4", 0).digest)
        #expect(picked(1000) == Self.blob("g4", 0).digest, "the sharpest there is")
        #expect(goblin.firstPicture?.isPreview == true && goblin.pictures.map(\.pixelsPerTile) == [32, 64, 128, 256])
        // A 2×2 ogre of 128 pixels at @1x is 64 pixels a tile: as sharp as the 1×1 goblin's @1x.
        var ogre = asset("ogre", [Self.blob("o1", 400), Self.blob("o2", 1600)])
        ogre.footprint = Footprint(width: 2, height: 2)!
        ogre.variants = ogre.variants.map { var variant = $0; variant.width *= 2; variant.height *= 2; return variant }
        #expect(ogre.picture(forPixelsPerTile: 64)?.digest == Self.blob("o1", 0).digest)
        #expect(ogre.picture(forPixelsPerTile: 65)?.digest == Self.blob("o2", 0).digest)
        // Zoomed in before joining: the rest holds the sharper variant too.
        let sharp = SyncPlan(manifest: SessionManifest(assets: [goblin]), pixelsPerTile: 100, isCached: { _ in false })
        #expect(sharp.wanted.map(\.digest) == [Self.blob("gp", 0).digest, Self.blob("g1", 0).digest, Self.blob("g2", 0).digest],
                "the preview, the smallest variant, then the one for that zoom; nothing sharper")
        #expect(sharp.inUse[goblin.digest] == [Self.blob("gp", 0).digest, Self.blob("g2", 0).digest])
    }

    @Test func smallBlobsAreBatchedAndLargeOnesFetchedAlone() {
        let small = (0..<5).map { Self.blob("s\($0)", 1000) }
        let large = Self.blob("large", 100_000)
        let plan = SyncPlan(
            manifest: SessionManifest(assets: [asset("a", [small[0]]), asset("l", [large])] + small.dropFirst().map { asset("x", [$0]) }),
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
            manifest: SessionManifest(assets: [asset("a", [shared]), asset("c", [cached]), asset("b", [shared])]),
            isCached: { $0 == cached.digest })
        #expect(plan.wanted.map(\.digest) == [shared.digest, cached.digest])
        #expect(plan.cached == [cached.digest])
        #expect(plan.missing.map(\.digest) == [shared.digest])
    }

    @Test func aFullyCachedManifestPlansNoRequest() {
        let blobs = (0..<3).map { Self.blob("c\($0)", 10) }
        let plan = SyncPlan(manifest: SessionManifest(assets: blobs.map { asset("a", [$0]) }), isCached: { _ in true })
        #expect(plan.units.isEmpty)
        #expect(plan.wanted.count == 3)
    }
}
