import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle

/// Who may read which blob and which token is whose, held in memory so a blob request costs no database query.
///
/// What it holds: every pack's owner and visibility, every token, what each session reaches (all loaded at
/// start-up: they grow with packs, tokens and sessions, not with assets), and a bounded cache of blobs' owners
/// (the packs that reference each blob and the groups that uploaded it), filled on first use by a few indexed
/// lookups. A blob's readers follow from its owners and the pack table, so publishing a pack changes one entry.
///
/// Updates: every catalog write that changes access appends a row to the change log (`accessChange`, written by
/// triggers in the writer's own transaction, whichever process writes). ``catchUp()`` applies the rows after the
/// last one applied, in sequence (commit) order, on the index's own thread, one catch-up at a time: a pack row is
/// read again, a new version's blobs and a changed blob are evicted from the cache, a token is read again. A writer
/// in this server calls it after its write and before answering; ``AccessRefreshService`` calls it for other processes'
/// writes, on the catalog's notices (PostgreSQL) and every 250 ms (1 s with notices). When `catchUp()` returns, every
/// change committed before it was called is applied.
/// A cache fill that raced with an eviction is not kept (the eviction's generation changed).
///
/// Participants and what sessions reach are also added in place by the server that writes them
/// (``add(_:tokenHash:)``, ``addReachable(session:_:blobs:)``), so its own requests need no catch-up; other servers
/// sharing the catalog learn them from the log, and from the log also a participant's removal and a session's end,
/// which they pass on to their live sockets (``onSessionChanges(_:)``). A full rebuild happens at start-up, when the
/// log was pruned past what this index applied, or on a `reset` row; ``selfCheck()`` compares the index with the
/// catalog in the background.
public final class AccessIndex: Sendable {
    private let catalog: Catalog
    /// The index's own thread: catch-ups and self-checks never run on Swift-concurrency threads.
    private let thread: NIOThreadPool
    /// One catch-up or self-check at a time, so changes apply in log order.
    private let updating = NIOLock()
    /// Told of session changes the change log brings (``onSessionChanges(_:)``).
    private let sessionChangeHandler = NIOLockedValueBox<(@Sendable ([SessionChange]) -> Void)?>(nil)
    /// Told of member tokens the change log (or a rebuild) shows deleted (``onTokensRevoked(_:)``).
    private let revokedHandler = NIOLockedValueBox<(@Sendable (_ revoked: [String], _ roleChanged: [String]) -> Void)?>(nil)
    /// When a token the index did not hold last made it read the change log.
    private let lastMissCatchUp = NIOLockedValueBox(NIODeadline.uptimeNanoseconds(0))

    private struct State {
        var packs: [Int64: PackAccess]
        var principals: [String: Principal]
        var sessions: [String: Set<Digest>]
        /// Tokens already hashed and looked up, so a request costs no SHA-256. Emptied when a token changes.
        var knownTokens: [String: Principal] = [:]
        var blobs: OwnerCache
        /// The last change-log row applied.
        var applied: Int64
        /// Bumped by every eviction: a cache fill read before it is not kept.
        var generation: UInt64 = 0
        /// Media types seen, so cached entries share one string's storage per type.
        var mediaTypes: Set<String> = []

        /// The owners with their media type's storage shared with earlier entries.
        mutating func interned(_ owners: BlobOwners) -> BlobOwners {
            var owners = owners
            if let known = mediaTypes.firstIndex(of: owners.mediaType) {
                owners.mediaType = mediaTypes[known]
            } else if mediaTypes.count < 64 {
                mediaTypes.insert(owners.mediaType)
            }
            return owners
        }
    }

    private let state: NIOLockedValueBox<State>

    /// Loads packs, tokens and sessions (not blobs) from a catalog. `cacheEntries` bounds the blob-owner cache
    /// (measured: 234 bytes of RSS an entry).
    public init(catalog: Catalog, cacheEntries: Int = 262_144) throws {
        self.catalog = catalog
        let base = try catalog.accessBase()
        state = NIOLockedValueBox(State(
            packs: base.packs, principals: base.principals, sessions: base.sessions, blobs: OwnerCache(capacity: cacheEntries),
            applied: base.lastChange))
        thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
    }

    deinit {
        thread.shutdownGracefully { _ in }
    }

    /// Whether a session's participants may reach a blob at all (before what their view of the table shows them).
    public func isReachable(_ digest: Digest, session: String) -> Bool {
        state.withLockedValue { $0.sessions[session]?.contains(digest) == true }
    }

    /// Takes blobs out of what a session's participants may read (already deleted from the catalog): a forgotten
    /// upload stops being served to them at once.
    public func removeReachable(session: String, _ digests: Set<Digest>) {
        state.withLockedValue { state in _ = state.sessions[session]?.subtract(digests) }
    }

    /// Forgets a session that was deleted from the catalog: its participants' tokens are unknown (401) and nothing is
    /// readable through it from now on.
    public func endSession(_ id: String) {
        state.withLockedValue { state in
            state.sessions[id] = nil
            state.principals = state.principals.filter { $0.value.sessionId != id }
            state.knownTokens = state.knownTokens.filter { $0.value.sessionId != id }
        }
        setVisibleArt(session: id, nil)
    }

    /// Forgets a participant removed from the catalog: their token is unknown (401) from now on.
    public func removeParticipant(_ id: String) {
        state.withLockedValue { state in
            state.principals = state.principals.filter { $0.value.participantId != id }
            state.knownTokens = state.knownTokens.filter { $0.value.participantId != id }
        }
    }

    /// Per session: the blobs its participants may fetch, each with who (``SessionHub`` keeps it from their views of
    /// the table). A session absent here is not loaded yet: its participants fetch nothing until it is.
    private let visibleArt = NIOLockedValueBox<[String: SessionArt]>([:])

    /// What a session's participants may fetch: art by audience, and art some see only until a time (a glimpse).
    struct SessionArt {
        var audiences: [Digest: Audience]
        var until: [Digest: [String: Date]]

        /// Whether `participant` may fetch `digest` at `now`: a timed entry counts until its end on the server's
        /// clock, whether or not a timer has ended it on the table yet.
        func shows(_ digest: Digest, to participant: String, at now: Date) -> Bool {
            audiences[digest]?.contains(participant) == true || (until[digest]?[participant].map { now < $0 } ?? false)
        }
    }

    /// Sets what a session's participants may fetch (nil: the session ended); `until` adds art a participant may
    /// fetch until a time (a glimpse's end).
    public func setVisibleArt(session: String, _ digests: [Digest: Audience]?, until: [Digest: [String: Date]] = [:]) {
        visibleArt.withLockedValue { $0[session] = digests.map { SessionArt(audiences: $0, until: until) } }
    }

    /// Applies every change logged since the last one applied, on the index's thread. Returns whether there was any.
    @discardableResult
    public func catchUp() async throws -> Bool {
        try await thread.runIfActive { try self.catchUpBlocking() }
    }

    /// ``catchUp()`` on the calling thread (which waits for a catch-up in progress).
    @discardableResult
    func catchUpBlocking() throws -> Bool {
        try updating.withLock {
            var didApply = false
            while true {
                let applied = state.withLockedValue { $0.applied }
                let (changes, oldest) = try catalog.accessChanges(after: applied)
                if let oldest, oldest > applied + 1 {
                    try rebuild()
                    return true
                }
                guard let last = changes.last else { return didApply }
                didApply = true
                try apply(changes, through: last.seq)
            }
        }
    }

    /// Applies log rows: reads what they name as the catalog has it now (at least as new as the rows), then swaps it
    /// in under the lock.
    private func apply(_ changes: [AccessChange], through seq: Int64) throws {
        var packs: [Int64: PackAccess?] = [:]
        var tokens: [String: Principal?] = [:]
        var evicted: [Digest] = []
        var reached: [String: Set<Digest>] = [:]
        var endedSessions: [String] = []
        var artChanged: Set<Digest> = []
        for change in changes {
            switch change.kind {
            case .pack:
                guard let id = Int64(change.key), packs[id] == nil else { continue }
                packs[id] = .some(try catalog.packAccess(id: id))
            case .version:
                guard let id = Int64(change.key) else { continue }
                evicted += try catalog.versionDigests(id: id)
            case .blob:
                if let digest = Digest(change.key) { evicted.append(digest) }
            case .token, .participant:
                guard tokens[change.key] == nil else { continue }
                tokens[change.key] = .some(try catalog.principal(tokenHash: change.key))
            case .reach:
                let parts = change.key.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2, let digest = Digest(parts[1]) else { continue }
                reached[parts[0], default: []].insert(digest)
            case .session:
                endedSessions.append(change.key)
            case .art:
                if let digest = Digest(change.key) { artChanged.insert(digest) }
            case .reset:
                try rebuild()
                return
            }
        }
        var changes: [SessionChange] = endedSessions.map { .ended($0) } + reached.keys.map { .reaches($0) }
        if !artChanged.isEmpty { changes.append(.artChanged(artChanged)) }
        var revoked: [String] = []
        var roleChanged: [String] = []
        state.withLockedValue { state in
            for (id, pack) in packs { state.packs[id] = pack }
            for (hash, principal) in tokens {
                if principal == nil, let gone = state.principals[hash], let participant = gone.participantId, let session = gone.sessionId {
                    changes.append(.removed(participant, session: session))
                }
                if let old = state.principals[hash], old.isMember, principal?.role != old.role {
                    if principal == nil { revoked.append(hash) } else { roleChanged.append(hash) }
                }
                state.principals[hash] = principal
            }
            for (session, digests) in reached { state.sessions[session, default: []].formUnion(digests) }
            for session in endedSessions {
                state.sessions[session] = nil
                state.principals = state.principals.filter { $0.value.sessionId != session }
            }
            if !endedSessions.isEmpty { state.knownTokens.removeAll(keepingCapacity: true) }
            if !tokens.isEmpty { state.knownTokens.removeAll(keepingCapacity: true) }
            for digest in evicted { state.blobs.remove(digest) }
            state.generation &+= 1
            state.applied = max(state.applied, seq)
        }
        for session in endedSessions { setVisibleArt(session: session, nil) }
        if !changes.isEmpty, let handler = sessionChangeHandler.withLockedValue({ $0 }) { handler(changes) }
        if !revoked.isEmpty || !roleChanged.isEmpty, let handler = revokedHandler.withLockedValue({ $0 }) { handler(revoked, roleChanged) }
    }

    /// Tells `handler` the hashes of member tokens deleted from the catalog (revoked, through any server) or whose role
    /// changed (their member demoted or promoted), before the catch-up that applied it returns: their live sockets close
    /// and nothing more they send is applied (a socket opened again acts with the new role).
    public func onTokensRevoked(_ handler: @escaping @Sendable (_ revoked: [String], _ roleChanged: [String]) -> Void) {
        revokedHandler.withLockedValue { $0 = handler }
    }

    /// A change to a session's participants or reach, as the change log tells it (possibly made through another server).
    public enum SessionChange: Sendable, Hashable {
        /// A participant was removed from a session.
        case removed(String, session: String)
        /// A session was deleted.
        case ended(String)
        /// A session reaches more blobs (it was created, or its table shows new art).
        case reaches(String)
        /// These assets got generated pictures (a rendition job finished): sessions that show them let their
        /// participants fetch those too.
        case artChanged(Set<Digest>)
    }

    /// Tells `handler` of every session change the change log brings, so this server's live sockets and the art it
    /// lets participants fetch follow changes made through other servers.
    public func onSessionChanges(_ handler: @escaping @Sendable ([SessionChange]) -> Void) {
        sessionChangeHandler.withLockedValue { $0 = handler }
    }

    /// Reloads packs, tokens, participants and session reach as the catalog has them (since `v12-replica-access` the
    /// change log covers all four, so whatever was added in place is there too) and empties the blob cache.
    private func rebuild() throws {
        let base = try catalog.accessBase()
        let (revoked, roleChanged) = state.withLockedValue { state in
            let changed = state.principals.filter { $0.value.isMember && base.principals[$0.key]?.role != $0.value.role }
            let revoked = changed.keys.filter { base.principals[$0] == nil }
            let roleChanged = changed.keys.filter { base.principals[$0] != nil }
            state.packs = base.packs
            state.principals = base.principals
            state.sessions = base.sessions
            state.knownTokens.removeAll()
            state.blobs.removeAll()
            state.generation &+= 1
            state.applied = base.lastChange
            return (revoked, roleChanged)
        }
        if !revoked.isEmpty || !roleChanged.isEmpty, let handler = revokedHandler.withLockedValue({ $0 }) { handler(revoked, roleChanged) }
    }

    /// Compares the index with the catalog: packs, member tokens, and up to `sample` cached blob entries; corrects
    /// what differs and returns how many entries did (0 is the expected answer: a difference is a bug, logged by the
    /// caller). Runs on the index's thread.
    public func selfCheck(sample: Int = 10_000) async throws -> Int {
        try await thread.runIfActive {
            try self.updating.withLock {
                let base = try self.catalog.accessBase()
                guard base.lastChange == self.state.withLockedValue({ $0.applied }) else { return 0 }  // next time
                let cached = self.state.withLockedValue { state in (state.blobs.sample(sample), state.generation) }
                let fresh = try self.catalog.blobOwners(cached.0.map(\.key))
                return self.state.withLockedValue { state in
                    var corrected = 0
                    for (id, pack) in base.packs where state.packs[id] != pack {
                        state.packs[id] = pack
                        corrected += 1
                    }
                    for id in state.packs.keys where base.packs[id] == nil {
                        state.packs[id] = nil
                        corrected += 1
                    }
                    for (hash, principal) in base.principals where principal.isMember && state.principals[hash] != principal {
                        state.principals[hash] = principal
                        corrected += 1
                    }
                    guard state.generation == cached.1 else { return corrected }
                    for (digest, owners) in cached.0 where fresh[digest].map(Self.normalised) != Self.normalised(owners) {
                        state.blobs.remove(digest)
                        corrected += 1
                    }
                    return corrected
                }
            }
        }
    }

    private static func normalised(_ owners: BlobOwners) -> BlobOwners {
        var owners = owners
        owners.packs.sort()
        owners.uploaders.sort()
        return owners
    }

    /// Forgets change-log rows this index applied more than `age` ago (rows other processes still need are at least
    /// that young; a reader that finds rows missing rebuilds).
    func pruneChanges(olderThan age: TimeInterval) async throws {
        try await thread.runIfActive {
            let applied = self.state.withLockedValue { $0.applied }
            try self.catalog.pruneAccessChanges(through: applied, writtenBefore: Date(timeIntervalSinceNow: -age))
        }
    }

    /// Adds a token the server just recorded (a participant's).
    public func add(_ principal: Principal, tokenHash: String) {
        state.withLockedValue { state in state.principals[tokenHash] = principal }
    }

    /// Adds blobs a session's participants may now read (already recorded in the catalog). `blobs` is accepted for
    /// callers that know them; the index looks blobs up in the catalog when first asked.
    public func addReachable(session: String, _ digests: Set<Digest>, blobs: [BlobRecord] = []) {
        state.withLockedValue { state in state.sessions[session, default: []].formUnion(digests) }
    }

    /// The principal a bearer token stands for, or nil. A token the index does not hold may have been made a moment ago
    /// by another process sharing the catalog: the change log is read first (at most once per ``missCatchUpInterval``,
    /// so a flood of wrong tokens costs no more).
    public func principal(forToken token: String) -> Principal? {
        if let known = state.withLockedValue({ $0.knownTokens[token] }) { return known }
        let hash = Hoard.hashToken(token)
        if let principal = known(token, hash: hash) { return principal }
        // Looked up again even when this catch-up applied nothing: a notice's catch-up may have just applied the token.
        catchUpOnMiss()
        return known(token, hash: hash)
    }

    /// Reads the change log for something another server may have written a moment ago (a token, a pack), at most
    /// once per ``missCatchUpInterval``. When it reads the log, it waits for a catch-up in progress too.
    private func catchUpOnMiss() {
        let now = NIODeadline.now()
        let due = lastMissCatchUp.withLockedValue { last in
            guard now - last >= Self.missCatchUpInterval else { return false }
            last = now
            return true
        }
        if due { _ = try? catchUpBlocking() }
    }

    /// How often something the index does not hold may make it read the change log.
    static let missCatchUpInterval = TimeAmount.milliseconds(100)

    /// The principal of a token hash the index holds, remembered under the token.
    private func known(_ token: String, hash: String) -> Principal? {
        state.withLockedValue { state in
            guard let principal = state.principals[hash] else { return nil }
            if state.knownTokens.count >= 4096 { state.knownTokens.removeAll(keepingCapacity: true) }
            state.knownTokens[token] = principal
            return principal
        }
    }

    /// What the index knows of a blob, when `principal` may read it; nil when absent or not visible. A blob not in
    /// the cache costs a few indexed catalog lookups on the calling thread.
    public func readable(_ digest: Digest, by principal: Principal?) -> BlobAccess? {
        readable([digest], by: principal)[0]
    }

    /// ``readable(_:by:)`` for many blobs; the ones not cached are looked up in one catalog read.
    public func readable(_ digests: [Digest], by principal: Principal?) -> [BlobAccess?] {
        var missing: [Digest] = []
        var answers: [BlobAccess??] = state.withLockedValue { state in
            digests.map { digest in
                guard let owners = state.blobs.get(digest) else {
                    missing.append(digest)
                    return nil
                }
                return .some(self.decide(digest, owners, principal, state))
            }
        }
        guard !missing.isEmpty else { return answers.map { $0 ?? nil } }
        let generation = state.withLockedValue { $0.generation }
        let fetched = (try? catalog.blobOwners(missing)) ?? [:]
        // A blob of a pack this index has not heard of: the pack was made a moment ago, through another server.
        let packs = Set(fetched.values.flatMap(\.packs))
        if !packs.isEmpty, state.withLockedValue({ state in packs.contains { state.packs[$0] == nil } }) { catchUpOnMiss() }
        return state.withLockedValue { state in
            let keep = state.generation == generation
            for (index, digest) in digests.enumerated() where answers[index] == nil {
                guard let owners = fetched[digest] else {
                    answers[index] = .some(nil)
                    continue
                }
                if keep { state.blobs.insert(digest, state.interned(owners)) }
                answers[index] = .some(self.decide(digest, owners, principal, state))
            }
            return answers.map { $0 ?? nil }
        }
    }

    private func decide(_ digest: Digest, _ owners: BlobOwners, _ principal: Principal?, _ state: State) -> BlobAccess? {
        var entry = BlobAccess(size: owners.size, mediaType: owners.mediaType, isPublic: false, groups: Set(owners.uploaders))
        for id in owners.packs {
            guard let pack = state.packs[id] else { continue }
            entry.groups.insert(pack.groupId)
            if pack.isPublic { entry.isPublic = true }
        }
        if entry.isPublic { return entry }
        guard let principal else { return nil }
        if let session = principal.sessionId {
            // Within the session's reach, a participant reads what their view of the table shows them.
            guard state.sessions[session]?.contains(digest) == true, let participant = principal.participantId else { return nil }
            let now = Date()
            return visibleArt.withLockedValue { $0[session]?.shows(digest, to: participant, at: now) == true } ? entry : nil
        }
        return principal.isAdmin || entry.groups.contains(principal.groupId) ? entry : nil
    }

    /// How many blobs' owners are cached (for tests and metrics).
    public var cachedBlobCount: Int { state.withLockedValue { $0.blobs.count } }
}

/// A bounded map from digest to owners in two generations: lookups hit the young one, or promote from the old one;
/// when the young one is full it becomes the old one. Holds at most `capacity` entries; recently used ones survive.
struct OwnerCache {
    private var young: [Digest: BlobOwners] = [:]
    private var old: [Digest: BlobOwners] = [:]
    private let half: Int

    init(capacity: Int) { half = max(1, capacity / 2) }

    var count: Int { young.count + old.count }

    mutating func get(_ digest: Digest) -> BlobOwners? {
        if let owners = young[digest] { return owners }
        guard let owners = old.removeValue(forKey: digest) else { return nil }
        insert(digest, owners)
        return owners
    }

    mutating func insert(_ digest: Digest, _ owners: BlobOwners) {
        if young.count >= half {
            old = young
            young = Dictionary(minimumCapacity: half)
        }
        young[digest] = owners
    }

    mutating func remove(_ digest: Digest) {
        young[digest] = nil
        old[digest] = nil
    }

    mutating func removeAll() {
        young = [:]
        old = [:]
    }

    /// Up to `count` entries, young ones first.
    func sample(_ count: Int) -> [(key: Digest, value: BlobOwners)] {
        Array(young.prefix(count)) + Array(old.prefix(max(0, count - young.count)))
    }
}
