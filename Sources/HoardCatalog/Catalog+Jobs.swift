import Foundation
import GRDB
import HoardCore

// The rendition queue on SQLite (migration `v18-jobs`; ``JobSpec`` says what a job is). Every state change is one
// transaction that also moves the per-version counters (`packVersionJobs`), so a pack's progress is one row to read.
extension SQLiteCatalog {
    /// Queues an importing version's jobs inside its record transaction: a job that exists is reused (raised to this
    /// import's priority and batch while it waits; a cancelled one queued again), each linked to the version's assets;
    /// the pictures of jobs already done are given to those assets at once; the version's counters grow by the links
    /// made. For a version already recorded (an unchanged import whose generators now make more, such as a plugin
    /// turned on since), the caller passes only the jobs it lacks (``JobKey/missing(from:linked:)``).
    static func queue(_ jobs: [JobSpec], version: Int64, now: Date, _ db: Database) throws {
        guard !jobs.isEmpty else { return }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO job (sourceDigest, recipe, request, expects, state, priority, batch, position, attempts, availableAt, createdAt)
            VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, 0, ?, ?)
            ON CONFLICT (sourceDigest, recipe) DO UPDATE SET
                priority = CASE WHEN state IN ('pending', 'cancelled') THEN MAX(priority, excluded.priority) ELSE priority END,
                position = CASE WHEN state IN ('pending', 'cancelled') AND excluded.batch > batch THEN excluded.position ELSE position END,
                batch = CASE WHEN state IN ('pending', 'cancelled') THEN MAX(batch, excluded.batch) ELSE batch END
            RETURNING id, state
            """)
        let link = try db.cachedStatement(sql: "INSERT OR IGNORE INTO jobAsset (jobId, packVersionId, assetDigest) VALUES (?, ?, ?)")
        let milliseconds = Self.milliseconds(now)
        let created = StoredDate.text(now)
        var linked = JobTally()
        for (position, job) in jobs.enumerated() {
            guard let row = try Row.fetchOne(upsert, arguments: [
                job.source, job.recipe, job.request, job.expects.joined(separator: " "), job.priority, version, position, milliseconds, created,
            ]) else { continue }
            let id: Int64 = row["id"]
            var state = JobState(rawValue: row["state"]) ?? .pending
            if state == .cancelled {
                try move(job: id, from: .cancelled, to: .pending, db)
                try db.execute(sql: """
                    UPDATE job SET state = 'pending', attempts = 0, availableAt = ?, problem = NULL, finishedAt = NULL WHERE id = ?
                    """, arguments: [milliseconds, id])
                state = .pending
            }
            for asset in job.assets {
                try link.execute(arguments: [id, version, asset])
                if db.changesCount > 0 { linked.count(state) }
            }
            if state == .done { try attachOutputs(of: id, version: version, db) }
        }
        try db.execute(sql: """
            INSERT INTO packVersionJobs (packVersionId, total, done, failed, cancelled) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (packVersionId) DO UPDATE SET total = total + excluded.total, done = done + excluded.done,
                failed = failed + excluded.failed, cancelled = cancelled + excluded.cancelled
            """, arguments: [version, linked.total, linked.done, linked.failed, linked.cancelled])
    }

    /// Gives a done job's pictures to the assets linked to it (of one version, or all): LODs as generated variants,
    /// previews, thumbnails and compatible sounds as renditions. Rows that exist are kept.
    static func attachOutputs(of job: Int64, version: Int64?, _ db: Database) throws {
        let only = version.map { "AND ja.packVersionId = \($0)" } ?? ""
        try db.execute(sql: """
            INSERT OR IGNORE INTO variant (assetDigest, scale, blobDigest, width, height, isGenerated)
            SELECT DISTINCT ja.assetDigest, o.scale, o.blobDigest, o.width, o.height, 1
            FROM jobAsset ja JOIN jobOutput o ON o.jobId = ja.jobId WHERE ja.jobId = ? AND o.scale IS NOT NULL \(only)
            """, arguments: [job])
        try db.execute(sql: """
            INSERT OR IGNORE INTO rendition (assetDigest, role, blobDigest, width, height)
            SELECT DISTINCT ja.assetDigest, o.role, o.blobDigest, o.width, o.height
            FROM jobAsset ja JOIN jobOutput o ON o.jobId = ja.jobId WHERE ja.jobId = ? AND o.scale IS NULL \(only)
            """, arguments: [job])
    }

    /// Moves the counters of every version linked to a job from one state to another.
    static func move(job: Int64, from old: JobState, to new: JobState, _ db: Database) throws {
        let parts = JobSQL.counterChange(from: old, to: new, count: "c.n")
        guard !parts.isEmpty else { return }
        try db.execute(sql: """
            UPDATE packVersionJobs SET \(parts.joined(separator: ", "))
            FROM (SELECT packVersionId, COUNT(*) AS n FROM jobAsset WHERE jobId = ? GROUP BY packVersionId) c
            WHERE packVersionJobs.packVersionId = c.packVersionId
            """, arguments: [job])
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Takes the next job (the highest priority, the newest batch, the first listed) whose lease is free at `now`,
    /// leased to `worker` under `token` until `until`; nil when none is.
    public func leaseJob(worker: String, token: String, now: Date, until: Date, scope: JobScope) throws(CatalogError) -> JobLease? {
        // Idle workers ask every second: a read answers "none" without taking the catalog's one writer.
        let any = try read { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM job WHERE state = 'pending' AND availableAt <= ?)", arguments: [Self.milliseconds(now)])
        }
        guard any == true else { return nil }
        return try write { db in
            var condition = ""
            var arguments: StatementArguments = [worker, token, Self.milliseconds(until), Self.milliseconds(now)]
            if case .manifests(let digests) = scope {
                let marks = Array(repeating: "?", count: digests.count).joined(separator: ",")
                condition = """
                    AND id IN (SELECT ja.jobId FROM jobAsset ja JOIN packVersion v ON v.id = ja.packVersionId WHERE v.manifestDigest IN (\(marks)))
                    """
                arguments += StatementArguments(digests)
            }
            guard let row = try Row.fetchOne(db, sql: """
                UPDATE job SET worker = ?, leaseToken = ?, availableAt = ?, attempts = attempts + 1
                WHERE id = (SELECT id FROM job WHERE state = 'pending' AND availableAt <= ? \(condition)
                            ORDER BY priority DESC, batch DESC, position, id LIMIT 1)
                RETURNING id, sourceDigest, recipe, request, attempts
                """, arguments: arguments),
                let source = Digest.fromDatabaseValue(row["sourceDigest"])
            else { return nil }
            return JobLease(
                id: row["id"], source: source, recipe: row["recipe"], request: row["request"], attempts: row["attempts"], worker: worker,
                token: token)
        }
    }

    /// Extends every lease `worker` holds to `until`; returns how many.
    @discardableResult
    public func renewJobLeases(worker: String, until: Date) throws(CatalogError) -> Int {
        try write { db in
            try db.execute(
                sql: "UPDATE job SET availableAt = ? WHERE worker = ? AND state = 'pending' AND leaseToken IS NOT NULL",
                arguments: [Self.milliseconds(until), worker])
            return db.changesCount
        }
    }

    /// Records a job's pictures (their blobs already published) and gives them to its assets, in one transaction: the
    /// job becomes done; the assets' sessions and saved maps reach the new pictures; the access log names the blobs
    /// (`blob`) and the assets (`art`). Nil, and nothing written, when the lease was lost (the job was taken again,
    /// finished or cancelled meanwhile); else the assets that got pictures.
    public func completeJob(_ lease: JobLease, outputs: [JobOutput], now: Date) throws(CatalogError) -> [Digest]? {
        try write { db in
            try db.execute(sql: """
                UPDATE job SET state = 'done', worker = NULL, leaseToken = NULL, problem = NULL, finishedAt = ?
                WHERE id = ? AND leaseToken = ? AND state = 'pending'
                """, arguments: [StoredDate.text(now), lease.id, lease.token])
            guard db.changesCount == 1 else { return nil }
            try Self.move(job: lease.id, from: .pending, to: .done, db)
            let insertBlob = try db.cachedStatement(sql: "INSERT OR IGNORE INTO blob (digest, size, mediaType, createdAt) VALUES (?, ?, ?, ?)")
            let insertOutput = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO jobOutput (jobId, role, scale, blobDigest, width, height) VALUES (?, ?, ?, ?, ?, ?)
                """)
            let logChange = try db.cachedStatement(sql: """
                INSERT INTO accessChange (kind, key, at) VALUES (?, ?, CAST(strftime('%s', 'now') AS INTEGER))
                """)
            for output in outputs {
                try insertBlob.execute(arguments: [output.blob.digest, output.blob.size, output.blob.mediaType, StoredDate.text(output.blob.createdAt)])
                try insertOutput.execute(arguments: [lease.id, output.role, output.scale, output.blob.digest, output.width, output.height])
            }
            guard !outputs.isEmpty else { return [] }
            try Self.attachOutputs(of: lease.id, version: nil, db)
            // What already reached an asset reaches its new pictures: sessions (participants' reach) and saved maps.
            try db.execute(sql: """
                INSERT OR IGNORE INTO sessionBlob (sessionId, digest)
                SELECT DISTINCT sb.sessionId, o.blobDigest FROM jobAsset ja JOIN sessionBlob sb ON sb.digest = ja.assetDigest
                JOIN jobOutput o ON o.jobId = ja.jobId WHERE ja.jobId = ?
                """, arguments: [lease.id])
            try db.execute(sql: """
                INSERT OR IGNORE INTO savedMapBlob (savedMapId, digest)
                SELECT DISTINCT sb.savedMapId, o.blobDigest FROM jobAsset ja JOIN savedMapBlob sb ON sb.digest = ja.assetDigest
                JOIN jobOutput o ON o.jobId = ja.jobId WHERE ja.jobId = ?
                """, arguments: [lease.id])
            let assets = try Digest.fetchAll(db, sql: "SELECT DISTINCT assetDigest FROM jobAsset WHERE jobId = ? ORDER BY assetDigest", arguments: [lease.id])
            for output in outputs { try logChange.execute(arguments: [AccessChange.Kind.blob.rawValue, output.blob.digest.description]) }
            for asset in assets { try logChange.execute(arguments: [AccessChange.Kind.art.rawValue, asset.description]) }
            return assets
        }
    }

    /// Gives a leased job back: with `retryAt`, to be taken again from then on; without, failed for good. `problem` is
    /// kept either way (``JobProblem``). False, and nothing written, when the lease was lost.
    @discardableResult
    public func failJob(_ lease: JobLease, problem: Problem, retryAt: Date?, now: Date) throws(CatalogError) -> Bool {
        try write { db in
            let text = String(decoding: (try? JSONEncoder().encode(problem)) ?? Data(), as: UTF8.self)
            if let retryAt {
                try db.execute(sql: """
                    UPDATE job SET worker = NULL, leaseToken = NULL, availableAt = ?, problem = ?
                    WHERE id = ? AND leaseToken = ? AND state = 'pending'
                    """, arguments: [Self.milliseconds(retryAt), text, lease.id, lease.token])
                return db.changesCount == 1
            }
            try db.execute(sql: """
                UPDATE job SET state = 'failed', worker = NULL, leaseToken = NULL, problem = ?, finishedAt = ?
                WHERE id = ? AND leaseToken = ? AND state = 'pending'
                """, arguments: [text, StoredDate.text(now), lease.id, lease.token])
            guard db.changesCount == 1 else { return false }
            try Self.move(job: lease.id, from: .pending, to: .failed, db)
            return true
        }
    }

    /// The current version of a group's pack, by its exact name (ASCII case aside).
    static func currentVersion(pack: String, group: String?, _ db: Database) throws -> Int64? {
        try packRecord(named: pack, group: group, db)?.currentVersionId
    }

    /// Cancels the pending jobs of a pack's current version (also for the other packs that share them); returns how
    /// many. A job being made finishes, and its pictures are not kept.
    public func cancelJobs(pack: String, group: String?) throws(CatalogError) -> Int {
        try write { db in
            guard let version = try Self.currentVersion(pack: pack, group: group, db) else {
                throw CatalogError(.notFound, "no pack named '\(pack)'")
            }
            let ids = try Int64.fetchAll(db, sql: """
                SELECT DISTINCT j.id FROM jobAsset ja JOIN job j ON j.id = ja.jobId WHERE ja.packVersionId = ? AND j.state = 'pending'
                """, arguments: [version])
            for id in ids {
                try Self.move(job: id, from: .pending, to: .cancelled, db)
                try db.execute(sql: """
                    UPDATE job SET state = 'cancelled', worker = NULL, leaseToken = NULL, finishedAt = ? WHERE id = ?
                    """, arguments: [StoredDate.text(Date()), id])
            }
            return ids.count
        }
    }

    /// Queues again the failed and cancelled jobs of a pack's current version, as a backlog (after new imports' jobs),
    /// their attempts counted anew; returns how many.
    public func retryJobs(pack: String, group: String?, now: Date) throws(CatalogError) -> Int {
        try write { db in
            guard let version = try Self.currentVersion(pack: pack, group: group, db) else {
                throw CatalogError(.notFound, "no pack named '\(pack)'")
            }
            let rows = try Row.fetchAll(db, sql: """
                SELECT DISTINCT j.id, j.state FROM jobAsset ja JOIN job j ON j.id = ja.jobId
                WHERE ja.packVersionId = ? AND j.state IN ('failed', 'cancelled')
                """, arguments: [version])
            let batch = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM packVersion") ?? 0
            for row in rows {
                let id: Int64 = row["id"]
                try Self.move(job: id, from: JobState(rawValue: row["state"]) ?? .failed, to: .pending, db)
                try db.execute(sql: """
                    UPDATE job SET state = 'pending', attempts = 0, availableAt = ?, problem = NULL, finishedAt = NULL,
                        priority = ?, batch = ?, position = 0, worker = NULL, leaseToken = NULL WHERE id = ?
                    """, arguments: [Self.milliseconds(now), JobPriority.backlog, batch, id])
            }
            return rows.count
        }
    }

    /// The pictures of a pack's current version that failed for good, by asset name.
    public func jobProblems(pack: String, group: String?) throws(CatalogError) -> [JobProblem] {
        try read { db in
            guard let version = try Self.currentVersion(pack: pack, group: group, db) else { return [] }
            return try Row.fetchAll(db, sql: """
                SELECT pva.kind, pva.name, j.problem, j.attempts FROM jobAsset ja JOIN job j ON j.id = ja.jobId
                JOIN packVersionAsset pva ON pva.packVersionId = ja.packVersionId AND pva.assetDigest = ja.assetDigest
                WHERE ja.packVersionId = ? AND j.state = 'failed' ORDER BY pva.kind, pva.name
                """, arguments: [version]).map { row in
                Self.jobProblem(kind: row["kind"], name: row["name"], problem: row["problem"], attempts: row["attempts"])
            }
        }
    }

    /// A failed job's problem as a pack shows it.
    package static func jobProblem(kind: String, name: String, problem: String?, attempts: Int) -> JobProblem {
        let decoded = problem.flatMap { try? JSONDecoder().decode(Problem.self, from: Data($0.utf8)) }
        return JobProblem(
            kind: AssetKind(rawValue: kind), asset: name, code: decoded?.code.rawValue ?? ProblemCode.storageFailure.rawValue,
            message: decoded?.message ?? "the pictures could not be made", attempts: attempts)
    }

    /// The whole queue's counts at `now`.
    public func jobCounts(now: Date) throws(CatalogError) -> JobQueueCounts {
        try read { db in
            var counts = JobQueueCounts(queued: 0, running: 0, done: 0, failed: 0, cancelled: 0)
            for row in try Row.fetchAll(db, sql: """
                SELECT state, leaseToken IS NOT NULL AND availableAt > ? AS leased, COUNT(*) AS n FROM job GROUP BY 1, 2
                """, arguments: [Self.milliseconds(now)]) {
                let n: Int = row["n"]
                switch JobState(rawValue: row["state"]) {
                case .pending: if row["leased"] as Bool { counts.running += n } else { counts.queued += n }
                case .done: counts.done += n
                case .failed: counts.failed += n
                case .cancelled: counts.cancelled += n
                case nil: break
                }
            }
            return counts
        }
    }

    /// The pictures still coming for each of these assets (roles of their pending jobs).
    static func pendingRoles(of assets: Set<Digest>, _ db: Database) throws -> [Digest: [String]] {
        var found: [Digest: [String]] = [:]
        let sorted = assets.sorted()
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let chunk = Array(sorted[start..<min(start + 500, sorted.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            var expects: [Digest: [String]] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT ja.assetDigest, j.expects FROM jobAsset ja JOIN job j ON j.id = ja.jobId
                WHERE ja.assetDigest IN (\(marks)) AND j.state = 'pending'
                """, arguments: StatementArguments(chunk)) {
                guard let digest = Digest.fromDatabaseValue(row["assetDigest"]) else { continue }
                expects[digest, default: []].append(row["expects"])
            }
            for (digest, texts) in expects { found[digest] = JobSQL.pendingRoles(texts) }
        }
        return found
    }
}
