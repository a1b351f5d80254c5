import Foundation
import HoardCatalog
import HoardCore
import HoardPostgres
import Synchronization
import Testing

/// The goblins pack with one job per asset (its largest picture rendered by `recipe`), first-screen priority.
private func goblinsWithJobs(
    group: String = "dragons", pack: String = "goblins", labelPrefix: String = "goblins", recipe: String = "r1", version: String = "1"
) -> CommitFixture {
    var fixture = CommitFixture(group: group, pack: pack, version: version, assets: goblinAssets(labelPrefix: labelPrefix))
    let specs = goblinAssets(labelPrefix: labelPrefix)
    fixture.commit.jobs = zip(specs, fixture.assetDigests).map { spec, digest in
        let top = spec.pictures.max { $0.scale < $1.scale }!
        return JobSpec(
            source: fakeDigest("picture:" + top.label), recipe: recipe, request: #"{"for":"\#(spec.name)"}"#,
            expects: ["@1x", "preview", "thumbnail"].filter { $0 != "@1x" || top.scale > 1 }, priority: JobPriority.firstScreen,
            assets: [digest])
    }
    return fixture
}

/// What a worker made of a job: a preview and a thumbnail (and a @1x for a source above it).
private func outputs(for lease: JobLease, lod: Bool = false) -> [JobOutput] {
    var made = ["preview": (32, 32), "thumbnail": (256, 256)]
    if lod { made["@1x"] = (512, 512) }
    return made.sorted { $0.key < $1.key }.map { role, size in
        JobOutput(
            role: role, blob: BlobRecord(digest: fakeDigest("\(role) of \(lease.source)"), size: 100, mediaType: "image/webp"),
            width: size.0, height: size.1)
    }
}

private func lease(_ catalog: Catalog, _ worker: String = "w1", at now: Date = Date(), for seconds: TimeInterval = 60, scope: JobScope = .any)
    throws -> JobLease? {
    try catalog.leaseJob(worker: worker, token: UUID().uuidString, now: now, until: now.addingTimeInterval(seconds), scope: scope)
}

@Test(arguments: CatalogBackendKind.allCases)
func anImportQueuesOneJobPerPictureAndRecipeWhateverPacksHoldIt(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    #expect(try catalog.record(goblinsWithJobs().commit) == .recorded)
    #expect(try catalog.jobCounts(now: Date()) == JobQueueCounts(queued: 2, running: 0, done: 0, failed: 0, cancelled: 0))
    #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 2, done: 0, failed: 0, cancelled: 0))
    let listed = try catalog.assetPage(AssetQuery(pack: "goblins"))
    #expect(listed.assets.map(\.pending) == [["preview", "thumbnail"], ["@1x", "preview", "thumbnail"]], "texture then token")
    // Another group's pack of the same pictures, and a second recipe of one of them.
    #expect(try catalog.record(goblinsWithJobs(group: "others").commit) == .recorded)
    #expect(try catalog.jobCounts(now: Date()).queued == 2, "the same pictures and recipe: the same jobs")
    #expect(try catalog.record(goblinsWithJobs(group: "others", pack: "redrawn", recipe: "r2").commit) == .recorded)
    #expect(try catalog.jobCounts(now: Date()).queued == 4)
    #expect(try catalog.packs().map { $0.renditions?.total } == [2, 2, 2])
    // The manifest and listing of a session's map name what is still coming.
    let resolved = try catalog.resolve(Set(goblinsWithJobs().assetDigests))
    #expect(resolved.assets.allSatisfy { $0.pending?.contains("thumbnail") == true })
}

@Test(arguments: CatalogBackendKind.allCases)
func anUnchangedImportQueuesWhatItsGeneratorsNowMakeAndCountsEachLinkOnce(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    // Imported while its generator was off (a plugin without its command): no job.
    var bare = goblinsWithJobs()
    bare.commit.jobs = []
    #expect(try catalog.record(bare.commit) == .recorded)
    #expect(try catalog.jobCounts(now: Date()).queued == 0)
    // The same archive again, the generator on: the version is unchanged and its jobs are queued, once.
    for _ in 0..<2 {
        #expect(try catalog.record(goblinsWithJobs().commit) == .alreadyRecorded)
        #expect(try catalog.jobCounts(now: Date()).queued == 2)
        #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 2, done: 0, failed: 0, cancelled: 0))
    }
    #expect(try catalog.assetPage(AssetQuery(pack: "goblins")).assets.allSatisfy { $0.pending?.contains("preview") == true })
    // One is made; another recipe comes with a later import of the same version: counted on top of what is done.
    let job = try #require(try lease(catalog))
    _ = try catalog.completeJob(job, outputs: outputs(for: job), now: Date())
    #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 2, done: 1, failed: 0, cancelled: 0))
    var more = goblinsWithJobs()
    more.commit.jobs += goblinsWithJobs(recipe: "r2").commit.jobs
    #expect(try catalog.record(more.commit) == .alreadyRecorded)
    #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 4, done: 1, failed: 0, cancelled: 0))
    #expect(try catalog.jobCounts(now: Date()).queued == 3)
    // What the version has already is left as it is: cancelled jobs stay cancelled (`hoard jobs retry` queues them).
    #expect(try catalog.cancelJobs(pack: "goblins", group: nil) == 3)
    #expect(try catalog.record(more.commit) == .alreadyRecorded)
    #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 4, done: 1, failed: 0, cancelled: 3))
    #expect(try catalog.jobCounts(now: Date()).queued == 0)
}

@Test(arguments: CatalogBackendKind.allCases)
func aJobIsLeasedToOneWorkerAndItsPicturesGoToEveryAssetThatNeedsThem(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    _ = try catalog.record(goblinsWithJobs().commit)
    _ = try catalog.record(goblinsWithJobs(group: "others").commit)
    let table = try #require(try catalog.group(named: "dragons")?.id)
    let session = try TableFixture.makeSession("room", code: "ROOM-CODE", groupId: table, in: catalog)
    let ogre = goblinsWithJobs().assetDigests[0]
    try catalog.addReachable(session: session.id, [ogre])
    var taken: [JobLease] = []
    while let job = try lease(catalog) { taken.append(job) }
    #expect(taken.count == 2)
    #expect(taken.allSatisfy { $0.attempts == 1 && $0.worker == "w1" })
    #expect(try lease(catalog, "w2") == nil, "both are leased")
    #expect(try catalog.jobCounts(now: Date()).running == 2)
    let before = try catalog.lastAccessChange()
    let ogreJob = try #require(taken.first { $0.request.contains("ogre") })
    let got = try catalog.completeJob(ogreJob, outputs: outputs(for: ogreJob, lod: true), now: Date())
    #expect(got == [ogre], "one asset digest for both packs' ogre: the same descriptor")
    #expect(try catalog.completeJob(ogreJob, outputs: outputs(for: ogreJob, lod: true), now: Date()) == nil, "a job is done once")
    let listed = try #require(try catalog.assetPage(AssetQuery(pack: "goblins", kind: .token)).assets.first)
    #expect(listed.pending == nil)
    #expect(listed.thumbnail?.width == 256 && listed.preview?.width == 32)
    #expect(listed.variants.map(\.scale) == [1, 2] && listed.variants.map(\.generated) == [nil, nil], "@1x was shipped: kept")
    #expect(try catalog.packs().map { $0.renditions?.done } == [1, 1])
    // The session that shows the ogre reaches its new pictures; the access log names them and the asset.
    let reached = try catalog.accessBase().sessions[session.id] ?? []
    #expect(outputs(for: ogreJob).allSatisfy { reached.contains($0.blob.digest) })
    let changes = try catalog.accessChanges(after: before).changes
    #expect(changes.contains { $0.kind == .art && $0.key == ogre.description })
    #expect(changes.filter { $0.kind == .blob }.count == 3)
    #expect(changes.filter { $0.kind == .reach }.count == 3)
    // The texture's job: no pictures at all (a generator had nothing to make) is done too.
    let stone = try #require(taken.first { $0.request.contains("stone") })
    #expect(try catalog.completeJob(stone, outputs: [], now: Date()) == [])
    #expect(try catalog.packs().map { $0.renditions?.pending } == [0, 0])
    #expect(try catalog.jobCounts(now: Date()).done == 2)
}

@Test(arguments: CatalogBackendKind.allCases)
func aJobWhoseLeaseRanOutIsTakenAgainAndTheLateFinisherIsRefused(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    var fixture = goblinsWithJobs()
    fixture.commit.jobs.removeLast()
    _ = try catalog.record(fixture.commit)
    let now = Date()
    let first = try #require(try lease(catalog, "w1", at: now, for: 5))
    #expect(try lease(catalog, "w2", at: now.addingTimeInterval(4)) == nil)
    #expect(try catalog.renewJobLeases(worker: "w1", until: now.addingTimeInterval(10)) == 1)
    #expect(try lease(catalog, "w2", at: now.addingTimeInterval(8)) == nil, "renewed")
    let second = try #require(try lease(catalog, "w2", at: now.addingTimeInterval(11)), "w1 stopped renewing: it died")
    #expect(second.id == first.id && second.attempts == 2)
    #expect(try catalog.completeJob(first, outputs: outputs(for: first), now: Date()) == nil, "its lease was lost")
    #expect(try catalog.failJob(first, problem: Problem(.storageFailure, "late"), retryAt: nil, now: Date()) == false)
    #expect(try catalog.completeJob(second, outputs: outputs(for: second), now: Date()) != nil)
    #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 1, done: 1, failed: 0, cancelled: 0))
}

@Test(arguments: CatalogBackendKind.allCases)
func aFailedJobIsRetriedAfterItsDelayOrFailsForGoodAsAProblemOfItsPacks(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    _ = try catalog.record(goblinsWithJobs().commit)
    let now = Date()
    let job = try #require(try lease(catalog, at: now))
    #expect(try catalog.failJob(job, problem: Problem(.storageFailure, "disk full"), retryAt: now.addingTimeInterval(30), now: now))
    let other = try #require(try lease(catalog, at: now), "the other job")
    #expect(other.id != job.id)
    #expect(try lease(catalog, at: now.addingTimeInterval(20)) == nil, "not before its retry")
    let again = try #require(try lease(catalog, at: now.addingTimeInterval(31)))
    #expect(again.id == job.id && again.attempts == 2)
    let problem = Problem(.unreadableImage, "libvips cannot decode it", entry: "tokens/ogre.png", severity: .warning)
    #expect(try catalog.failJob(again, problem: problem, retryAt: nil, now: now))
    #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 2, done: 0, failed: 1, cancelled: 0))
    let problems = try catalog.jobProblems(pack: "goblins", group: "dragons")
    #expect(problems.count == 1)
    let failedAsset = problems.first?.asset ?? ""
    #expect(["ogre", "stone-floor"].contains(failedAsset) && problems.first?.code == "UNREADABLE_IMAGE" && problems.first?.attempts == 2)
    #expect(try catalog.assetPage(AssetQuery(pack: "goblins")).assets.first { $0.name == failedAsset }?.pending == nil)
    let taken = try #require(try lease(catalog, at: now.addingTimeInterval(3600)))
    #expect(taken.id == other.id, "a job failed for good is not taken; the other's lease ran out")
    // Retried: queued again as a backlog, its takes counted anew.
    #expect(try catalog.retryJobs(pack: "goblins", group: "dragons", now: now) == 1)
    #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 2, done: 0, failed: 0, cancelled: 0))
    #expect(try catalog.jobProblems(pack: "goblins", group: "dragons").isEmpty)
    #expect(try catalog.failJob(taken, problem: problem, retryAt: now, now: now))
    let first = try #require(try lease(catalog, at: now.addingTimeInterval(3601)))
    #expect(first.id == other.id, "a retried job waits behind the import's own")
    let last = try #require(try lease(catalog, at: now.addingTimeInterval(3601)))
    #expect(last.id == job.id && last.attempts == 1)
}

@Test(arguments: CatalogBackendKind.allCases)
func cancelledJobsAreLeftUntilRetriedOrImportedAgain(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    _ = try catalog.record(goblinsWithJobs().commit)
    #expect(try catalog.cancelJobs(pack: "goblins", group: "dragons") == 2)
    #expect(try catalog.packs().first?.renditions == RenditionProgress(total: 2, done: 0, failed: 0, cancelled: 2))
    #expect(try lease(catalog) == nil)
    #expect(try catalog.assetPage(AssetQuery(pack: "goblins")).assets.allSatisfy { $0.pending == nil })
    #expect(throws: CatalogError.self) { try catalog.cancelJobs(pack: "nothing", group: nil) }
    // Another pack of the same pictures wants them: they are queued again, for both packs.
    _ = try catalog.record(goblinsWithJobs(group: "others").commit)
    #expect(try catalog.packs().map { $0.renditions } == Array(repeating: RenditionProgress(total: 2, done: 0, failed: 0, cancelled: 0), count: 2))
    #expect(try lease(catalog) != nil)
}

@Test(arguments: CatalogBackendKind.allCases)
func jobsRunFirstScreenFirstNewestImportFirstThenInListingOrder(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    var old = goblinsWithJobs(pack: "backlog", labelPrefix: "old")
    old.commit.jobs = old.commit.jobs.map { var job = $0; job.priority = JobPriority.imported; return job }
    _ = try catalog.record(old.commit)
    _ = try catalog.record(goblinsWithJobs(pack: "first", labelPrefix: "first").commit)
    _ = try catalog.record(goblinsWithJobs(pack: "newest", labelPrefix: "newest").commit)
    var order: [String] = []
    while let job = try lease(catalog) { order.append(job.source.description) }
    let expected = ["newest", "first", "old"].flatMap { prefix in
        goblinAssets(labelPrefix: prefix).map { fakeDigest("picture:" + $0.pictures.max { $0.scale < $1.scale }!.label).description }
    }
    #expect(order == expected)
}

@Test(arguments: CatalogBackendKind.allCases)
func aWorkerOfOnePackTakesOnlyThatPacksJobs(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    let mine = goblinsWithJobs(pack: "mine", labelPrefix: "mine")
    _ = try catalog.record(mine.commit)
    _ = try catalog.record(goblinsWithJobs(pack: "theirs", labelPrefix: "theirs").commit)
    var taken = 0
    while let job = try lease(catalog, scope: .manifests([mine.commit.manifestDigest])) {
        #expect(job.source.description.hasPrefix("sha256:"))
        taken += 1
    }
    #expect(taken == 2)
    #expect(try catalog.jobCounts(now: Date()).queued == 2, "the other pack's are left")
}

/// Four workers on one queue of 60 jobs, each taking, making and finishing as fast as it can: every job is finished
/// exactly once, and no job is ever held by two workers (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one writer).
@Test(arguments: CatalogBackendKind.allCases)
func workersSharingOneQueueNeverTakeAJobTwice(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    for n in 0..<30 { _ = try catalog.record(goblinsWithJobs(pack: "pack\(n)", labelPrefix: "p\(n)").commit) }
    let finished = Mutex<[Int64]>([])
    let held = Mutex<Set<Int64>>([])
    let overlaps = Mutex(0)
    let done = DispatchGroup()
    for worker in 0..<4 {
        done.enter()
        Thread {
            defer { done.leave() }
            while let job = try? lease(catalog, "w\(worker)") {
                if !held.withLock({ $0.insert(job.id).inserted }) { overlaps.withLock { $0 += 1 } }
                if (try? catalog.completeJob(job, outputs: outputs(for: job), now: Date())) != nil {
                    finished.withLock { $0.append(job.id) }
                }
                held.withLock { _ = $0.remove(job.id) }
            }
        }.start()
    }
    done.wait()
    let ids = finished.withLock { $0 }
    #expect(ids.count == 60)
    #expect(Set(ids).count == 60)
    #expect(overlaps.withLock { $0 } == 0)
    #expect(try catalog.jobCounts(now: Date()) == JobQueueCounts(queued: 0, running: 0, done: 60, failed: 0, cancelled: 0))
}

@Test(arguments: CatalogBackendKind.allCases)
func garbageCollectionTakesTheJobsAndPicturesOfDeletedPacks(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    _ = try catalog.record(goblinsWithJobs().commit)
    let job = try #require(try lease(catalog))
    let made = outputs(for: job)
    _ = try catalog.completeJob(job, outputs: made, now: Date())
    #expect(try catalog.danglingReferences().isEmpty)
    #expect(try catalog.collectGarbage().isEmpty, "everything is referenced")
    try catalog.deletePack(named: "goblins")
    let collected = Set(try catalog.collectGarbage())
    #expect(made.allSatisfy { collected.contains($0.blob.digest) })
    #expect(try catalog.jobCounts(now: Date()) == JobQueueCounts(queued: 0, running: 0, done: 0, failed: 0, cancelled: 0))
}

@Test(arguments: CatalogBackendKind.allCases)
func aSoundsCompatibleRenditionIsListedPendingThenMadeInPagesListingsAndManifests(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    defer { (catalog as? PostgresCatalog)?.close() }
    var fixture = goblinsWithJobs()
    for index in fixture.commit.jobs.indices { fixture.commit.jobs[index].expects = ["compatible"] }
    _ = try catalog.record(fixture.commit)
    #expect(try catalog.assetPage(AssetQuery(pack: "goblins")).assets.map(\.pending) == [["compatible"], ["compatible"]])
    let job = try #require(try lease(catalog))
    let sound = JobOutput(
        role: "compatible", blob: BlobRecord(digest: fakeDigest("aac of \(job.source)"), size: 2100, mediaType: "audio/mp4"), width: 0, height: 0)
    let made = try #require(try catalog.completeJob(job, outputs: [sound], now: Date()))
    let expected = AssetDescriptor.Rendition(digest: sound.blob.digest, width: 0, height: 0, size: 2100, mediaType: .m4a)
    let paged = try catalog.assetPage(AssetQuery(pack: "goblins")).assets.filter { made.contains($0.digest) }
    #expect(paged.count == 1 && paged.allSatisfy { $0.compatible == expected && $0.pending == nil && $0.preview == nil })
    #expect(try catalog.assets(pack: "goblins").filter { $0.compatible != nil }.map(\.digest) == made)
    let resolved = try catalog.resolve(Set(made))
    #expect(resolved.assets.map(\.compatible) == [expected] && resolved.reachable.contains(sound.blob.digest))
}
