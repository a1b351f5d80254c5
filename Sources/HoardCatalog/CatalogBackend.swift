import Foundation
import HoardCore

/// Where the catalog is kept: any value that answers these calls as ``SQLiteCatalog`` does. Two backends conform:
/// ``SQLiteCatalog`` (the default, one file in the data directory) and HoardPostgres's `PostgresCatalog` (one
/// database several replicas share). Tests/CatalogConformance runs one suite against both.
///
/// The contract, for every method:
/// - one call is one transaction: it is wholly written or not at all, and a read sees one committed state;
/// - calls are synchronous and block their thread for the database's round trip (as SQLite's reads of its file do);
///   they never suspend, so a caller holding an actor's state across a call sees no interleaving;
/// - failures are ``CatalogError``s whose message says what to do; `conflict`, `notFound` and `invalid` mean the same
///   thing on every backend.
public protocol CatalogBackend: Sendable {
    // MARK: Groups, tokens, invitations, quotas
    /// The group with this name, created if it does not exist.
    @discardableResult func ensureGroup(named name: String) throws(CatalogError) -> GroupRecord
    /// Every group, by name.
    func groups() throws(CatalogError) -> [GroupRecord]
    /// Creates a group; `conflict` if one of that name (or ``GroupName/key(_:)``) exists.
    @discardableResult func createGroup(named name: String, quotaBytes: Int64?) throws(CatalogError) -> GroupRecord
    /// Sets or clears a group's quota; false when there is no such group.
    @discardableResult func setQuota(_ bytes: Int64?, group name: String) throws(CatalogError) -> Bool
    /// Stores a token of a group, a device of the member of that name (who takes `role`) or of a new member.
    @discardableResult func addToken(
        group name: String, label: String, secretHash: String, role: TokenRole) throws(CatalogError) -> TokenRecord
    /// A group's tokens.
    func tokens(groupId: Int64) throws(CatalogError) -> [TokenRecord]
    /// A group's members and how many devices each has, oldest first.
    func members(groupId: Int64) throws(CatalogError) -> [MemberListing]
    /// Gives a group's member and all their devices `role`, deleting the invitations they may no longer make; false
    /// when the group has no such member.
    func setRole(_ role: TokenRole, member id: Int64, groupId: Int64) throws(CatalogError) -> Bool
    /// Deletes a group's member's devices and the invitations they made or that name them; false when the group has no
    /// such member.
    func removeMember(id: Int64, groupId: Int64) throws(CatalogError) -> Bool
    /// Deletes a group's token, and the invitations its member may no longer make; false when it has none of that id.
    func deleteToken(id: Int64, groupId: Int64) throws(CatalogError) -> Bool
    /// Stores an invitation; `conflict` when the member it creates has a name the group uses, `notFound` when the
    /// member it adds a device to is not the group's.
    func addInvite(_ invite: InviteRecord) throws(CatalogError)
    /// A group's invitations not expired at `now`, soonest to expire first.
    func invites(groupId: Int64, now: Date) throws(CatalogError) -> [InviteRecord]
    /// Cancels a group's invitation by its code's hash; false when the group has none such.
    func cancelInvite(codeHash: String, groupId: Int64) throws(CatalogError) -> Bool
    /// Redeems an invitation in one transaction (deleted, a token of its member or of a new one stored); nil when
    /// missing, expired or its inviter may no longer make it; `conflict` (the invitation kept) when the new member's
    /// name is one the group uses already.
    func redeemInvite(
        codeHash: String, label: String, secretHash: String, now: Date) throws(CatalogError) -> (token: TokenRecord, group: String)?
    /// The bytes a group's uploads and packs hold.
    func usage(groupId: Int64) throws(CatalogError) -> Int64
    /// The group of exactly this name (ASCII case aside).
    func group(named name: String) throws(CatalogError) -> GroupRecord?
    /// The group this name means (exact, else the same ``GroupName/key(_:)``).
    func group(matching name: String) throws(CatalogError) -> GroupRecord?
    /// A group's usage, quota and name.
    func quota(groupId: Int64) throws(CatalogError) -> (used: Int64, quota: Int64?, name: String)?

    // MARK: Access
    /// What the access index starts from.
    func accessBase() throws(CatalogError) -> AccessBase
    /// Who may read a blob.
    func blobOwners(_ digest: Digest) throws(CatalogError) -> BlobOwners?
    /// Who may read each of these blobs.
    func blobOwners(_ digests: [Digest]) throws(CatalogError) -> [Digest: BlobOwners]
    /// Access changes after `seq`, oldest first, and the oldest still kept.
    func accessChanges(after seq: Int64, limit: Int) throws(CatalogError) -> (changes: [AccessChange], oldest: Int64?)
    /// The newest access change's seq (0 when none).
    func lastAccessChange() throws(CatalogError) -> Int64
    /// Forgets access changes through `seq` written before `date`.
    func pruneAccessChanges(through seq: Int64, writtenBefore date: Date) throws(CatalogError)
    /// A pack's owner and visibility by id.
    func packAccess(id: Int64) throws(CatalogError) -> PackAccess?
    /// The principal a token's secret hash names: a member's token, else a session participant's.
    func principal(tokenHash: String) throws(CatalogError) -> Principal?
    /// Every blob a pack version references.
    func versionDigests(id: Int64) throws(CatalogError) -> [Digest]
    /// A pack's owning group and visibility.
    func packOwner(named name: String, group: String?) throws(CatalogError) -> (groupId: Int64, isPublic: Bool)?

    // MARK: Packs
    /// What the catalog knows of a pack before an import.
    func packState(named name: String, group: String?) throws(CatalogError) -> PackState?
    /// Records an import's rows in one transaction; `barrier` runs inside it, before the commit.
    func record(_ commit: ImportCommit, committingAfter barrier: () throws -> Void) throws(CatalogError) -> RecordOutcome
    /// Deletes a pack and its versions; false when there is none.
    @discardableResult func deletePack(named name: String, group: String?) throws(CatalogError) -> Bool
    /// Publishes or unpublishes a pack; false when there is none.
    @discardableResult func setPublic(_ isPublic: Bool, pack name: String, group: String?) throws(CatalogError) -> Bool
    /// Every pack with its current version.
    func packs() throws(CatalogError) -> [PackSummary]
    /// The current versions' assets, optionally of one pack or kind.
    func assets(pack: String?, kind: AssetKind?) throws(CatalogError) -> [AssetListing]
    /// A pack's documents.
    func documents(ofPack name: String, group: String?) throws(CatalogError) -> [PackDocument]
    /// One page of the asset listing.
    func assetPage(_ query: AssetQuery) throws(CatalogError) -> AssetPage
    /// The counts beside the asset listing.
    func assetFacets(_ query: AssetQuery) throws(CatalogError) -> AssetFacets

    // MARK: Blobs and garbage
    /// Records that a group uploaded a blob. Idempotent.
    func recordUpload(_ blob: BlobRecord, groupId: Int64) throws(CatalogError)
    /// A blob's row.
    func blob(_ digest: Digest) throws(CatalogError) -> BlobRecord?
    /// Every blob row.
    func blobs() throws(CatalogError) -> [BlobRecord]
    /// Digests rows reference that have no blob row.
    func danglingReferences() throws(CatalogError) -> [Digest]
    /// Deletes the rows of blobs nothing references; gives their digests.
    func collectGarbage() throws(CatalogError) -> [Digest]

    // MARK: Member space
    /// A member's refs.
    func refs(group groupId: Int64, member: String) throws(CatalogError) -> [RefRecord]
    /// One ref.
    func ref(group groupId: Int64, member: String, name: String) throws(CatalogError) -> RefRecord?
    /// Points a ref at `digest` if it is as `expected`.
    func moveRef(
        group groupId: Int64, member: String, name: String, to digest: Digest, expected: RefExpectation
    ) throws(CatalogError) -> RefUpdate
    /// Deletes a ref if it is as `expected`.
    func deleteRef(group groupId: Int64, member: String, name: String, expected: RefExpectation) throws(CatalogError) -> RefUpdate?
    /// Records a private upload (and its blob, and its session's reach).
    func recordPrivateUpload(_ blob: BlobRecord, _ upload: PrivateUploadRecord, session: String?) throws(CatalogError)
    /// A blob's private uploads and their scopes.
    func privateUpload(_ digest: Digest) throws(CatalogError) -> (blob: BlobRecord, scopes: [String])?
    /// A private upload in one scope.
    func privateUpload(_ digest: Digest, scope: UploadScope) throws(CatalogError) -> PrivateUploadRecord?
    /// A principal's uploads, a page at a time.
    func uploads(by principal: Principal, offset: Int, limit: Int) throws(CatalogError) -> (page: [UploadListing], total: Int)
    /// Forgets a private upload.
    func forgetUpload(_ digest: Digest, scope: UploadScope) throws(CatalogError) -> ForgottenUpload?
    /// Stores a share link.
    func createShare(_ share: ShareRecord) throws(CatalogError)
    /// A share link.
    func share(id: String) throws(CatalogError) -> ShareRecord?
    /// A member's share links.
    func shares(group groupId: Int64, member: String) throws(CatalogError) -> [ShareRecord]
    /// Deletes a share link.
    @discardableResult func deleteShare(id: String) throws(CatalogError) -> Bool

    // MARK: Sessions
    /// Which references a group may use, and what each names.
    func resolve(_ references: Set<Digest>, group: Int64?) throws(CatalogError) -> ResolvedReferences
    /// Stores a session with its map.
    func createSession(_ session: SessionRecord, mapBlob: BlobRecord, reachable: Set<Digest>) throws(CatalogError)
    /// Replaces a session's map.
    func setMap(session id: String, mapBlob: BlobRecord, reachable: Set<Digest>, baseSeq: Int64) throws(CatalogError)
    /// Adds blobs a session's table may reach.
    func addReachable(session id: String, _ digests: Set<Digest>) throws(CatalogError)
    /// A session by id.
    func session(id: String) throws(CatalogError) -> SessionRecord?
    /// Every session's id.
    func sessionIds() throws(CatalogError) -> [String]
    /// A session by join code.
    func session(code: String) throws(CatalogError) -> SessionRecord?
    /// A group's sessions, optionally of one host.
    func sessions(groupId: Int64, host: String?) throws(CatalogError) -> [SessionRecord]
    /// A session's participants.
    func participants(session id: String) throws(CatalogError) -> [ParticipantRecord]
    /// How many participants a session has.
    func participantCount(session id: String) throws(CatalogError) -> Int
    /// Stores a participant.
    func addParticipant(_ participant: ParticipantRecord) throws(CatalogError)
    /// Removes a participant; false when there was none.
    func removeParticipant(_ id: String, session: String) throws(CatalogError) -> Bool
    /// Sets a session's join code; false when there is no such session.
    func setCode(_ code: String, session id: String) throws(CatalogError) -> Bool
    /// Logs a session's event at `seq`, which MUST be the session's last logged seq + 1: `conflict` otherwise
    /// (another replica logged that seq first), and nothing is written. `grab` is what the event does to the session's
    /// grabs, written in the same transaction; a `rolled` event (`isRoll`) is also kept in the session's dice rolls.
    func appendEvent(session id: String, seq: Int64, body: String, views: String?, grab: GrabChange?, isRoll: Bool) throws(CatalogError)
    /// Who holds each grabbed entity of a session (entity → participant).
    func grabs(session id: String) throws(CatalogError) -> [String: String]
    /// The session's dice seal, written with `proposed` when it has none: the first seal written wins, on every
    /// replica. The seal outlives the session (an audit follows the game) and goes with its group.
    func diceSeal(session id: String, groupId: Int64, proposed: DiceSeed) throws(CatalogError) -> DiceSealRecord
    /// A session's dice seal, also after the session ended; nil when it never had one.
    func diceSeal(session id: String) throws(CatalogError) -> DiceSealRecord?
    /// Marks a session's seal revealed; returns it, nil when there is none. Idempotent.
    func revealDice(session id: String) throws(CatalogError) -> DiceSealRecord?
    /// The bodies of a session's `rolled` events in sequence order, also after the session ended.
    func diceRolls(session id: String) throws(CatalogError) -> [String]
    /// The bodies of the `rolled` events of a group's sessions whose seed is revealed, by session and sequence.
    func diceRolls(group groupId: Int64) throws(CatalogError) -> [String]
    /// Extends every lease `replica` holds (grabs and presence) to `until`; returns how many.
    @discardableResult func renewLeases(replica: String, until: Date) throws(CatalogError) -> Int
    /// The grabs whose lease ended before `date` (their replica stopped renewing them), oldest first, at most `limit`.
    func expiredGrabs(before date: Date, limit: Int) throws(CatalogError) -> [HeldGrab]
    /// Records that `participant` has a socket on `replica`, leased until `until`.
    func holdPresence(_ presence: Presence, until: Date) throws(CatalogError)
    /// Forgets that `participant` has a socket on `replica`.
    func dropPresence(session id: String, participant: String, replica: String) throws(CatalogError)
    /// The participants with a socket on any replica whose lease runs past `date`.
    func present(session id: String, at date: Date) throws(CatalogError) -> Set<String>
    /// Deletes and returns the presence whose lease ended before `date`, at most `limit`.
    func takeExpiredPresence(before date: Date, limit: Int) throws(CatalogError) -> [Presence]
    /// A session's logged events after `seq`.
    func events(session id: String, after seq: Int64) throws(CatalogError) -> [LoggedEvent]
    /// The bytes of a session's events after `seq`.
    func eventBytes(session id: String, after seq: Int64) throws(CatalogError) -> Int
    /// Folds a session's log into a new map.
    @discardableResult func fold(session id: String, mapBlob: BlobRecord, baseSeq: Int64, keeping: Int64) throws(CatalogError) -> Bool
    /// The art each of these descriptors names.
    func art(of digests: Set<Digest>) throws(CatalogError) -> [Digest: Set<Digest>]
    /// A session's participants' uploads.
    func participantUploads(session id: String) throws(CatalogError) -> [(digest: Digest, participant: String)]
    /// Saves a map under a name.
    func saveMap(group groupId: Int64, name: String, blob: BlobRecord, reachable: Set<Digest>) throws(CatalogError) -> SavedMapRecord
    /// A group's saved maps.
    func savedMaps(group groupId: Int64) throws(CatalogError) -> [SavedMapRecord]
    /// Deletes a saved map.
    @discardableResult func deleteMap(group groupId: Int64, name: String) throws(CatalogError) -> Bool
    /// Deletes a session; false when there was none.
    @discardableResult func deleteSession(id: String) throws(CatalogError) -> Bool

    // MARK: Rendition jobs (``JobSpec``; queued by ``record(_:committingAfter:)``)
    /// Takes the next job free at `now` for `worker`, leased until `until` under `token`; nil when there is none.
    /// On PostgreSQL a job row another transaction is taking is skipped (`FOR UPDATE SKIP LOCKED`): two replicas never
    /// take the same job while its lease runs.
    func leaseJob(worker: String, token: String, now: Date, until: Date, scope: JobScope) throws(CatalogError) -> JobLease?
    /// Extends the leases `worker` holds to `until`; returns how many.
    @discardableResult func renewJobLeases(worker: String, until: Date) throws(CatalogError) -> Int
    /// Records a leased job's pictures and gives them to its assets; nil (nothing written) when the lease was lost,
    /// else the assets that got them.
    func completeJob(_ lease: JobLease, outputs: [JobOutput], now: Date) throws(CatalogError) -> [Digest]?
    /// Gives a leased job back, to be retried from `retryAt`, or failed for good (nil); false when the lease was lost.
    @discardableResult func failJob(_ lease: JobLease, problem: Problem, retryAt: Date?, now: Date) throws(CatalogError) -> Bool
    /// Cancels the pending jobs of a pack's current version; returns how many.
    func cancelJobs(pack: String, group: String?) throws(CatalogError) -> Int
    /// Queues the failed and cancelled jobs of a pack's current version again; returns how many.
    func retryJobs(pack: String, group: String?, now: Date) throws(CatalogError) -> Int
    /// The failed jobs of a pack's current version, by asset.
    func jobProblems(pack: String, group: String?) throws(CatalogError) -> [JobProblem]
    /// The whole queue's counts.
    func jobCounts(now: Date) throws(CatalogError) -> JobQueueCounts

    // MARK: The whole catalog
    /// Whether the catalog has one writer at a time (SQLite): a write transaction that waits holds every other writer,
    /// so writers keep theirs short (an import starts its rows once its publish is done). False when writers only
    /// wait for the rows they touch (PostgreSQL).
    var hasOneWriter: Bool { get }
    /// Writes a consistent copy of the whole catalog to a new SQLite file at `path`.
    func backup(to path: String) throws(CatalogError)
    /// Takes the lock that lets one garbage collection run at a time across every process sharing the catalog, or
    /// throws `conflict` when another holds it; nil when the data directory's own lock is enough (SQLite: every
    /// process sharing the file shares the folder). Writers do not take it: a blob not yet recorded is younger than
    /// the collection's grace period.
    func collectionLock() throws(CatalogError) -> CatalogLock?
    /// The events other processes log in sessions, for a catalog several replicas share; nil when this process is the
    /// catalog's only writer of session events (SQLite).
    var sessionEventFeed: (any SessionEventFeed)? { get }
    /// Wake-ups when other processes append to the access change log, for a catalog several replicas share; nil when
    /// there are none (SQLite: polling the log is enough).
    var accessChangeFeed: (any AccessChangeFeed)? { get }
}

/// Says when other processes appended to the access change log (``CatalogBackend/accessChanges(after:limit:)``), so a
/// replica reads it at once rather than at its next poll. The log is the truth; a call only says "read it". Calls
/// come while the catalog's ``CatalogBackend/sessionEventFeed`` runs (one connection carries both).
public protocol AccessChangeFeed: Sendable {
    /// Calls `handler` after each commit that appended to the log, and each time the feed (re)connects (for what was
    /// appended while it was away). Calls may come in bursts and must return at once. Replaces an earlier handler.
    func onAccessChange(_ handler: @escaping @Sendable () -> Void) async
}

/// Session events other replicas log, as they commit: how replicas of one catalog keep their live tables the same.
/// The log is the truth; the feed only says what to read. Each followed session's events come in order, each once,
/// including after the feed reconnects (it reads from its last position again).
public protocol SessionEventFeed: Sendable {
    /// Starts delivering a session's events after `seq`.
    func follow(session: String, after seq: Int64) async
    /// Stops delivering a session's events.
    func stopFollowing(session: String) async
    /// Delivers events until the calling task is cancelled, reconnecting after failures.
    func run(deliver: @escaping @Sendable (_ session: String, _ event: LoggedEvent) async -> Void) async
}

/// The catalog, whichever backend keeps it.
public typealias Catalog = any CatalogBackend

/// A lock held until ``release()`` (or until its process ends).
public protocol CatalogLock: Sendable {
    /// Lets another process take the lock.
    func release()
}

/// The usual defaults of the contract's calls.
extension CatalogBackend {
    /// The data directory's lock is enough.
    public func collectionLock() throws(CatalogError) -> CatalogLock? { nil }
    /// Writers wait only for the rows they touch.
    public var hasOneWriter: Bool { false }
    /// No other process logs session events.
    public var sessionEventFeed: (any SessionEventFeed)? { nil }
    /// No other process changes access.
    public var accessChangeFeed: (any AccessChangeFeed)? { nil }
    /// Creates a group without a quota.
    @discardableResult public func createGroup(named name: String) throws(CatalogError) -> GroupRecord {
        try createGroup(named: name, quotaBytes: nil)
    }
    /// Redeems an invitation now.
    public func redeemInvite(
        codeHash: String, label: String, secretHash: String) throws(CatalogError) -> (token: TokenRecord, group: String)? {
        try redeemInvite(codeHash: codeHash, label: label, secretHash: secretHash, now: Date())
    }
    /// Logs an event that does not change grabs.
    public func appendEvent(session id: String, seq: Int64, body: String, views: String?) throws(CatalogError) {
        try appendEvent(session: id, seq: seq, body: body, views: views, grab: nil, isRoll: false)
    }
    /// Logs an event that is not a roll.
    public func appendEvent(session id: String, seq: Int64, body: String, views: String?, grab: GrabChange?) throws(CatalogError) {
        try appendEvent(session: id, seq: seq, body: body, views: views, grab: grab, isRoll: false)
    }
    /// Up to 10,000 access changes after `seq`.
    public func accessChanges(after seq: Int64) throws(CatalogError) -> (changes: [AccessChange], oldest: Int64?) {
        try accessChanges(after: seq, limit: 10_000)
    }
    /// The one pack of that name in any group.
    public func packOwner(named name: String) throws(CatalogError) -> (groupId: Int64, isPublic: Bool)? {
        try packOwner(named: name, group: nil)
    }
    /// The one pack of that name in any group.
    public func packState(named name: String) throws(CatalogError) -> PackState? { try packState(named: name, group: nil) }
    /// Records an import's rows, with nothing to wait for before the commit.
    public func record(_ commit: ImportCommit) throws(CatalogError) -> RecordOutcome { try record(commit, committingAfter: {}) }
    /// Deletes the one pack of that name in any group.
    @discardableResult public func deletePack(named name: String) throws(CatalogError) -> Bool {
        try deletePack(named: name, group: nil)
    }
    /// Publishes or unpublishes the one pack of that name in any group.
    @discardableResult public func setPublic(_ isPublic: Bool, pack name: String) throws(CatalogError) -> Bool {
        try setPublic(isPublic, pack: name, group: nil)
    }
    /// Every current asset.
    public func assets() throws(CatalogError) -> [AssetListing] { try assets(pack: nil, kind: nil) }
    /// The current assets of one pack.
    public func assets(pack: String?) throws(CatalogError) -> [AssetListing] { try assets(pack: pack, kind: nil) }
    /// The current assets of one kind.
    public func assets(kind: AssetKind?) throws(CatalogError) -> [AssetListing] { try assets(pack: nil, kind: kind) }
    /// The documents of the one pack of that name in any group.
    public func documents(ofPack name: String) throws(CatalogError) -> [PackDocument] { try documents(ofPack: name, group: nil) }
    /// Which references any group's packs resolve.
    public func resolve(_ references: Set<Digest>) throws(CatalogError) -> ResolvedReferences { try resolve(references, group: nil) }
    /// Logs an event every participant is sent as is.
    public func appendEvent(session id: String, seq: Int64, body: String) throws(CatalogError) {
        try appendEvent(session: id, seq: seq, body: body, views: nil)
    }
    /// Folds a session's whole log into a new map.
    @discardableResult public func fold(session id: String, mapBlob: BlobRecord, baseSeq: Int64) throws(CatalogError) -> Bool {
        try fold(session: id, mapBlob: mapBlob, baseSeq: baseSeq, keeping: 0)
    }
}
