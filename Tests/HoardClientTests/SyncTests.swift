import Foundation
import HoardCore
import Testing

@testable import HoardClient

/// Syncs against a real server over loopback, with manifests built here from uploaded blobs.
@Suite(.timeLimit(.minutes(2))) struct SyncTests {
    /// Two assets with a small preview and a large @1x variant each, plus a plain blob: 5 blobs, 2 of them over the
    /// batch threshold (256 KiB).
    static func scene(_ fixture: ServerFixture) async throws -> (SessionManifest, [(digest: Digest, bytes: Data)]) {
        let blobs = try await fixture.upload(sizes: [2_000, 600_000, 5_000, 400_000, 1_000])
        let manifest = SessionManifest(
            assets: [asset("goblin", [blobs[1]], preview: blobs[0]), asset("ogre", [blobs[3]], preview: blobs[2])],
            blobs: [ManifestBlob(digest: blobs[4].digest, size: 1_000, mediaType: "image/png")])
        return (manifest, blobs)
    }

    @Test func aColdSyncFetchesVerifiesAndCachesEveryBlob() async throws {
        try await ServerFixture.with { fixture in
            let (manifest, blobs) = try await Self.scene(fixture)
            try await withCache { cache in
                let log = RequestLog()
                let summary = try await fixture.client(log: log).sync(manifest, into: cache)
                for blob in blobs { #expect(try cache.read(blob.digest) == blob.bytes) }
                #expect(summary.assets == 2)
                #expect(summary.blobs == 5)
                #expect(summary.blobsCached == 0)
                #expect(summary.blobsFetched == 5)
                #expect(summary.bytesFetched == Int64(blobs.reduce(0) { $0 + $1.bytes.count }))
                #expect(summary.firstRenderSeconds != nil)
                #expect(summary.firstRenderSeconds! <= summary.totalSeconds)
                // One batch for the first render's small blobs, one for the plain blob, two GETs for the large ones.
                #expect(summary.requests == 4)
                #expect(log.all.count == 4)
                #expect(log.all.filter { $0.path == "/v1/blobs/batch" }.count == 2)
                #expect(!log.all.contains { $0.path == "/v1/blobs/missing" }, "the diff is local")
            }
        }
    }

    @Test func thePreviewsAreCachedBeforeAnythingElseIsRequested() async throws {
        try await ServerFixture.with { fixture in
            // Previews large enough to need GETs of their own, so that every blob is one request.
            let blobs = try await fixture.upload(sizes: [280_000, 360_000, 320_000, 400_000, 300_000, 380_000])
            let manifest = SessionManifest(assets: [
                asset("a", [blobs[1]], preview: blobs[0]), asset("b", [blobs[3]], preview: blobs[2]),
                asset("c", [blobs[5]], preview: blobs[4]),
            ])
            let smallest = [blobs[0], blobs[2], blobs[4]].map(\.digest)
            try await withCache { cache in
                let log = RequestLog()
                // At the start of every request: how many smallest variants the cache holds.
                let cachedAtStart = Locked([String: Int]())
                var configuration = HoardClient.Configuration()
                configuration.onRequest = { request in
                    log.record(request)
                    let path = request.url?.path.removingPercentEncoding ?? ""
                    cachedAtStart.withLock { $0[path] = smallest.filter(cache.contains).count }
                }
                _ = try await HoardClient(baseURL: fixture.baseURL, token: fixture.token, configuration: configuration).sync(manifest, into: cache)
                let order = log.all.flatMap(\.digests)
                #expect(order.count == 6)
                #expect(Set(order.prefix(3)) == Set(smallest.map(\.description)))
                for blob in [blobs[1], blobs[3], blobs[5]] {
                    #expect(cachedAtStart.current["/v1/blobs/\(blob.digest)"] == 3, "the map could be drawn before \(blob.digest) was asked for")
                }
            }
        }
    }

    @Test func aWarmSyncMakesNoRequest() async throws {
        try await ServerFixture.with { fixture in
            let (manifest, _) = try await Self.scene(fixture)
            try await withCache { cache in
                _ = try await fixture.client().sync(manifest, into: cache)
                let log = RequestLog()
                let warm = try await fixture.client(log: log).sync(manifest, into: cache)
                #expect(log.all.isEmpty)
                #expect(warm.requests == 0)
                #expect(warm.blobsCached == 5)
                #expect(warm.blobsFetched == 0)
                #expect(warm.firstRenderSeconds == 0)
            }
        }
    }

    @Test func anInterruptedDownloadResumesWithARangeRequest() async throws {
        try await ServerFixture.with { fixture in
            let blob = try await fixture.upload(sizes: [500_000])[0]
            let manifest = SessionManifest(assets: [asset("big", [blob])])
            try await withCache { cache in
                // What a cut connection leaves: the first 123 456 bytes under partial/.
                try blob.bytes.prefix(123_456).write(to: cache.partialURL(for: blob.digest))
                let log = RequestLog()
                let summary = try await fixture.client(log: log).sync(manifest, into: cache)
                #expect(log.all.map(\.range) == ["bytes=123456-"])
                #expect(summary.bytesFetched == 500_000 - 123_456)
                #expect(try cache.read(blob.digest) == blob.bytes)
                #expect(cache.partialSize(of: blob.digest) == 0, "the partial file became the cached blob")
            }
        }
    }

    @Test func aCorruptPartialDownloadIsDiscardedAndFetchedWhole() async throws {
        try await ServerFixture.with { fixture in
            let blob = try await fixture.upload(sizes: [400_000])[0]
            let manifest = SessionManifest(assets: [asset("big", [blob])])
            try await withCache { cache in
                var corrupt = blob.bytes.prefix(50_000)
                corrupt[corrupt.startIndex + 10] ^= 0xFF
                try Data(corrupt).write(to: cache.partialURL(for: blob.digest))
                let log = RequestLog()
                _ = try await fixture.client(log: log).sync(manifest, into: cache)
                #expect(log.all.map(\.range) == ["bytes=50000-", nil], "the resumed bytes fail verification, then a whole GET")
                #expect(try cache.read(blob.digest) == blob.bytes)
            }
        }
    }

    @Test func aPartialFileAsLongAsTheBlobIsVerifiedAndKept() async throws {
        try await ServerFixture.with { fixture in
            let blob = try await fixture.upload(sizes: [300_000])[0]
            try await withCache { cache in
                try blob.bytes.write(to: cache.partialURL(for: blob.digest))
                let log = RequestLog()
                let summary = try await fixture.client(log: log).sync(SessionManifest(assets: [asset("a", [blob])]), into: cache)
                #expect(log.all.map(\.range) == ["bytes=300000-"])
                #expect(summary.bytesFetched == 0)
                #expect(try cache.read(blob.digest) == blob.bytes)
            }
        }
    }

    @Test func blobsTheServerWillNotHandOverAreReportedAndTheRestIsCached() async throws {
        try await ServerFixture.with { fixture in
            let present = try await fixture.upload(sizes: [1_000])[0]
            let absentSmall = (digest: digest(of: Data("nowhere".utf8)), bytes: Data(count: 10))
            let absentLarge = (digest: digest(of: Data("nowhere large".utf8)), bytes: Data(count: 100_000))
            let manifest = SessionManifest(assets: [asset("a", [present]), asset("b", [absentSmall]), asset("c", [absentLarge])])
            try await withCache { cache in
                do {
                    _ = try await fixture.client().sync(manifest, into: cache)
                    Issue.record("the sync should throw")
                } catch let error as HoardClientError {
                    #expect(error.code == .unavailable)
                    #expect(Set(error.digests) == [absentSmall.digest, absentLarge.digest])
                }
                #expect(cache.contains(present.digest))
            }
        }
    }

    @Test func blobsTooLargeForABatchAreFetchedOnTheirOwn() async throws {
        try await ServerFixture.with({ $0.cacheMaxBlob = 1_000 }) { fixture in
            let blobs = try await fixture.upload(sizes: [500, 5_000])
            try await withCache { cache in
                let log = RequestLog()
                let manifest = SessionManifest(assets: [asset("a", [blobs[0]]), asset("b", [blobs[1]])])
                _ = try await fixture.client(log: log).sync(manifest, into: cache)
                #expect(log.all.map(\.path) == ["/v1/blobs/batch", "/v1/blobs/\(blobs[1].digest)"])
                for blob in blobs { #expect(try cache.read(blob.digest) == blob.bytes) }
            }
        }
    }

    @Test func progressReportsTheFirstRenderAndEndsWithEverythingDone() async throws {
        try await ServerFixture.with { fixture in
            let (manifest, blobs) = try await Self.scene(fixture)
            try await withCache { cache in
                let (stream, continuation) = AsyncStream.makeStream(of: SyncProgress.self)
                let collected = Task { await stream.reduce(into: [SyncProgress]()) { $0.append($1) } }
                _ = try await fixture.client().sync(manifest, into: cache, progress: continuation)
                let steps = await collected.value
                let last = try #require(steps.last)
                #expect(last.phase == .done)
                #expect(last.blobsDone == 5 && last.blobsTotal == 5)
                #expect(last.bytesDone == last.bytesTotal)
                #expect(last.bytesTotal == Int64(blobs.reduce(0) { $0 + $1.bytes.count }))
                #expect(last.isFirstRenderReached)
                #expect(steps.first?.isFirstRenderReached == false)
                let firstRender = try #require(steps.firstIndex { $0.isFirstRenderReached })
                #expect(steps[firstRender].blobsDone >= 2, "both previews are cached at first render")
            }
        }
    }

    @Test func zoomingInFetchesTheSharperVariantThenAndOnlyThen() async throws {
        try await ServerFixture.with { fixture in
            let blobs = try await fixture.upload(sizes: [500, 2_000, 8_000, 32_000])
            let goblin = asset("goblin", [blobs[1], blobs[2], blobs[3]], preview: blobs[0])
            try await withCache { cache in
                let log = RequestLog()
                let client = fixture.client(log: log)
                let summary = try await client.sync(SessionManifest(assets: [goblin]), into: cache)
                #expect(summary.blobs == 2 && summary.firstRenderBytes == 500 && summary.bytesFetched == 2_500)
                #expect(blobs.map { cache.contains($0.digest) } == [true, true, false, false], "the preview and @1x, nothing sharper")
                let before = log.all.count
                let picture = try await client.variant(for: goblin, pixelsPerTile: 100, in: cache)
                #expect(picture.digest == blobs[2].digest && picture.scale == 2 && picture.pixelsPerTile == 128)
                #expect(log.all.count == before + 1 && log.all.last?.digests == [blobs[2].digest.description])
                #expect(try cache.read(picture.digest) == blobs[2].bytes)
                _ = try await client.variant(for: goblin, pixelsPerTile: 128, in: cache)
                #expect(log.all.count == before + 1, "already cached: no request")
                #expect(!cache.contains(blobs[3].digest))
            }
        }
    }

    @Test func aCacheWithABudgetForgetsTheOldMapAndTheOldZoomButNeverWhatIsDrawnNow() async throws {
        try await ServerFixture.with { fixture in
            let blobs = try await fixture.upload(sizes: [500, 2_000, 8_000, 1_000, 4_000])
            let goblin = asset("goblin", [blobs[1], blobs[2]], preview: blobs[0])
            let oldMap = SessionManifest(assets: [asset("ogre", [blobs[4]], preview: blobs[3])])
            try await withCache { unlimited in
                // 1 KiB: less than one map needs; what is in use stays all the same.
                let cache = try BlobCacheDirectory(root: unlimited.root, budget: 1_024)
                let client = fixture.client()
                _ = try await client.sync(oldMap, into: cache)
                #expect(cache.contains(blobs[3].digest) && cache.contains(blobs[4].digest), "in use, over budget")
                _ = try await client.sync(SessionManifest(assets: [goblin]), into: cache)
                #expect(!cache.contains(blobs[3].digest) && !cache.contains(blobs[4].digest), "the old map went")
                #expect(cache.contains(blobs[0].digest) && cache.contains(blobs[1].digest))
                _ = try await client.variant(for: goblin, pixelsPerTile: 128, in: cache)
                #expect(blobs.prefix(3).map { cache.contains($0.digest) } == [true, false, true], "zoomed in: @1x went, @2x is drawn")
                _ = try await client.variant(for: goblin, pixelsPerTile: 64, in: cache)
                #expect(blobs.prefix(3).map { cache.contains($0.digest) } == [true, true, false], "zoomed out again")
                #expect(cache.countedBytes == 2_500)
            }
        }
    }
}
