import Foundation
import HoardCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HoardClient {
    /// Fetches what `manifest` needs that `cache` lacks: each asset's first picture (its generated preview, else its
    /// smallest variant) first — then the map can be drawn — then the plain blobs and each asset at the resolution of
    /// ``Configuration/pixelsPerTile`` (by default the @1x variant) — then it is playable. Sharper variants wait until
    /// the app zooms in (``variant(for:pixelsPerTile:in:)``). The rest starts only once the first part is done, so
    /// it never takes bandwidth from the first render. With a cache budget, what the map needs at that resolution
    /// becomes what the cache keeps (``BlobCacheDirectory/keep(_:replacing:)``).
    ///
    /// What is missing is decided locally against the cache, so a sync of a fully cached manifest makes no request
    /// at all. Small blobs travel in batch requests, larger ones in parallel GETs (``Configuration/maxParallelFetches``
    /// at a time) on the client's keep-alive connections. Every blob is verified against its digest before it enters
    /// the cache. A large download that is cut keeps its bytes under `partial/` and is resumed with `Range` — in this
    /// sync (``Configuration/attempts``) or the next one.
    ///
    /// Progress goes to `progress` as it happens (create it with `AsyncStream.makeStream(of: SyncProgress.self,
    /// bufferingPolicy: .bufferingNewest(1))`); the sync finishes the stream when it returns or throws.
    /// Throws after fetching everything it could: ``HoardClientError/digests`` lists the blobs that are not cached.
    public func sync(
        _ manifest: SessionManifest, into cache: BlobCacheDirectory, progress: AsyncStream<SyncProgress>.Continuation? = nil
    ) async throws -> SyncSummary {
        try await sync(manifest, into: cache, pixelsPerTile: configuration.pixelsPerTile, replacingInUse: true, progress: progress)
    }

    /// The picture of `asset` to draw at `pixelsPerTile` device pixels a tile
    /// (``ManifestAsset/picture(forPixelsPerTile:)``), fetched into `cache` unless it is there; read it at
    /// ``BlobCacheDirectory/url(for:)``. Call it when the app zooms: zooming in fetches a sharper variant, zooming out
    /// lets the cache forget the sharper one (it keeps, for each asset, the first picture and the one last asked for).
    public func variant(for asset: ManifestAsset, pixelsPerTile: Double, in cache: BlobCacheDirectory) async throws -> AssetPicture {
        guard let picture = asset.picture(forPixelsPerTile: pixelsPerTile) else {
            throw HoardClientError(.badResponse, "the asset \(asset.digest) has no picture in the manifest", digests: [asset.digest])
        }
        _ = try await sync(SessionManifest(assets: [asset]), into: cache, pixelsPerTile: pixelsPerTile, replacingInUse: false, progress: nil)
        return picture
    }

    /// ``sync(_:into:progress:)`` at a resolution; `replacingInUse` says whether the manifest is the whole map (what
    /// the cache keeps becomes exactly what it needs) or some of its assets (their entries change, the others stay).
    func sync(
        _ manifest: SessionManifest, into cache: BlobCacheDirectory, pixelsPerTile: Double?, replacingInUse: Bool,
        progress: AsyncStream<SyncProgress>.Continuation?
    ) async throws -> SyncSummary {
        let plan = SyncPlan(
            manifest: manifest, pixelsPerTile: pixelsPerTile, isCached: cache.contains, batchThreshold: configuration.batchThreshold,
            batchMaxCount: min(configuration.batchMaxCount, 1000), batchMaxBytes: configuration.batchMaxBytes,
            spreadOver: configuration.maxParallelFetches)
        cache.keep(plan.inUse, replacing: replacingInUse)
        cache.markUsed(plan.cached)
        let run = SyncRun(plan: plan, progress: progress)
        run.emit()
        defer { cache.trim() }
        do {
            // Phase by phase: nothing of the rest competes with the first render for bandwidth.
            for phase in [SyncPlan.Phase.firstRender, .rest] {
                try await fetch(plan.units.filter { $0.items.first?.phase == phase }, into: cache, run: run)
            }
        } catch {
            run.emit(phase: .done)
            progress?.finish()
            throw error
        }
        return try run.finish(assets: manifest.assets.count)
    }

    /// Runs `units` in order on at most ``Configuration/maxParallelFetches`` tasks.
    private func fetch(_ units: [SyncPlan.Unit], into cache: BlobCacheDirectory, run: SyncRun) async throws {
        let queue = Locked(units[...])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<min(max(1, configuration.maxParallelFetches), units.count) {
                group.addTask {
                    while let unit = queue.withLock({ $0.popFirst() }) {
                        try Task.checkCancellation()
                        switch unit {
                        case .batch(let items): try await self.fetchBatch(items, into: cache, run: run)
                        case .single(let item): try await self.fetchSingle(item, into: cache, run: run)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Fetches one blob with GET, resuming from its partial file, retrying network failures.
    func fetchSingle(_ item: SyncPlan.Item, into cache: BlobCacheDirectory, run: SyncRun) async throws {
        let attempts = max(1, configuration.attempts)
        for attempt in 1...attempts {
            do {
                try await download(item.digest, into: cache, run: run, countingResumedBytes: attempt == 1)
                run.completed(item.digest)
                return
            } catch let error as HoardClientError {
                let retryable = error.code == .network || error.code == .digestMismatch || (error.status ?? 0) >= 500
                guard retryable, attempt < attempts else {
                    run.failed(item.digest, error)
                    return
                }
                try await Self.backoff(attempt)
            }
        }
    }

    /// One GET of a blob into `partial/`, continuing with `Range: bytes=N-` when N bytes are already there, then
    /// verified as a whole and renamed into the cache.
    func download(_ digest: Digest, into cache: BlobCacheDirectory, run: SyncRun, countingResumedBytes: Bool = true) async throws {
        let partial = cache.partialURL(for: digest)
        var offset = cache.partialSize(of: digest)
        var request = request("GET", "/v1/blobs/\(digest)")
        if offset > 0 {
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            request.setValue("\"\(digest)\"", forHTTPHeaderField: "If-Range")
        }
        run.requested()
        let streamed = try await transport.stream(request)
        let status = streamed.response.statusCode
        switch status {
        case 200:
            offset = 0
        case 206:
            let range = streamed.response.value(forHTTPHeaderField: "Content-Range") ?? ""
            guard range.hasPrefix("bytes \(offset)-") else {
                try? FileManager.default.removeItem(at: partial)
                throw HoardClientError(.badResponse, "asked for \(digest) from byte \(offset), got the range '\(range)'; starting over", status: status)
            }
        case 416 where offset > 0:
            // The partial file is already as long as the blob (or longer): it is whole, or wrong.
            for try await _ in streamed.body {}
            try cache.insertFile(at: partial, as: digest)
            return
        default:
            var data = Data()
            for try await chunk in streamed.body { data.append(chunk) }
            var error = Self.serverError(status, data, request)
            error.digests = [digest]
            if status == 404 || status == 403 { error.code = .unavailable }
            throw error
        }
        var hashing = BlobHasher()
        let handle: FileHandle
        do {
            if offset == 0 || !FileManager.default.fileExists(atPath: partial.path) {
                offset = 0
                guard FileManager.default.createFile(atPath: partial.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
            } else {
                try hashing.update(fileAt: partial)
                offset = hashing.count
                if countingResumedBytes { run.received(Int(offset), fromNetwork: false) }
            }
            handle = try FileHandle(forWritingTo: partial)
            try handle.seekToEnd()
        } catch {
            throw HoardClientError(.io, "cannot write \(partial.path); check free space and permissions", digests: [digest],
                                   cause: SendableError(error))
        }
        do {
            for try await chunk in streamed.body {
                try handle.write(contentsOf: chunk)
                hashing.update(chunk)
                run.received(chunk.count)
            }
            if cache.isDurable { try handle.synchronize() }
            try handle.close()
        } catch {
            // Keep what arrived for a Range resume; sync it only when the cache is durable.
            if cache.isDurable { try? handle.synchronize() }
            try? handle.close()
            throw HTTPTransport.wrap(error, request)
        }
        let actual = hashing.finalize()
        guard actual == digest else {
            try? FileManager.default.removeItem(at: partial)
            throw HoardClientError(.digestMismatch, "the bytes downloaded for \(digest) hash to \(actual); they were discarded", digests: [digest])
        }
        do {
            try cache.publish(partial, as: digest)
        } catch {
            throw HoardClientError(.io, "cannot move \(digest) into the cache at \(cache.root.path)", digests: [digest], cause: SendableError(error))
        }
    }

    /// Fetches small blobs with batch requests; a cut response is retried for what did not arrive, and blobs the
    /// server calls too large for a batch are fetched on their own.
    func fetchBatch(_ items: [SyncPlan.Item], into cache: BlobCacheDirectory, run: SyncRun) async throws {
        var remaining = items
        var tooLarge: [SyncPlan.Item] = []
        let attempts = max(1, configuration.attempts)
        for attempt in 1...attempts where !remaining.isEmpty {
            do {
                try await batchOnce(&remaining, tooLarge: &tooLarge, into: cache, run: run)
                break
            } catch let error as HoardClientError {
                let retryable = error.code == .network || (error.status ?? 0) >= 500
                guard retryable, attempt < attempts else {
                    for item in remaining { run.failed(item.digest, error) }
                    remaining = []
                    break
                }
                try await Self.backoff(attempt)
            }
        }
        for item in remaining {
            run.failed(item.digest, HoardClientError(.badResponse, "the batch response left out \(item.digest)", digests: [item.digest]))
        }
        for item in tooLarge { try await fetchSingle(item, into: cache, run: run) }
    }

    /// One batch request; removes from `remaining` every blob it settled.
    private func batchOnce(
        _ remaining: inout [SyncPlan.Item], tooLarge: inout [SyncPlan.Item], into cache: BlobCacheDirectory, run: SyncRun
    ) async throws {
        var request = request("POST", "/v1/blobs/batch")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(["digests": remaining.map(\.digest.description)])
        run.requested()
        let streamed = try await transport.stream(request)
        guard streamed.response.statusCode == 200 else {
            var data = Data()
            for try await chunk in streamed.body { data.append(chunk) }
            throw Self.serverError(streamed.response.statusCode, data, request)
        }
        var byDigest = Dictionary(remaining.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        defer { remaining = remaining.filter { byDigest[$0.digest] != nil } }
        var parser = BatchFrameParser(maxBlobSize: Int(max(configuration.batchThreshold, 1 << 20)))
        do {
            for try await chunk in streamed.body {
                for record in try parser.feed(chunk) {
                    switch record {
                    case .blob(let digest, let bytes):
                        guard byDigest.removeValue(forKey: digest) != nil else {
                            throw HoardClientError(.badResponse, "the batch response holds \(digest), which was not asked for")
                        }
                        run.received(bytes.count)
                        do {
                            try cache.insert(bytes, as: digest)
                            run.completed(digest)
                        } catch let error as HoardClientError {
                            run.failed(digest, error)
                        }
                    case .unavailable(let digest):
                        guard byDigest.removeValue(forKey: digest) != nil else { continue }
                        run.failed(digest, HoardClientError(
                            .unavailable, "the server will not hand over \(digest) (absent, or not visible to this token)", digests: [digest]))
                    case .tooLarge(let digest):
                        guard let item = byDigest.removeValue(forKey: digest) else { continue }
                        tooLarge.append(item)
                    }
                }
            }
            try parser.finish()
        } catch {
            throw HTTPTransport.wrap(error, request)
        }
    }

    /// Waits a little longer after each failed try.
    static func backoff(_ attempt: Int) async throws {
        try await Task.sleep(for: .milliseconds(200 * (1 << min(attempt - 1, 5))))
    }
}
