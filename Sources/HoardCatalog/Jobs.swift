import Foundation
import HoardCore

// The rendition queue (migration `v18-jobs`): the pictures an import leaves to be made later (generated LODs,
// previews, thumbnails), one job per source picture and recipe, leased by workers in any process sharing the catalog.

/// One job an import asks for: render `source` by `recipe` for some of its assets. Jobs are keyed by (source, recipe):
/// a job that exists is reused (the same picture in two packs or two groups is rendered once), and when it is done its
/// pictures are given to the new assets in the import's own transaction.
public struct JobSpec: Sendable, Hashable {
    /// The picture the job reads (an asset's largest variant).
    public var source: Digest
    /// What is made of it (the generators' recipes, joined): equal recipes of one source make the same pictures.
    public var recipe: String
    /// What the worker needs to run it (HoardRepository's `RenditionJobRequest`, canonical JSON).
    public var request: String
    /// The roles of the pictures expected (`@1x`, `preview`, `thumbnail`; `renditions` when a generator cannot say).
    public var expects: [String]
    /// Higher runs first (``JobPriority``).
    public var priority: Int
    /// The assets of the importing version it renders (usually one).
    public var assets: [Digest]

    /// A job of an import.
    public init(source: Digest, recipe: String, request: String, expects: [String], priority: Int, assets: [Digest]) {
        self.source = source
        self.recipe = recipe
        self.request = request
        self.expects = expects
        self.priority = priority
        self.assets = assets
    }
}

/// A job's key: its source and recipe.
package struct JobKey: Hashable, Sendable {
    package var source: String
    package var recipe: String

    package init(source: String, recipe: String) {
        self.source = source
        self.recipe = recipe
    }

    /// The jobs of an unchanged import that its version does not have yet (made by a generator turned on since).
    package static func missing(from jobs: [JobSpec], linked: Set<JobKey>) -> [JobSpec] {
        jobs.filter { !linked.contains(JobKey(source: $0.source.description, recipe: $0.recipe)) }
    }
}

/// The links between jobs and a version's assets made by one queueing, by the state of their job: what it adds to the
/// version's counters (`packVersionJobs`, one row per link).
package struct JobTally: Sendable {
    package private(set) var total: Int64 = 0
    package private(set) var done: Int64 = 0
    package private(set) var failed: Int64 = 0
    package private(set) var cancelled: Int64 = 0

    package init() {}

    package mutating func count(_ state: JobState) {
        total += 1
        switch state {
        case .done: done += 1
        case .failed: failed += 1
        case .cancelled: cancelled += 1
        case .pending: break
        }
    }
}

/// How soon a job runs: higher first, then the newest import (batch) first, then the order the import listed its
/// assets in (kind, then name: the order the page lists them). A new upload's pictures so go before a backlog (the
/// rest of a large import, jobs retried), and each import's first screen before the rest of it.
public enum JobPriority {
    /// The first ``firstScreen`` assets of an import, in listing order.
    public static let firstScreen = 2
    /// The rest of an import.
    public static let imported = 1
    /// Jobs asked for again (`hoard jobs retry`).
    public static let backlog = 0
    /// How many of an import's assets count as its first screen: the page shows about 40 thumbnails a screen.
    public static let firstScreenAssets = 64
}

/// A job's state. `pending` jobs are queued or leased (a lease that runs out makes the job available again).
public enum JobState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Queued, or being made under a lease.
    case pending
    /// Made: its pictures are the assets' rows (and ``JobOutput`` rows, for assets imported later).
    case done
    /// Failed for good: the generator refused the picture, or every attempt failed. `hoard jobs retry` queues it again.
    case failed
    /// Cancelled (`hoard jobs cancel`): a later import of the same picture, or `hoard jobs retry`, queues it again.
    case cancelled
}

/// Which jobs a worker may take.
public enum JobScope: Sendable, Hashable {
    /// Any job.
    case any
    /// Only jobs of the pack versions with these manifests (what `hoard import` makes before it returns).
    case manifests([Digest])
}

/// A job a worker holds until ``until``: only the holder of ``token`` may finish it, and only while it is pending.
public struct JobLease: Sendable, Hashable {
    /// The job's id.
    public var id: Int64
    /// The picture it reads.
    public var source: Digest
    /// Its recipe.
    public var recipe: String
    /// What the worker needs to run it.
    public var request: String
    /// How many times it was taken, this time included.
    public var attempts: Int
    /// Who holds it.
    public var worker: String
    /// The lease's own secret: a job taken again after its lease ran out has another.
    public var token: String

    /// A lease.
    public init(id: Int64, source: Digest, recipe: String, request: String, attempts: Int, worker: String, token: String) {
        self.id = id
        self.source = source
        self.recipe = recipe
        self.request = request
        self.attempts = attempts
        self.worker = worker
        self.token = token
    }
}

/// One picture a job made, by role: a generated LOD (`@1x`, `@2x`, `@4x`) or a rendition (`preview`, `thumbnail`).
public struct JobOutput: Sendable, Hashable {
    /// `@Nx`, `preview` or `thumbnail`.
    public var role: String
    /// Its blob (already published).
    public var blob: BlobRecord
    /// Its pixel size.
    public var width: Int
    /// Its pixel size.
    public var height: Int

    /// An output.
    public init(role: String, blob: BlobRecord, width: Int, height: Int) {
        self.role = role
        self.blob = blob
        self.width = width
        self.height = height
    }

    /// The LOD scale of a generated variant (`@2x` → 2); nil for a preview or thumbnail.
    public var scale: Int? {
        guard role.hasPrefix("@"), role.hasSuffix("x") else { return nil }
        return Int(role.dropFirst().dropLast())
    }
}

/// How far a pack version's pictures are: counted per asset (an asset whose job another pack shares counts here too).
public struct RenditionProgress: Sendable, Hashable, Codable {
    /// Assets whose pictures are made by a job.
    public var total: Int
    /// Of them, made.
    public var done: Int
    /// Failed for good (``JobProblem``s say why).
    public var failed: Int
    /// Cancelled.
    public var cancelled: Int
    /// Still to be made.
    public var pending: Int { max(0, total - done - failed - cancelled) }

    /// Counts.
    public init(total: Int, done: Int, failed: Int, cancelled: Int) {
        self.total = total
        self.done = done
        self.failed = failed
        self.cancelled = cancelled
    }

    enum CodingKeys: String, CodingKey { case total, done, failed, cancelled, pending }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        total = try container.decode(Int.self, forKey: .total)
        done = try container.decode(Int.self, forKey: .done)
        failed = try container.decode(Int.self, forKey: .failed)
        cancelled = try container.decode(Int.self, forKey: .cancelled)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(total, forKey: .total)
        try container.encode(done, forKey: .done)
        try container.encode(failed, forKey: .failed)
        try container.encode(cancelled, forKey: .cancelled)
        try container.encode(pending, forKey: .pending)
    }
}

/// A job that failed for good, as a pack shows it: the asset, and the problem (its code and message).
public struct JobProblem: Sendable, Hashable, Codable {
    /// The asset's kind.
    public var kind: AssetKind
    /// The asset's name in the pack.
    public var asset: String
    /// The problem: `UNREADABLE_IMAGE`, `PLUGIN_FAILURE`, `STORAGE_FAILURE`…
    public var code: String
    /// What went wrong and what to do.
    public var message: String
    /// How many times the job was taken.
    public var attempts: Int

    /// A problem.
    public init(kind: AssetKind, asset: String, code: String, message: String, attempts: Int) {
        self.kind = kind
        self.asset = asset
        self.code = code
        self.message = message
        self.attempts = attempts
    }
}

/// The whole queue at a glance (`hoard jobs`, metrics).
public struct JobQueueCounts: Sendable, Hashable, Codable {
    /// Pending jobs not leased (or whose lease ran out).
    public var queued: Int
    /// Pending jobs a worker holds.
    public var running: Int
    /// Done.
    public var done: Int
    /// Failed for good.
    public var failed: Int
    /// Cancelled.
    public var cancelled: Int

    /// Counts.
    public init(queued: Int, running: Int, done: Int, failed: Int, cancelled: Int) {
        self.queued = queued
        self.running = running
        self.done = done
        self.failed = failed
        self.cancelled = cancelled
    }
}

/// The SQL both backends share for the queue.
package enum JobSQL {
    /// The `packVersionJobs` counter assignments that move `n` links of a job from `old` to `new` (empty when neither is
    /// counted: pending is what is left of the total).
    package static func counterChange(from old: JobState, to new: JobState, count n: String) -> [String] {
        var parts: [String] = []
        if old != .pending { parts.append("\(old.rawValue) = \(old.rawValue) - \(n)") }
        if new != .pending { parts.append("\(new.rawValue) = \(new.rawValue) + \(n)") }
        return parts
    }

    /// The roles still coming, from the `expects` columns of an asset's pending jobs (space-separated).
    package static func pendingRoles(_ expects: [String]) -> [String] {
        var roles: [String] = []
        for text in expects {
            let found = text.split(separator: " ").map(String.init)
            for role in found.isEmpty ? ["renditions"] : found where !roles.contains(role) { roles.append(role) }
        }
        return roles
    }
}
