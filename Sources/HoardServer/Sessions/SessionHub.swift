import Foundation
import HoardCatalog
import HoardCore
import Logging

/// Holds the table of every game session in play and orders its live events: one sequence per session, every op
/// applied to the session's ``Table`` and logged in the catalog before it is sent, each participant sent only what
/// their view holds, so a client that reconnects with its last sequence number gets exactly what it missed, and a
/// restart loses nothing.
///
/// Replicas sharing one catalog keep the same tables: an event is logged only at the session's next sequence number
/// (the catalog refuses a number another replica took, ``SequenceTaken``), and each replica applies and sends on the
/// events others log, which the catalog's ``SessionEventFeed`` delivers (``receive(session:event:)``). An op decided on a
/// table that was behind is decided again once the table has caught up, so two replicas never both grant one grab.
///
/// A grab is a row in the catalog, logged with its event and leased by the replica that granted it
/// (``GrabChange``); so is each participant's presence on a replica (``Presence``), which is what every replica answers
/// "who is connected" from. ``LeaseService`` renews this replica's leases and ends those whose lease ended, so a grab
/// held through a replica that died (or a process killed before a restart) is released within a lease, and a player
/// who was connected only there leaves.
///
/// A session's state is its base map (a blob) plus the ops logged after it; every ``foldEvery`` events, and when its
/// last socket closes, the state is stored as a new base map (a *fold*) and the log is cut to the ``foldEvery``
/// events before the base, so a join never replays more than that and a reconnection can still continue exactly.
actor SessionHub {
    /// One connected socket.
    struct Connection {
        var participantId: String
        var name: String
        /// The player a participant who joined with a player key is in the group (their dice statistics' record).
        var player: String?
        var isHost: Bool
        var continuation: AsyncStream<String>.Continuation
        /// Its transport: bytes waiting for it, and how to cut it off.
        var link: LiveLink
    }

    struct Live {
        var lastSeq: Int64
        var baseSeq: Int64
        var table: Table
        var connections: [UUID: Connection] = [:]
        /// Entity → participant holding it.
        var grabs: [String: String] = [:]
        /// Client op ids recently applied, per participant: a resent op is applied once.
        var recentOps: [String: [String]] = [:]
        /// Pictures participants uploaded into the session → who uploaded each (they and the host see it until shown):
        /// two players uploading the same picture both keep it.
        var uploads: [Digest: Set<String>] = [:]
        /// Whether a fold is being stored.
        var isFolding = false
        /// Whether the state is being read again (another replica replaced the map, or the log moved past it).
        var isReloading = false
        /// For each piece of art the table has shown, the blobs that show it (an asset's descriptor, variants and
        /// renditions): asked of the catalog once per digest.
        var blobsOfArt: [Digest: Set<Digest>] = [:]
        /// Who may fetch each blob of the table's art, as last given to the access index (nil until it is).
        var visibleBlobs: [Digest: Audience]?
        /// The latest glimpse of each token by each participant (a number), so that the end of an earlier glimpse does
        /// not cut a later one short.
        var glimpseNumbers: [GlimpseKey: Int] = [:]
        /// When each glimpse ends on the server's clock (logged with its op as `until`): its art is fetchable by those
        /// glimpsing it until then only, whatever happens to the timer that ends it on the table.
        var glimpseEnds: [GlimpseKey: Date] = [:]
        /// The dice seal: the seed rolls are drawn with, and whether it is revealed (then nothing more is rolled).
        var dice: DiceSealRecord?
    }

    /// A token and a participant glimpsing it: a key of two strings kept apart (ids are the client's strings).
    struct GlimpseKey: Hashable {
        var token: String
        var participant: String
    }

    /// Messages a slow reader may have waiting before it is disconnected.
    static let outboundLimit = 2048
    /// Bytes a socket may have waiting (its backlog included) before it is disconnected; one message always fits, so
    /// a snapshot larger than this still goes to a socket with nothing waiting.
    static let outboundBytes = 4 << 20
    /// Sockets one participant (a member's token is one participant, `host:<label>`) may have open on a session.
    static let socketsPerParticipant = 8
    /// Events after which the log is folded into a new base map.
    static let foldEvery: Int64 = 500
    /// How long after a glimpse's end a replica that did not send it ends it, should its sender have died: by then the
    /// sender's end has arrived and there is nothing left to end.
    static let glimpseGrace: Duration = .seconds(2)
    /// Client op ids remembered per participant.
    static let recentOpLimit = 256

    /// Encoded views of the tables (shared with `GET /v1/sessions/{id}`).
    nonisolated let views = TableViews()
    /// `snapshot` texts by session, sequence number and what their viewer does not see: participants who see the same
    /// share one text (a view of a very large map is megabytes).
    var snapshots: [String: String] = [:]

    /// This hub's name in the grab leases it holds (one per process).
    nonisolated let replica: String
    /// How long a grab's lease lasts after it is granted or renewed.
    nonisolated let grabLease: Duration

    /// How long someone who left stays listed as away (``ServerConfiguration/awayGrace``).
    nonisolated let awayGrace: Duration
    /// The server's clock (``ServerConfiguration/clock``): it stamps the jukebox's ops.
    nonisolated let clock: @Sendable () -> Date

    /// The server's clock now, in Unix milliseconds.
    nonisolated var serverTime: Double { (clock().timeIntervalSince1970 * 1000).rounded() }

    let catalog: Catalog
    let logger: Logger
    /// Told how long each event's catalog write took (`hoard_session_event_append_duration_seconds`): what the table's
    /// ops wait for besides the table itself.
    nonisolated let appendTimed: (@Sendable (Duration) -> Void)?
    let storage: any TableStorage
    let access: AccessIndex
    var sessions: [String: Live] = [:]
    /// When each participant who left a session left it (through this replica), by session: they are listed as away
    /// until ``awayGrace`` has passed.
    var departures: [String: [String: Date]] = [:]
    /// The display name each session's host gave on their last live channel here (`name=`).
    var hostNames: [String: String] = [:]

    init(
        catalog: Catalog, storage: any TableStorage, access: AccessIndex, logger: Logger, replica: String = UUID().uuidString.lowercased(),
        grabLease: Duration = .seconds(15), awayGrace: Duration = .seconds(60), clock: @escaping @Sendable () -> Date = { Date() },
        appendTimed: (@Sendable (Duration) -> Void)? = nil
    ) {
        self.appendTimed = appendTimed
        self.awayGrace = awayGrace
        self.clock = clock
        self.catalog = catalog
        self.storage = storage
        self.access = access
        self.logger = logger
        self.replica = replica
        self.grabLease = grabLease
    }

    /// The session's live state, loaded (base map, then its log replayed) on first use.
    @discardableResult
    func load(_ id: String) async throws -> Live {
        for _ in 0..<3 {
            if let live = sessions[id] { return live }
            guard let record = try catalog.session(id: id) else { throw APIError.notFound("no session \(id)") }
            // A map stored by an older server that no longer passes the door is not read: its session answers why.
            let map: JSONValue
            switch MapCheck.admitted(try await storage.map(record.mapDigest)) {
            case .success(let admitted): map = admitted
            case .failure(let problem): throw APIError.unloadableSession(id, problem.message)
            }
            if let live = sessions[id] { return live }
            // Read again after the wait: the log is read now, and must continue the base that was read.
            guard let current = try catalog.session(id: id) else { throw APIError.notFound("no session \(id)") }
            guard current.mapDigest == record.mapDigest, current.baseSeq == record.baseSeq else { continue }
            var live = Live(lastSeq: current.baseSeq, baseSeq: current.baseSeq, table: try table(map))
            // The seal is made on the first load (at creation), the same on every replica: the first written wins.
            live.dice = try catalog.diceSeal(session: id, groupId: current.groupId, proposed: .random())
            // The grabs as of now; the log after the base takes them on to where it ends (a grab or release logged
            // after this read is in it).
            live.grabs = try catalog.grabs(session: id)
            var glimpses: [(token: String, to: [String], until: Date)] = []
            // The log's tail before the base is not applied again, but its op ids are remembered.
            // The catalog keeps one uploader per picture; the log names the others who uploaded it since its base.
            var uploaders: [Digest: Set<String>] = [:]
            for event in try catalog.events(session: id, after: 0) {
                let parsed = try? JSONValue(parsing: Data(event.body.utf8))
                if let body = parsed, body["type"]?.stringValue == "upload", let digest = body["digest"]?.stringValue.flatMap(Digest.init),
                    let by = body["by"]?.stringValue
                {
                    uploaders[digest, default: []].insert(by)
                }
                if event.seq <= current.baseSeq {
                    if let body = parsed, let opId = body["opId"]?.stringValue, let from = body["from"]?.stringValue {
                        Self.remember(opId, from, in: &live)
                    }
                    continue
                }
                live.lastSeq = event.seq
                guard let body = parsed else { continue }
                Self.applyGrab(body, to: &live)
                // A roll answered its op id too: a resent roll is not rolled again.
                if body["type"]?.stringValue == "rolled", let opId = body["opId"]?.stringValue, let from = body["from"]?.stringValue {
                    Self.remember(opId, from, in: &live)
                }
                guard body["type"]?.stringValue == "op", let opJSON = body["op"], let op = try? TableOp(json: opJSON) else { continue }
                if case .add(_, let entity) = op { try learnFootprints(JSONValue.object(entity).referencedDigests, into: &live.table) }
                _ = try? live.table.apply(op, by: .host)
                if case .glimpse(let token, let to, let seconds) = op { glimpses.append((token, to, Self.glimpseEnd(body, seconds))) }
                if let opId = body["opId"]?.stringValue, let from = body["from"]?.stringValue { Self.remember(opId, from, in: &live) }
            }
            live.lastSeq = max(live.lastSeq, current.lastSeq)
            // Only pictures still uploaded in the session (a deleted one's log entries name nobody now).
            for upload in try catalog.participantUploads(session: id) {
                live.uploads[upload.digest] = (uploaders[upload.digest] ?? []).union([upload.participant])
            }
            sessions[id] = live
            if let feed = catalog.sessionEventFeed {
                let seq = live.lastSeq
                Task { await feed.follow(session: id, after: seq) }
            }
            // A glimpse in the log may still be timed by the replica that sent it: it ends here too, as a fallback, at
            // the end it was logged with and ``glimpseGrace``. One whose start is folded away (its timer died with a
            // previous process) ends now.
            for glimpse in glimpses { startGlimpse(session: id, token: glimpse.token, to: glimpse.to, until: glimpse.until, grace: Self.glimpseGrace) }
            try updateVisibleArt(id)
            for token in live.table.glimpses.keys where !glimpses.contains(where: { $0.token == token }) {
                Task { await self.endGlimpse(session: id, token: token, numbers: nil) }
            }
            return live
        }
        throw APIError.internalError("the session \(id) kept changing while it was loaded")
    }

    /// Loads every session so that what participants may fetch is known before the first request (at start-up).
    func loadAll() async {
        do {
            // One session that cannot be loaded never keeps the others (or the server) from starting.
            for id in try catalog.sessionIds() {
                do {
                    try await load(id)
                } catch {
                    logger.error("cannot load a session; it answers with this error", metadata: ["session": "\(id)", "error": "\(error)"])
                }
            }
        } catch {
            logger.error("cannot list the sessions", metadata: ["error": "\(error)"])
        }
    }

    static func remember(_ opId: String, _ from: String, in live: inout Live) {
        live.recentOps[from, default: []].append(opId)
        if live.recentOps[from]!.count > recentOpLimit { live.recentOps[from]!.removeFirst() }
    }

    /// Assets got generated pictures (a rendition job finished, here or on another replica): each loaded session that
    /// shows one forgets what it knew of their blobs and reads them again, so its participants may fetch the new ones.
    func artChanged(_ assets: Set<Digest>) {
        for (id, live) in sessions where !assets.isDisjoint(with: live.blobsOfArt.keys) {
            for asset in assets { sessions[id]?.blobsOfArt[asset] = nil }
            do {
                try updateVisibleArt(id)
            } catch {
                logger.error("cannot read the new pictures of a session's art", metadata: ["session": "\(id)", "error": "\(error)"])
            }
        }
    }

    /// Tells the access index which art each participant may fetch: what their view of the table shows (each
    /// asset with its variants and renditions) and the pictures they uploaded. Anything else the session once
    /// reached, such as the art of a token removed while hidden or of a replaced map, answers 404 to them.
    func updateVisibleArt(_ id: String) throws {
        guard let live = sessions[id] else { return }
        let audiences = live.table.withoutGlimpses.artAudiences(extra: live.uploads.mapValues { Audience.only($0) })
        try learnBlobs(of: Set(audiences.keys), session: id)
        let blobsOfArt = sessions[id]?.blobsOfArt ?? [:]
        var visible: [Digest: Audience] = [:]
        for (digest, audience) in audiences {
            for blob in blobsOfArt[digest] ?? [digest] { visible[blob, default: .nobody].formUnion(audience) }
        }
        setVisibleBlobs(visible, session: id)
    }

    /// ``updateVisibleArt(_:)`` after an op that changed what only `participants` may fetch
    /// (``Table/Change/artAffected``): asks the table about their art alone and leaves everyone else's as it was.
    func updateVisibleArt(_ id: String, of participants: Set<String>) throws {
        guard let live = sessions[id], var visible = live.visibleBlobs else { return try updateVisibleArt(id) }
        let table = live.table.withoutGlimpses
        var arts: [String: Set<Digest>] = [:]
        for participant in participants {
            arts[participant] = table.art(seenBy: participant).union(live.uploads.filter { $0.value.contains(participant) }.keys)
        }
        try learnBlobs(of: arts.values.reduce(into: []) { $0.formUnion($1) }, session: id)
        let blobsOfArt = sessions[id]?.blobsOfArt ?? [:]
        for (participant, art) in arts {
            let blobs = art.reduce(into: Set<Digest>()) { $0.formUnion(blobsOfArt[$1] ?? [$1]) }
            for (blob, audience) in visible where audience.contains(participant) != blobs.contains(blob) {
                visible[blob]?.set(participant, in: blobs.contains(blob))
            }
            for blob in blobs where visible[blob] == nil { visible[blob] = .only([participant]) }
        }
        setVisibleBlobs(visible, session: id)
    }

    /// Asks the catalog for the blobs of the art among `art` the session has not met yet.
    private func learnBlobs(of art: Set<Digest>, session id: String) throws {
        guard let known = sessions[id]?.blobsOfArt else { return }
        let unknown = art.subtracting(known.keys)
        if !unknown.isEmpty { sessions[id]?.blobsOfArt.merge(try catalog.art(of: unknown)) { $1 } }
    }

    /// Gives the access index who may fetch each blob, with the art of glimpses until each ends.
    private func setVisibleBlobs(_ visible: [Digest: Audience], session id: String) {
        guard let live = sessions[id] else { return }
        sessions[id]?.visibleBlobs = visible
        // A glimpse's art is theirs until its end, enforced on each read (a glimpse with no known end has ended).
        var until: [Digest: [String: Date]] = [:]
        for (token, seers) in live.table.glimpses {
            let art = live.table.art(ofToken: token)
            for seer in seers {
                let end = live.glimpseEnds[GlimpseKey(token: token, participant: seer)] ?? .distantPast
                for digest in art {
                    for blob in live.blobsOfArt[digest] ?? [digest] {
                        until[blob, default: [:]][seer] = max(until[blob]?[seer] ?? .distantPast, end)
                    }
                }
            }
        }
        access.setVisibleArt(session: id, visible, until: until)
    }
}
