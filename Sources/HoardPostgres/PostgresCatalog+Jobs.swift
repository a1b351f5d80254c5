import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

// The rendition queue, as SQLiteCatalog keeps it (HoardCatalog, `Catalog+Jobs.swift`). Replicas share it: a job is
// taken with `FOR UPDATE SKIP LOCKED`, so two replicas asking at once take two jobs, never one twice; the lease token
// makes a late finisher's rows refused once another took the job after its lease ran out.
extension PostgresCatalog {
    /// Queues an importing version's jobs inside its record transaction (``SQLiteCatalog``'s `queue`). Jobs go in key
    /// order, so imports that share pictures wait for each other rather than deadlock.
    static func queue(_ jobs: [JobSpec], version: Int64, now: Date, _ tx: PostgresTransaction) throws {
        guard !jobs.isEmpty else { return }
        let milliseconds = Self.milliseconds(now)
        var seen: Set<String> = []
        // Each job keeps its place in the import's order (`position`); rows are locked in key order.
        let sorted = jobs.enumerated().map { (position: $0.offset, job: $0.element) }
            .sorted { ($0.job.source.description, $0.job.recipe) < ($1.job.source.description, $1.job.recipe) }
        var assets: [String: [Digest]] = [:]
        for job in jobs { assets[job.source.description + " " + job.recipe, default: []] += job.assets }
        var links: [(job: Int64, asset: String)] = []
        var states: [Int64: JobState] = [:]
        var done: [Int64] = []
        for (position, job) in sorted where seen.insert(job.source.description + " " + job.recipe).inserted {
            guard let row = try tx.row(#"""
                INSERT INTO job ("sourceDigest", recipe, request, expects, state, priority, batch, position, attempts, "availableAt", "createdAt")
                VALUES (\#(job.source), \#(job.recipe), \#(job.request), \#(job.expects.joined(separator: " ")), 'pending',
                        \#(Int64(job.priority)), \#(version), \#(Int64(position)), 0, \#(milliseconds), \#(now))
                ON CONFLICT ("sourceDigest", recipe) DO UPDATE SET
                    priority = CASE WHEN job.state IN ('pending', 'cancelled') THEN greatest(job.priority, excluded.priority) ELSE job.priority END,
                    position = CASE WHEN job.state IN ('pending', 'cancelled') AND excluded.batch > job.batch THEN excluded.position
                                    ELSE job.position END,
                    batch = CASE WHEN job.state IN ('pending', 'cancelled') THEN greatest(job.batch, excluded.batch) ELSE job.batch END
                RETURNING id, state
                """#, as: (Int64, String).self) else { continue }
            let (id, state) = row
            states[id] = state == JobState.cancelled.rawValue ? .pending : JobState(rawValue: state) ?? .pending
            if state == JobState.cancelled.rawValue {
                try move(job: id, from: .cancelled, to: .pending, tx)
                try tx.execute(#"""
                    UPDATE job SET state = 'pending', attempts = 0, "availableAt" = \#(milliseconds), problem = NULL, "finishedAt" = NULL
                    WHERE id = \#(id)
                    """#)
            }
            links += (assets[job.source.description + " " + job.recipe] ?? []).map { (id, $0.description) }
            if state == JobState.done.rawValue { done.append(id) }
        }
        let made = try tx.values(#"""
            INSERT INTO "jobAsset" ("jobId", "packVersionId", "assetDigest")
            SELECT j, \#(version), a FROM unnest(\#(links.map(\.job))::bigint[], \#(links.map(\.asset))::text[]) AS l(j, a)
            ON CONFLICT DO NOTHING
            RETURNING "jobId"
            """#, as: Int64.self)
        for id in done { try attachOutputs(of: id, version: version, tx) }
        // The job rows are locked (upserted above) until this commits: a worker moves their counters after, ours included.
        var linked = JobTally()
        for id in made { linked.count(states[id] ?? .pending) }
        try tx.execute(#"""
            INSERT INTO "packVersionJobs" ("packVersionId", total, done, failed, cancelled)
            VALUES (\#(version), \#(linked.total), \#(linked.done), \#(linked.failed), \#(linked.cancelled))
            ON CONFLICT ("packVersionId") DO UPDATE SET total = "packVersionJobs".total + excluded.total,
                done = "packVersionJobs".done + excluded.done, failed = "packVersionJobs".failed + excluded.failed,
                cancelled = "packVersionJobs".cancelled + excluded.cancelled
            """#)
    }

    /// Gives a done job's pictures to the assets linked to it (of one version, or all).
    static func attachOutputs(of job: Int64, version: Int64?, _ tx: PostgresTransaction) throws {
        try tx.execute(#"""
            INSERT INTO variant ("assetDigest", scale, "blobDigest", width, height, "isGenerated")
            SELECT DISTINCT ja."assetDigest", o.scale, o."blobDigest", o.width, o.height, true
            FROM "jobAsset" ja JOIN "jobOutput" o ON o."jobId" = ja."jobId"
            WHERE ja."jobId" = \#(job) AND o.scale IS NOT NULL AND (\#(version)::bigint IS NULL OR ja."packVersionId" = \#(version))
            ORDER BY 1, 2
            ON CONFLICT DO NOTHING
            """#)
        try tx.execute(#"""
            INSERT INTO rendition ("assetDigest", role, "blobDigest", width, height)
            SELECT DISTINCT ja."assetDigest", o.role, o."blobDigest", o.width, o.height
            FROM "jobAsset" ja JOIN "jobOutput" o ON o."jobId" = ja."jobId"
            WHERE ja."jobId" = \#(job) AND o.scale IS NULL AND (\#(version)::bigint IS NULL OR ja."packVersionId" = \#(version))
            ORDER BY 1, 2
            ON CONFLICT DO NOTHING
            """#)
    }

    /// Moves the counters of every version linked to a job from one state to another, their rows locked in id order.
    static func move(job: Int64, from old: JobState, to new: JobState, _ tx: PostgresTransaction) throws {
        let parts = JobSQL.counterChange(from: old, to: new, count: "c.n")
        guard !parts.isEmpty else { return }
        try tx.execute(#"""
            SELECT 1 FROM "packVersionJobs" WHERE "packVersionId" IN (SELECT "packVersionId" FROM "jobAsset" WHERE "jobId" = \#(job))
            ORDER BY "packVersionId" FOR UPDATE
            """#)
        try tx.execute(#"""
            UPDATE "packVersionJobs" p SET \#(unescaped: parts.joined(separator: ", "))
            FROM (SELECT "packVersionId", count(*) AS n FROM "jobAsset" WHERE "jobId" = \#(job) GROUP BY "packVersionId") c
            WHERE p."packVersionId" = c."packVersionId"
            """#)
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Takes the next free job for `worker` (``SQLiteCatalog/leaseJob(worker:token:now:until:scope:)``), skipping rows
    /// another transaction is taking.
    public func leaseJob(worker: String, token: String, now: Date, until: Date, scope: JobScope) throws(CatalogError) -> JobLease? {
        try write("cannot take a rendition job") { tx in
            var manifests: [String]?
            if case .manifests(let digests) = scope { manifests = digests.texts }
            guard let row = try tx.row(#"""
                UPDATE job SET worker = \#(worker), "leaseToken" = \#(token), "availableAt" = \#(Self.milliseconds(until)),
                    attempts = attempts + 1
                WHERE id = (
                    SELECT id FROM job WHERE state = 'pending' AND "availableAt" <= \#(Self.milliseconds(now))
                    AND (\#(manifests)::text[] IS NULL OR id IN (
                        SELECT ja."jobId" FROM "jobAsset" ja JOIN "packVersion" v ON v.id = ja."packVersionId"
                        WHERE v."manifestDigest" = ANY(\#(manifests)::text[])))
                    ORDER BY priority DESC, batch DESC, position, id LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING id, "sourceDigest", recipe, request, attempts
                """#, as: (Int64, Digest, String, String, Int).self)
            else { return nil }
            let (id, source, recipe, request, attempts) = row
            return JobLease(id: id, source: source, recipe: recipe, request: request, attempts: attempts, worker: worker, token: token)
        }
    }

    /// Extends every lease `worker` holds to `until`; returns how many.
    @discardableResult
    public func renewJobLeases(worker: String, until: Date) throws(CatalogError) -> Int {
        try write("cannot renew the rendition jobs of \(worker)") { tx in
            try tx.execute(#"""
                UPDATE job SET "availableAt" = \#(Self.milliseconds(until))
                WHERE worker = \#(worker) AND state = 'pending' AND "leaseToken" IS NOT NULL
                """#)
        }
    }

    /// Records a job's pictures and gives them to its assets (``SQLiteCatalog/completeJob(_:outputs:now:)``).
    public func completeJob(_ lease: JobLease, outputs: [JobOutput], now: Date) throws(CatalogError) -> [Digest]? {
        try write("cannot record the pictures of rendition job \(lease.id)") { tx in
            let changed = try tx.execute(#"""
                UPDATE job SET state = 'done', worker = NULL, "leaseToken" = NULL, problem = NULL, "finishedAt" = \#(now)
                WHERE id = \#(lease.id) AND "leaseToken" = \#(lease.token) AND state = 'pending'
                """#)
            guard changed == 1 else { return nil }
            try Self.move(job: lease.id, from: .pending, to: .done, tx)
            guard !outputs.isEmpty else { return [] }
            try Self.insertBlobs(outputs.map(\.blob), tx)
            try tx.execute(#"""
                INSERT INTO "jobOutput" ("jobId", role, scale, "blobDigest", width, height)
                SELECT \#(lease.id), r, NULLIF(s, 0), d, w, h FROM unnest(
                    \#(outputs.map(\.role))::text[], \#(outputs.map { Int64($0.scale ?? 0) })::bigint[],
                    \#(outputs.map(\.blob.digest.description))::text[], \#(outputs.map { Int64($0.width) })::bigint[],
                    \#(outputs.map { Int64($0.height) })::bigint[]) AS o(r, s, d, w, h)
                ON CONFLICT DO NOTHING
                """#)
            try Self.attachOutputs(of: lease.id, version: nil, tx)
            try tx.execute(#"""
                INSERT INTO "sessionBlob" ("sessionId", digest)
                SELECT DISTINCT sb."sessionId", o."blobDigest" FROM "jobAsset" ja JOIN "sessionBlob" sb ON sb.digest = ja."assetDigest"
                JOIN "jobOutput" o ON o."jobId" = ja."jobId" WHERE ja."jobId" = \#(lease.id)
                ON CONFLICT DO NOTHING
                """#)
            try tx.execute(#"""
                INSERT INTO "savedMapBlob" ("savedMapId", digest)
                SELECT DISTINCT sb."savedMapId", o."blobDigest" FROM "jobAsset" ja JOIN "savedMapBlob" sb ON sb.digest = ja."assetDigest"
                JOIN "jobOutput" o ON o."jobId" = ja."jobId" WHERE ja."jobId" = \#(lease.id)
                ON CONFLICT DO NOTHING
                """#)
            let assets = try tx.values(#"""
                SELECT DISTINCT "assetDigest" FROM "jobAsset" WHERE "jobId" = \#(lease.id) ORDER BY 1
                """#, as: Digest.self)
            // The log's lock first, as its triggers take it: seq order stays commit order.
            try tx.execute("SELECT pg_advisory_xact_lock(\(PostgresSchema.accessChangeLock))")
            let kinds = Array(repeating: AccessChange.Kind.blob.rawValue, count: outputs.count)
                + Array(repeating: AccessChange.Kind.art.rawValue, count: assets.count)
            let keys = outputs.map(\.blob.digest.description) + assets.map(\.description)
            try tx.execute(#"""
                INSERT INTO "accessChange" (kind, key, at)
                SELECT k, d, extract(epoch FROM clock_timestamp())::bigint FROM unnest(\#(kinds)::text[], \#(keys)::text[]) AS c(k, d)
                """#)
            return assets
        }
    }

    /// Gives a leased job back, to be retried from `retryAt`, or failed for good (nil).
    @discardableResult
    public func failJob(_ lease: JobLease, problem: Problem, retryAt: Date?, now: Date) throws(CatalogError) -> Bool {
        try write("cannot record the failure of rendition job \(lease.id)") { tx in
            let text = String(decoding: (try? JSONEncoder().encode(problem)) ?? Data(), as: UTF8.self)
            if let retryAt {
                return try tx.execute(#"""
                    UPDATE job SET worker = NULL, "leaseToken" = NULL, "availableAt" = \#(Self.milliseconds(retryAt)), problem = \#(text)
                    WHERE id = \#(lease.id) AND "leaseToken" = \#(lease.token) AND state = 'pending'
                    """#) == 1
            }
            guard try tx.execute(#"""
                UPDATE job SET state = 'failed', worker = NULL, "leaseToken" = NULL, problem = \#(text), "finishedAt" = \#(now)
                WHERE id = \#(lease.id) AND "leaseToken" = \#(lease.token) AND state = 'pending'
                """#) == 1 else { return false }
            try Self.move(job: lease.id, from: .pending, to: .failed, tx)
            return true
        }
    }

    /// The current version of a pack, `notFound` when there is none.
    static func currentVersion(pack: String, group: String?, _ tx: PostgresTransaction) throws -> Int64 {
        guard let version = try Self.pack(named: pack, group: group, tx)?.currentVersionId else {
            throw CatalogError(.notFound, "no pack named '\(pack)'")
        }
        return version
    }

    /// Cancels the pending jobs of a pack's current version; returns how many.
    public func cancelJobs(pack: String, group: String?) throws(CatalogError) -> Int {
        try write("cannot cancel the rendition jobs of '\(pack)'") { tx in
            let version = try Self.currentVersion(pack: pack, group: group, tx)
            let ids = try tx.values(#"""
                SELECT DISTINCT j.id FROM "jobAsset" ja JOIN job j ON j.id = ja."jobId"
                WHERE ja."packVersionId" = \#(version) AND j.state = 'pending' ORDER BY 1
                """#, as: Int64.self)
            for id in ids {
                try Self.move(job: id, from: .pending, to: .cancelled, tx)
                try tx.execute(#"""
                    UPDATE job SET state = 'cancelled', worker = NULL, "leaseToken" = NULL, "finishedAt" = \#(Date()) WHERE id = \#(id)
                    """#)
            }
            return ids.count
        }
    }

    /// Queues again the failed and cancelled jobs of a pack's current version, as a backlog; returns how many.
    public func retryJobs(pack: String, group: String?, now: Date) throws(CatalogError) -> Int {
        try write("cannot retry the rendition jobs of '\(pack)'") { tx in
            let version = try Self.currentVersion(pack: pack, group: group, tx)
            let rows = try tx.rows(#"""
                SELECT DISTINCT j.id, j.state FROM "jobAsset" ja JOIN job j ON j.id = ja."jobId"
                WHERE ja."packVersionId" = \#(version) AND j.state IN ('failed', 'cancelled') ORDER BY 1
                """#, as: (Int64, String).self)
            let batch = try tx.value(#"SELECT COALESCE(MAX(id), 0)::bigint FROM "packVersion""#, as: Int64.self) ?? 0
            for (id, state) in rows {
                try Self.move(job: id, from: JobState(rawValue: state) ?? .failed, to: .pending, tx)
                try tx.execute(#"""
                    UPDATE job SET state = 'pending', attempts = 0, "availableAt" = \#(Self.milliseconds(now)), problem = NULL,
                        "finishedAt" = NULL, priority = \#(Int64(JobPriority.backlog)), batch = \#(batch), position = 0, worker = NULL,
                        "leaseToken" = NULL
                    WHERE id = \#(id)
                    """#)
            }
            return rows.count
        }
    }

    /// The pictures of a pack's current version that failed for good, by asset name.
    public func jobProblems(pack: String, group: String?) throws(CatalogError) -> [JobProblem] {
        try read("cannot read the rendition problems of '\(pack)'") { tx in
            guard let version = try Self.pack(named: pack, group: group, tx)?.currentVersionId else { return [] }
            return try tx.rows(#"""
                SELECT pva.kind, pva.name, j.problem, j.attempts FROM "jobAsset" ja JOIN job j ON j.id = ja."jobId"
                JOIN "packVersionAsset" pva ON pva."packVersionId" = ja."packVersionId" AND pva."assetDigest" = ja."assetDigest"
                WHERE ja."packVersionId" = \#(version) AND j.state = 'failed' ORDER BY pva.kind COLLATE "C", pva.name COLLATE "C"
                """#, as: (String, String, String?, Int).self).map { kind, name, problem, attempts in
                SQLiteCatalog.jobProblem(kind: kind, name: name, problem: problem, attempts: attempts)
            }
        }
    }

    /// The whole queue's counts at `now`.
    public func jobCounts(now: Date) throws(CatalogError) -> JobQueueCounts {
        try read("cannot count the rendition jobs") { tx in
            var counts = JobQueueCounts(queued: 0, running: 0, done: 0, failed: 0, cancelled: 0)
            for (state, leased, n) in try tx.rows(#"""
                SELECT state, "leaseToken" IS NOT NULL AND "availableAt" > \#(Self.milliseconds(now)), count(*)::bigint FROM job GROUP BY 1, 2
                """#, as: (String, Bool, Int).self) {
                switch JobState(rawValue: state) {
                case .pending: if leased { counts.running += n } else { counts.queued += n }
                case .done: counts.done += n
                case .failed: counts.failed += n
                case .cancelled: counts.cancelled += n
                case nil: break
                }
            }
            return counts
        }
    }

    /// The pictures still coming for each of these assets.
    static func pendingRoles(of assets: Set<Digest>, _ tx: PostgresTransaction) throws -> [Digest: [String]] {
        guard !assets.isEmpty else { return [:] }
        var expects: [Digest: [String]] = [:]
        for (digest, text) in try tx.rows(#"""
            SELECT ja."assetDigest", j.expects FROM "jobAsset" ja JOIN job j ON j.id = ja."jobId"
            WHERE ja."assetDigest" = ANY(\#(assets.texts)::text[]) AND j.state = 'pending'
            """#, as: (Digest, String).self) {
            expects[digest, default: []].append(text)
        }
        return expects.mapValues(JobSQL.pendingRoles)
    }
}
