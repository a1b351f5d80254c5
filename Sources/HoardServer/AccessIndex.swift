import Foundation
import HoardCatalog
import HoardCore
import HoardImport
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Who may read which blob and which token is whose, held in memory so a blob request costs no database query.
///
/// Rebuilt from the catalog after changes to packs and uploads, and when a cheap fingerprint of the catalog changes
/// (another process, such as `hoard import`, wrote to it). Participants and what sessions reach, which only the
/// server writes, are added in place: a storm of joins costs no rebuilds.
///
/// Ordering: every rebuild and every in-place addition takes a ticket *after* its catalog write; a rebuild is
/// applied only if no later ticket was applied first, so a slow, stale rebuild never overwrites newer state; a
/// stale rebuild reads the catalog again rather than being dropped, so the writer's own change is never lost.
public final class AccessIndex: Sendable {
    private let catalog: Catalog
    private struct State {
        var snapshot: AccessSnapshot
        var fingerprint: [Int64]
        /// Tokens already hashed and looked up since the last reload, so a request costs no SHA-256.
        var knownTokens: [String: Principal] = [:]
        /// The ticket of the last rebuild or addition applied.
        var applied: UInt64 = 0
    }

    /// Per session: the blobs its participants may fetch, each with who (``SessionHub`` keeps it from their views of
    /// the table). A session absent here is not loaded yet: its participants fetch nothing until it is.
    private let visibleArt = NIOLockedValueBox<[String: [Digest: Audience]]>([:])

    /// Sets what a session's participants may fetch (nil: the session ended).
    public func setVisibleArt(session: String, _ digests: [Digest: Audience]?) {
        visibleArt.withLockedValue { $0[session] = digests }
    }

    private let tickets = NIOLockedValueBox<UInt64>(0)

    private func ticket() -> UInt64 {
        tickets.withLockedValue { value in
            value += 1
            return value
        }
    }

    private let state: NIOLockedValueBox<State>

    /// Loads the index from a catalog.
    public init(catalog: Catalog) throws {
        self.catalog = catalog
        state = NIOLockedValueBox(State(snapshot: try catalog.accessSnapshot(), fingerprint: try catalog.accessFingerprint()))
    }

    /// Reloads from the catalog now. When an addition was applied while the catalog was being read, the snapshot
    /// may lack it, so it is read again (up to 20 times; past that the next poll catches up): a caller that wrote
    /// to the catalog and then reloads can rely on the index knowing its write, even in a storm of joins.
    public func reload() throws {
        for _ in 0..<20 {
            let ticket = ticket()
            let fingerprint = try catalog.accessFingerprint()
            let snapshot = try catalog.accessSnapshot()
            let isApplied = state.withLockedValue { state in
                guard ticket > state.applied else { return false }
                state = State(snapshot: snapshot, fingerprint: fingerprint, applied: ticket)
                return true
            }
            if isApplied { return }
        }
    }

    /// Adds a token the server just recorded (a participant's), without a rebuild.
    public func add(_ principal: Principal, tokenHash: String) {
        let ticket = ticket()
        state.withLockedValue { state in
            state.snapshot.principals[tokenHash] = principal
            state.applied = max(state.applied, ticket)
        }
    }

    /// Adds blobs a session's participants may now read (already recorded in the catalog), without a rebuild.
    /// `blobs` describes any the index does not know yet.
    public func addReachable(session: String, _ digests: Set<Digest>, blobs: [BlobRecord] = []) {
        let ticket = ticket()
        state.withLockedValue { state in
            state.snapshot.sessions[session, default: []].formUnion(digests)
            for blob in blobs where state.snapshot.blobs[blob.digest] == nil {
                state.snapshot.blobs[blob.digest] = AccessSnapshot.Entry(size: blob.size, mediaType: blob.mediaType, isPublic: false, groups: [])
            }
            state.applied = max(state.applied, ticket)
        }
    }

    /// Whether a session's participants may reach a blob at all (before what their view withholds).
    public func isReachable(_ digest: Digest, session: String) -> Bool {
        state.withLockedValue { $0.snapshot.sessions[session]?.contains(digest) == true }
    }

    /// Takes blobs out of what a session's participants may read (already deleted from the catalog), without a
    /// rebuild: a forgotten upload stops being served to them at once.
    public func removeReachable(session: String, _ digests: Set<Digest>) {
        let ticket = ticket()
        state.withLockedValue { state in
            state.snapshot.sessions[session]?.subtract(digests)
            state.applied = max(state.applied, ticket)
        }
    }

    /// Forgets a session that was deleted from the catalog, without a rebuild: its participants' tokens are unknown
    /// (401) and nothing is readable through it from now on.
    public func endSession(_ id: String) {
        let ticket = ticket()
        state.withLockedValue { state in
            state.snapshot.sessions[id] = nil
            state.snapshot.principals = state.snapshot.principals.filter { $0.value.sessionId != id }
            state.knownTokens = state.knownTokens.filter { $0.value.sessionId != id }
            state.applied = max(state.applied, ticket)
        }
        setVisibleArt(session: id, nil)
    }

    /// Reloads when the catalog changed since the last load. Returns whether it did.
    @discardableResult
    public func reloadIfChanged() throws -> Bool {
        let fingerprint = try catalog.accessFingerprint()
        guard fingerprint != state.withLockedValue({ $0.fingerprint }) else { return false }
        try reload()
        return true
    }

    /// The principal a bearer token stands for, or nil.
    public func principal(forToken token: String) -> Principal? {
        if let known = state.withLockedValue({ $0.knownTokens[token] }) { return known }
        let hash = Hoard.hashToken(token)
        return state.withLockedValue { state in
            guard let principal = state.snapshot.principals[hash] else { return nil }
            if state.knownTokens.count >= 4096 { state.knownTokens.removeAll(keepingCapacity: true) }
            state.knownTokens[token] = principal
            return principal
        }
    }

    /// What the index knows of a blob, when `principal` may read it; nil when absent or not visible.
    public func readable(_ digest: Digest, by principal: Principal?) -> AccessSnapshot.Entry? {
        state.withLockedValue { state in
            guard let entry = state.snapshot.blobs[digest] else { return nil }
            if entry.isPublic { return entry }
            guard let principal else { return nil }
            if let session = principal.sessionId, let participant = principal.participantId {
                guard state.snapshot.sessions[session]?.contains(digest) == true else { return nil }
                let isShown = visibleArt.withLockedValue { $0[session]?[digest]?.contains(participant) == true }
                return isShown ? entry : nil
            }
            return principal.isAdmin || entry.groups.contains(principal.groupId) ? entry : nil
        }
    }
}

/// Polls the catalog's fingerprint so changes made by other processes reach the index within a second.
struct AccessRefreshService: Service {
    let index: AccessIndex
    let logger: Logger
    var interval: Duration = .seconds(1)

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: interval)
            do {
                if try index.reloadIfChanged() { logger.info("catalog changed; access index reloaded") }
            } catch {
                logger.error("cannot reload the access index", metadata: ["error": "\(error)"])
            }
        }
    }
}
