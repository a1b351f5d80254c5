import Foundation
import HoardCatalog
import HoardCore
import Logging
import NIOConcurrencyHelpers

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
        /// Pictures participants uploaded into the session → who (they and the host see them until shown).
        var uploads: [Digest: String] = [:]
        /// Whether a fold is being stored.
        var isFolding = false
        /// Whether the state is being read again (another replica replaced the map, or the log moved past it).
        var isReloading = false
        /// For each piece of art the table has shown, the blobs that show it (an asset's descriptor, variants and
        /// renditions): asked of the catalog once per digest.
        var blobsOfArt: [Digest: Set<Digest>] = [:]
        /// The latest glimpse of each token by each participant (`token NUL participant` → a number), so that the end
        /// of an earlier glimpse does not cut a later one short.
        var glimpseNumbers: [String: Int] = [:]
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
    private var snapshots: [String: String] = [:]

    /// This hub's name in the grab leases it holds (one per process).
    nonisolated let replica: String
    /// How long a grab's lease lasts after it is granted or renewed.
    nonisolated let grabLease: Duration

    private let catalog: Catalog
    private let logger: Logger
    private let storage: any TableStorage
    private let access: AccessIndex
    private var sessions: [String: Live] = [:]

    init(
        catalog: Catalog, storage: any TableStorage, access: AccessIndex, logger: Logger, replica: String = UUID().uuidString.lowercased(),
        grabLease: Duration = .seconds(15)
    ) {
        self.catalog = catalog
        self.storage = storage
        self.access = access
        self.logger = logger
        self.replica = replica
        self.grabLease = grabLease
    }

    // MARK: Loading

    /// The session's live state, loaded (base map, then its log replayed) on first use.
    @discardableResult
    private func load(_ id: String) async throws -> Live {
        for _ in 0..<3 {
            if let live = sessions[id] { return live }
            guard let record = try catalog.session(id: id) else { throw APIError.notFound("no session \(id)") }
            let map = try await storage.map(record.mapDigest)
            if let live = sessions[id] { return live }
            // Read again after the wait: the log is read now, and must continue the base that was read.
            guard let current = try catalog.session(id: id) else { throw APIError.notFound("no session \(id)") }
            guard current.mapDigest == record.mapDigest, current.baseSeq == record.baseSeq else { continue }
            var live = Live(lastSeq: current.baseSeq, baseSeq: current.baseSeq, table: Table(map: map))
            // The grabs as of now; the log after the base takes them on to where it ends (a grab or release logged
            // after this read is in it).
            live.grabs = try catalog.grabs(session: id)
            var glimpses: [(token: String, to: [String], seconds: Int)] = []
            // The log's tail before the base is not applied again, but its op ids are remembered.
            for event in try catalog.events(session: id, after: 0) {
                if event.seq <= current.baseSeq {
                    if let body = try? JSONValue(parsing: Data(event.body.utf8)), let opId = body["opId"]?.stringValue,
                        let from = body["from"]?.stringValue
                    {
                        Self.remember(opId, from, in: &live)
                    }
                    continue
                }
                live.lastSeq = event.seq
                guard let body = try? JSONValue(parsing: Data(event.body.utf8)) else { continue }
                Self.applyGrab(body, to: &live)
                guard body["type"]?.stringValue == "op", let opJSON = body["op"], let op = try? TableOp(json: opJSON) else { continue }
                _ = try? live.table.apply(op, by: .host)
                if case .glimpse(let token, let to, let seconds) = op { glimpses.append((token, to, seconds)) }
                if let opId = body["opId"]?.stringValue, let from = body["from"]?.stringValue { Self.remember(opId, from, in: &live) }
            }
            live.lastSeq = max(live.lastSeq, current.lastSeq)
            for upload in try catalog.participantUploads(session: id) { live.uploads[upload.digest] = upload.participant }
            sessions[id] = live
            if let feed = catalog.sessionEventFeed {
                let seq = live.lastSeq
                Task { await feed.follow(session: id, after: seq) }
            }
            try updateVisibleArt(id)
            // A glimpse in the log may still be timed by the replica that sent it: it ends here too, as a fallback, after
            // its span and ``glimpseGrace``. One whose start is folded away (its timer died with a previous process)
            // ends now.
            for glimpse in glimpses { startGlimpse(session: id, token: glimpse.token, to: glimpse.to, seconds: glimpse.seconds, grace: Self.glimpseGrace) }
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
            for id in try catalog.sessionIds() { _ = try? await load(id) }
        } catch {
            logger.error("cannot list the sessions", metadata: ["error": "\(error)"])
        }
    }

    /// Takes a logged `grab` or `release` into the table's grabs.
    private static func applyGrab(_ body: JSONValue, to live: inout Live) {
        guard let entity = body["entity"]?.stringValue else { return }
        switch body["type"]?.stringValue {
        case "grab": live.grabs[entity] = body["by"]?.stringValue
        case "release": live.grabs[entity] = nil
        default: break
        }
    }

    private static func remember(_ opId: String, _ from: String, in live: inout Live) {
        live.recentOps[from, default: []].append(opId)
        if live.recentOps[from]!.count > recentOpLimit { live.recentOps[from]!.removeFirst() }
    }

    /// Tells the access index which art each participant may fetch: what their view of the table shows (each
    /// asset with its variants and renditions) and the pictures they uploaded. Anything else the session once
    /// reached, such as the art of a token removed while hidden or of a replaced map, answers 404 to them.
    private func updateVisibleArt(_ id: String) throws {
        guard let live = sessions[id] else { return }
        let audiences = live.table.artAudiences(extra: live.uploads.mapValues { Audience.only([$0]) })
        let unknown = Set(audiences.keys).subtracting(live.blobsOfArt.keys)
        if !unknown.isEmpty {
            let found = try catalog.art(of: unknown)
            sessions[id]?.blobsOfArt.merge(found) { $1 }
        }
        let blobsOfArt = sessions[id]?.blobsOfArt ?? [:]
        var visible: [Digest: Audience] = [:]
        for (digest, audience) in audiences {
            for blob in blobsOfArt[digest] ?? [digest] { visible[blob] = visible[blob].map { $0.union(audience) } ?? audience }
        }
        access.setVisibleArt(session: id, visible)
    }

    // MARK: Sockets

    /// A socket the hub refuses.
    struct Refusal: Error, Sendable {
        var reason: String
    }

    /// Registers a socket and returns the stream of what it must send, starting with its backlog, atomically: no
    /// event falls between the backlog and the rest. With `since` inside the log, the backlog is exactly the events
    /// after it as this participant sees them; otherwise, and when those would pass ``outboundBytes``, it is one
    /// `snapshot` of their view now. Throws ``Refusal`` when the participant has ``socketsPerParticipant`` open.
    func connect(
        session id: String, connection: UUID, participantId: String, name: String, isHost: Bool, since: Int64?, link: LiveLink
    ) async throws -> AsyncStream<String> {
        try await load(id)
        // The table first catches up with what other replicas logged, and the backlog stops where the table is: an event
        // logged meanwhile comes once, with the others', not in the backlog too.
        try catchUp(id)
        guard let live = sessions[id] else { throw APIError.notFound("no session \(id)") }
        guard live.connections.values.count(where: { $0.participantId == participantId }) < Self.socketsPerParticipant else {
            throw Refusal(reason: "at most \(Self.socketsPerParticipant) sockets per participant")
        }
        let viewer: Table.Actor = isHost ? .host : .participant(participantId)
        var backlog: [String] = []
        // The log keeps up to one fold's worth of events before the base: a `since` among them is continued exactly,
        // unless that is more than a socket may have waiting (then a snapshot is smaller and as good).
        let events = try since.map { since -> [LoggedEvent] in
            guard since <= live.lastSeq, try catalog.eventBytes(session: id, after: since) <= Self.outboundBytes else { return [] }
            return try catalog.events(session: id, after: since).filter { $0.seq <= live.lastSeq }
        }
        if let since, let events, events.first.map({ $0.seq == since + 1 }) ?? (since == live.lastSeq) {
            replay: for event in events {
                switch try Self.text(of: event, for: viewer) {
                case .text(let text): backlog.append(text)
                case .nothing: continue
                case .wholeView:
                    backlog = [try snapshot(id, live, for: viewer)]
                    break replay
                }
            }
        } else {
            backlog.append(try snapshot(id, live, for: viewer))
        }
        if backlog.count > Self.outboundLimit || backlog.reduce(0, { $0 + $1.utf8.count }) > Self.outboundBytes {
            backlog = [try snapshot(id, live, for: viewer)]
        }
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(Self.outboundLimit))
        let added = Connection(participantId: participantId, name: name, isHost: isHost, continuation: continuation, link: link)
        for text in backlog { _ = Self.deliver(text, to: added) }
        let alreadyHere = live.connections.values.contains { $0.participantId == participantId }
        // Joined, for everyone, when this is the participant's first socket on any replica.
        var joins = false
        if !alreadyHere {
            joins = try !catalog.present(session: id, at: Date()).contains(participantId)
            try catalog.holdPresence(Presence(session: id, participant: participantId, name: name, replica: replica), until: leaseEnd())
        }
        sessions[id]?.connections[connection] = added
        if joins {
            try publish(
                session: id,
                ["type": .string("presence"), "event": .string("joined"), "participant": Self.participant(participantId, name)])
        }
        return stream
    }

    /// Unregisters a socket; the participant's grabs are released and, when it has no other socket, it has left.
    /// When the session's last socket closes, its log is folded.
    func disconnect(session id: String, connection: UUID) {
        guard let gone = sessions[id]?.connections.removeValue(forKey: connection) else { return }
        gone.continuation.finish()
        departed(session: id, gone)
    }

    /// Whether a socket is still registered (a dropped one is not: nothing it sends is applied).
    func isConnected(session id: String, connection: UUID) -> Bool {
        sessions[id]?.connections[connection] != nil
    }

    /// Queues a message for a socket, within its budgets (``outboundBytes``, ``outboundLimit``); false when it has
    /// too much waiting already.
    private static func deliver(_ text: String, to connection: Connection) -> Bool {
        guard connection.link.enqueue(text.utf8.count, limit: outboundBytes) else { return false }
        if case .dropped = connection.continuation.yield(text) { return false }
        return true
    }

    /// Drops sockets that do not read: each is cut off at once (no close handshake: it would not read one), and it
    /// has left like a socket that closed (its grabs released when it was its participant's last).
    private func drop(session id: String, _ keys: [UUID]) {
        for key in keys {
            guard let gone = sessions[id]?.connections.removeValue(forKey: key) else { continue }
            logger.warning("disconnecting a client that does not read", metadata: [
                "session": "\(id)", "participant": "\(gone.participantId)", "queuedBytes": "\(gone.link.queuedBytes)",
            ])
            gone.link.drop()
            gone.continuation.finish()
            departed(session: id, gone)
        }
    }

    /// After a socket is gone: when it was its participant's last, their grabs are released and they have left; when
    /// it was the session's last, the log is folded.
    private func departed(session id: String, _ gone: Connection) {
        guard let live = sessions[id] else { return }
        guard !live.connections.values.contains(where: { $0.participantId == gone.participantId }) else { return }
        do {
            for (entity, holder) in live.grabs where holder == gone.participantId {
                try releaseGrab(session: id, entity: entity, held: holder, by: holder)
            }
            try catalog.dropPresence(session: id, participant: gone.participantId, replica: replica)
            // Left, for everyone, when it was their last socket on any replica.
            if try !catalog.present(session: id, at: Date()).contains(gone.participantId) {
                try publish(
                    session: id,
                    ["type": .string("presence"), "event": .string("left"), "participant": Self.participant(gone.participantId, gone.name)])
            }
        } catch {
            logger.error("cannot log a presence event", metadata: ["session": "\(id)", "error": "\(error)"])
        }
        if sessions[id]?.connections.isEmpty == true { fold(id) }
    }

    /// Ends a session for everyone: its sockets are closed and its state forgotten (the catalog rows are the caller's).
    func end(session id: String) {
        if let live = sessions[id] {
            for connection in live.connections.values {
                connection.link.end(.sessionEnded)
                connection.continuation.finish()
            }
        }
        sessions[id] = nil
        access.setVisibleArt(session: id, nil)
    }

    /// Follows changes made through any server sharing the catalog: sockets of participants removed and of sessions
    /// deleted close; a session that reaches new art is loaded, so what its participants may fetch is known here.
    func follow(_ changes: [AccessIndex.SessionChange]) async {
        for change in changes {
            switch change {
            case .removed(let participant, let session): remove(participant: participant, session: session)
            case .ended(let session): end(session: session)
            case .reaches(let session): if sessions[session] == nil { _ = try? await load(session) }
            }
        }
    }

    /// Closes a removed participant's sockets (4403) and lets them leave like a socket that closed: their grabs are
    /// released and the others see them go (the catalog row and the token are the caller's).
    func remove(participant: String, session id: String) {
        guard let live = sessions[id] else { return }
        for (key, connection) in live.connections where connection.participantId == participant {
            sessions[id]?.connections[key] = nil
            connection.link.end(.removed)
            connection.continuation.finish()
            departed(session: id, connection)
        }
    }

    // MARK: Ops

    /// What became of an op.
    enum Outcome: Sendable {
        /// Applied and sent; a `ping` has no sequence number.
        case applied(seq: Int64?)
        /// Applied before under the same client op id: not applied again.
        case duplicate
        /// Refused; nothing changed.
        case refused(TableError)
        /// From a socket that was dropped: not applied.
        case ignored
    }

    /// Applies an op sent by `participantId` acting as `actor`, logs it and sends each participant their view of it,
    /// art first: an op that puts art in front of someone is preceded by an `assets` event with its manifest entries,
    /// for them. `manifest` gives those entries for digests.
    func apply(
        session id: String, op: TableOp, opId: String?, from participantId: String, as actor: Table.Actor,
        manifest: ([Digest]) throws -> [String: JSONValue], link: LiveLink? = nil
    ) async throws -> Outcome {
        try await load(id)
        if link?.isDropped == true { return .ignored }
        return try decided(session: id) {
            try applyNow(session: id, op: op, opId: opId, from: participantId, as: actor, manifest: manifest)
        }
    }

    /// Runs a decision on the session's table until it is logged: when another replica logged an event first, the
    /// table catches up and `decide` runs again on it.
    private func decided<T>(session id: String, _ decide: () throws -> T) throws -> T {
        for _ in 0..<16 {
            do {
                return try decide()
            } catch is SequenceTaken {
                try catchUp(id)
            }
        }
        throw APIError.storageUnavailable("SESSION_BUSY", "session \(id) is changing too fast on other servers; send again")
    }

    /// ``apply(session:op:opId:from:as:manifest:link:)`` on the table as it is now.
    private func applyNow(
        session id: String, op: TableOp, opId: String?, from participantId: String, as actor: Table.Actor,
        manifest: ([Digest]) throws -> [String: JSONValue]
    ) throws -> Outcome {
        guard var table = sessions[id]?.table else { throw APIError.notFound("no session \(id)") }
        if let opId, sessions[id]?.recentOps[participantId]?.contains(opId) == true { return .duplicate }
        let change: Table.Change
        do {
            change = try table.apply(op, by: actor)
        } catch {
            return .refused(error)
        }
        guard change.isKept else {
            var ping = ["type": JSONValue.string("ping"), "from": .string(participantId), "op": change.op.json]
            if let opId { ping["opId"] = .string(opId) }
            let text = String(decoding: try CanonicalJSON.encode(JSONValue.object(ping)), as: UTF8.self)
            if let live = sessions[id] {
                drop(session: id, live.connections.filter { !Self.deliver(text, to: $0.value) }.map(\.key))
            }
            return .applied(seq: nil)
        }
        for (audience, digests) in change.art where !digests.isEmpty {
            var event = try manifest(digests.sorted())
            event["type"] = .string("assets")
            try publish(session: id, event, views: audience == .everyone ? nil : [(audience, event)])
        }
        var event: [String: JSONValue] = ["type": .string("op"), "from": .string(participantId), "op": change.op.json]
        if let opId { event["opId"] = .string(opId) }
        let views = change.views?.map { view in
            (view.audience, view.op.map { op -> [String: JSONValue] in event.merging(["op": op.json]) { $1 } })
        }
        let before = sessions[id]?.table
        sessions[id]?.table = table
        let seq: Int64
        do {
            seq = try publish(session: id, event, views: views, orTakenThrow: true)
        } catch is SequenceTaken {
            sessions[id]?.table = before ?? table  // nothing was logged: decided again once caught up
            throw SequenceTaken()
        } catch {
            sessions[id] = nil  // the state has an op the log lacks: read both again on next use
            throw error
        }
        if let opId { Self.remember(opId, participantId, in: &sessions[id]!) }
        if change.changesVisibility { try updateVisibleArt(id) }
        if case .glimpse(let token, let to, let seconds) = change.op { startGlimpse(session: id, token: token, to: to, seconds: seconds) }
        if let live = sessions[id], live.lastSeq - live.baseSeq >= Self.foldEvery { fold(id) }
        return .applied(seq: seq)
    }

    // MARK: Glimpses

    /// Ends a glimpse on the server's clock: after `seconds` (and `grace`), the token is hidden again from those it was
    /// shown to, unless a later glimpse showed it to them again or it has ended already.
    private func startGlimpse(session id: String, token: String, to: [String], seconds: Int, grace: Duration = .zero) {
        var numbers: [String: Int] = [:]
        for participant in to {
            let key = token + "\u{0}" + participant
            let number = (sessions[id]?.glimpseNumbers[key] ?? 0) + 1
            sessions[id]?.glimpseNumbers[key] = number
            numbers[participant] = number
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds) + grace)
            await self.endGlimpse(session: id, token: token, numbers: numbers)
        }
    }

    /// Ends the glimpses of `token` whose number is still the latest (nil: all of them), as an op of the server's.
    private func endGlimpse(session id: String, token: String, numbers: [String: Int]?) async {
        guard let live = sessions[id], let seers = live.table.glimpses[token] else { return }
        let ending = seers.filter { participant in
            numbers.map { $0[participant] != nil && $0[participant] == live.glimpseNumbers[token + "\u{0}" + participant] } ?? true
        }
        guard !ending.isEmpty else { return }
        do {
            _ = try await apply(
                session: id, op: .unglimpse(token: token, from: ending.sorted()), opId: nil, from: "server", as: .host,
                manifest: { _ in [:] })
        } catch {
            logger.error("cannot end a glimpse", metadata: ["session": "\(id)", "token": "\(token)", "error": "\(error)"])
        }
    }

    /// A picture a participant uploaded into the session: announced to them and the host only, and fetchable by them
    /// and the host only until the table shows it.
    func announceUpload(session id: String, blob: BlobRecord, by participantId: String) async throws {
        try await load(id)
        sessions[id]?.uploads[blob.digest] = participantId
        let event: [String: JSONValue] = [
            "type": .string("upload"), "by": .string(participantId), "digest": .string(blob.digest.description),
            "size": .number(Double(blob.size)), "mediaType": .string(blob.mediaType),
        ]
        try publish(session: id, event, views: [(.only([participantId]), event)])
        try updateVisibleArt(id)
    }

    /// Forgets an upload (deleted by its owner).
    func forgetUpload(session id: String, digest: Digest) throws {
        guard sessions[id]?.uploads.removeValue(forKey: digest) != nil else { return }
        try updateVisibleArt(id)
    }

    // MARK: Sequencing

    /// Assigns the next sequence number, logs the event, then sends it to every socket: the host `event`, each
    /// participant the view whose audience holds them (a nil view: their whole view again), or nothing.
    ///
    /// When another replica logged that number first, the table catches up and the event is logged after (it does
    /// not depend on the table), unless `orTakenThrow`: then it throws ``SequenceTaken`` for its caller to decide again.
    @discardableResult
    func publish(
        session id: String, _ event: [String: JSONValue], views: [(Audience, [String: JSONValue]?)]? = nil, orTakenThrow: Bool = false,
        grab: GrabChange? = nil
    ) throws -> Int64 {
        if orTakenThrow { return try publishOnce(session: id, event, views: views, grab: grab) }
        return try decided(session: id) { try publishOnce(session: id, event, views: views, grab: grab) }
    }

    /// ``publish(session:_:views:orTakenThrow:grab:)`` at the number after the table's.
    private func publishOnce(
        session id: String, _ event: [String: JSONValue], views: [(Audience, [String: JSONValue]?)]?, grab: GrabChange?
    ) throws -> Int64 {
        guard let live = sessions[id] else { throw APIError.notFound("no session \(id)") }
        let seq = live.lastSeq + 1
        let number = JSONValue.number(Double(seq))
        let text = try Self.encode(event.merging(["seq": number]) { $1 })
        var viewTexts: [(Audience, String?)] = []
        var stored: String?
        if let views {
            viewTexts = try views.map { ($0.0, try $0.1.map { try Self.encode($0.merging(["seq": number]) { $1 }) }) }
            let entries = views.map { audience, body in
                JSONValue.object(["to": audience.json, "event": body.map { .object($0.merging(["seq": number]) { $1 }) } ?? .null])
            }
            stored = String(decoding: try CanonicalJSON.encode(JSONValue.array(entries)), as: UTF8.self)
        }
        do {
            try catalog.appendEvent(session: id, seq: seq, body: text, views: stored, grab: grab)
        } catch {
            if error.code == .conflict { throw SequenceTaken() }
            throw error
        }
        sessions[id]?.lastSeq = seq
        var slow: [UUID] = []
        for (key, connection) in live.connections {
            var message: String? = text
            if !connection.isHost, views != nil {
                message = nil
                if let (_, view) = viewTexts.first(where: { $0.0.contains(connection.participantId) }) {
                    if let view {
                        message = view
                    } else if let current = sessions[id] {
                        message = try snapshot(id, current, for: .participant(connection.participantId))
                    }
                }
            }
            guard let message else { continue }
            if !Self.deliver(message, to: connection) { slow.append(key) }
        }
        // After every socket has this event: dropping publishes events of its own (release, left), which must follow.
        drop(session: id, slow)
        return seq
    }

    /// An event another replica logged, from the catalog's ``SessionEventFeed``: applied and sent on when it is the
    /// table's next; an earlier one is this replica's own or known already; a later one means events were missed,
    /// which are read from the log.
    func receive(session id: String, event: LoggedEvent) {
        guard let live = sessions[id], !live.isReloading, event.seq > live.lastSeq else { return }
        do {
            if event.seq == live.lastSeq + 1 {
                try applyLogged(id, [event])
            } else {
                try catchUp(id)
            }
        } catch {
            logger.error("cannot apply another server's session events", metadata: ["session": "\(id)", "error": "\(error)"])
        }
    }

    /// Brings the table up to the log: the events after its number, applied and sent on as this replica's own are.
    private func catchUp(_ id: String) throws {
        guard let live = sessions[id], !live.isReloading else { return }
        try applyLogged(id, try catalog.events(session: id, after: live.lastSeq))
    }

    /// Applies events logged elsewhere, in order, and sends each socket its view of them (``text(of:for:)``, as a
    /// reconnection's backlog). A replaced map, or events no longer in the log, read the whole session again.
    private func applyLogged(_ id: String, _ events: [LoggedEvent]) throws {
        var slow: Set<UUID> = []
        for event in events {
            guard let live = sessions[id], event.seq > live.lastSeq else { continue }
            let body = try? JSONValue(parsing: Data(event.body.utf8))
            let type = body?["type"]?.stringValue
            guard event.seq == live.lastSeq + 1, type != "map" else {
                reload(id)
                return
            }
            switch type {
            case "op":
                if let opJSON = body?["op"], let op = try? TableOp(json: opJSON) {
                    _ = try? sessions[id]?.table.apply(op, by: .host)
                    // Ended by its sender; here too if its sender dies first.
                    if case .glimpse(let token, let to, let seconds) = op {
                        startGlimpse(session: id, token: token, to: to, seconds: seconds, grace: Self.glimpseGrace)
                    }
                }
                if let opId = body?["opId"]?.stringValue, let from = body?["from"]?.stringValue { Self.remember(opId, from, in: &sessions[id]!) }
            case "grab", "release":
                if let body { Self.applyGrab(body, to: &sessions[id]!) }
            case "upload":
                if let digest = body?["digest"]?.stringValue.flatMap(Digest.init), let by = body?["by"]?.stringValue {
                    sessions[id]?.uploads[digest] = by
                }
            default:
                break
            }
            sessions[id]?.lastSeq = event.seq
            guard let current = sessions[id] else { return }
            for (key, connection) in current.connections {
                let viewer: Table.Actor = connection.isHost ? .host : .participant(connection.participantId)
                let message: String?
                switch try Self.text(of: event, for: viewer) {
                case .text(let text): message = text
                case .nothing: message = nil
                case .wholeView: message = try snapshot(id, current, for: viewer)
                }
                if let message, !Self.deliver(message, to: connection) { slow.insert(key) }
            }
        }
        try updateVisibleArt(id)
        drop(session: id, Array(slow))
        if let live = sessions[id], live.lastSeq - live.baseSeq >= Self.foldEvery { fold(id) }
    }

    /// Reads a session again (base map, grabs and log) in the background, keeping its sockets, and sends every
    /// socket a `snapshot` of its view: for a map another replica replaced, or a log that moved past this table.
    private func reload(_ id: String) {
        guard let live = sessions[id], !live.isReloading else { return }
        sessions[id]?.isReloading = true
        Task {
            sessions[id] = nil
            do {
                try await load(id)
            } catch {
                logger.error("cannot read a session again", metadata: ["session": "\(id)", "error": "\(error)"])
                var kept = live
                kept.isReloading = false
                if sessions[id] == nil { sessions[id] = kept }
                return
            }
            sessions[id]?.connections.merge(live.connections) { current, _ in current }
            guard let fresh = sessions[id] else { return }
            var slow: [UUID] = []
            for (key, connection) in fresh.connections {
                let text = try snapshot(id, fresh, for: connection.isHost ? .host : .participant(connection.participantId))
                if !Self.deliver(text, to: connection) { slow.append(key) }
            }
            drop(session: id, slow)
        }
    }

    /// Sends a message to one socket only (errors: not logged, no sequence number).
    func send(session id: String, connection: UUID, _ text: String) {
        guard let target = sessions[id]?.connections[connection], !Self.deliver(text, to: target) else { return }
        drop(session: id, [connection])
    }

    /// What a logged event is for one viewer.
    enum Delivery {
        case text(String)
        case nothing
        case wholeView
    }

    static func text(of event: LoggedEvent, for viewer: Table.Actor) throws -> Delivery {
        guard case .participant(let id) = viewer, let views = event.views else { return .text(event.body) }
        guard case .array(let entries) = try JSONValue(parsing: Data(views.utf8)) else { return .nothing }
        for entry in entries {
            guard let to = entry["to"], let audience = Audience(json: to), audience.contains(id) else { continue }
            guard let body = entry["event"], body != .null else { return .wholeView }
            return .text(String(decoding: try CanonicalJSON.encode(body), as: UTF8.self))
        }
        return .nothing
    }

    // MARK: Maps

    /// A map replaced over HTTP: the new table, whose `map` event's sequence number becomes the base. The host is sent
    /// the `map` event; each participant their view of the new map (a `snapshot`).
    func replaceMap(session id: String, map: JSONValue, commit: (Int64) throws -> Void, event: [String: JSONValue]) async throws -> Int64 {
        try await load(id)
        guard let live = sessions[id] else { throw APIError.notFound("no session \(id)") }
        let seq = live.lastSeq + 1
        try commit(seq)
        sessions[id]?.table = Table(map: map)
        sessions[id]?.baseSeq = seq
        let published = try publish(session: id, event, views: [(.everyone, nil)])
        try updateVisibleArt(id)
        return published
    }

    /// The session's table as it is now, with the sequence number it reflects, for documents made outside the actor.
    func current(session id: String) async throws -> (table: Table, seq: Int64) {
        let live = try await load(id)
        return (live.table, live.lastSeq)
    }

    /// `{"map":…,"mapDigest":…,"seq":…,"type":"snapshot"}` of a viewer's view now.
    private func snapshot(_ id: String, _ live: Live, for viewer: Table.Actor) throws -> String {
        let key = "\(id) \(live.lastSeq) " + live.table.unseen(by: viewer).joined(separator: "\u{0}") + (viewer == .host ? " host" : "")
        if let known = snapshots[key] { return known }
        let document = try views.document(session: id, seq: live.lastSeq, table: live.table, viewer: viewer)
        let text = "{\"map\":" + document.text + ",\"mapDigest\":\"\(document.digest)\",\"seq\":\(live.lastSeq),\"type\":\"snapshot\"}"
        if snapshots.count >= 64 { snapshots.removeAll(keepingCapacity: true) }
        snapshots[key] = text
        return text
    }

    /// Stores the state as a new base map in the background, then deletes the log up to it.
    private func fold(_ id: String) {
        guard let live = sessions[id], !live.isFolding, live.lastSeq > live.baseSeq else { return }
        sessions[id]?.isFolding = true
        let (map, seq, storage, catalog, logger) = (live.table.map, live.lastSeq, storage, catalog, logger)
        Task {
            var folded = false
            do {
                folded = try await storage.fold(session: id, map: map, seq: seq, catalog: catalog)
            } catch {
                logger.error("cannot fold a session's log", metadata: ["session": "\(id)", "error": "\(error)"])
            }
            self.folded(id, seq: folded ? seq : nil)
        }
    }

    private func folded(_ id: String, seq: Int64?) {
        sessions[id]?.isFolding = false
        if let seq, let base = sessions[id]?.baseSeq, base < seq { sessions[id]?.baseSeq = seq }
        if let live = sessions[id], live.connections.isEmpty, !live.isFolding, live.lastSeq == live.baseSeq { sessions[id] = nil }
    }

    // MARK: Grabs

    /// First request wins; the host may take over; everyone sees the one outcome. Returns an error code when refused.
    func grab(session id: String, entity: String, by participant: String, isHost: Bool, link: LiveLink? = nil) async throws -> String? {
        try await load(id)
        if link?.isDropped == true { return nil }
        return try decided(session: id) { () throws -> String? in
            guard let state = sessions[id] else { throw APIError.notFound("no session \(id)") }
            let holder = state.grabs[entity]
            if let holder {
                if holder == participant { return nil }
                if !isHost { return "GRAB_DENIED" }
            }
            // Held before it is sent: a socket dropped while it is sent releases what its participant holds.
            sessions[id]?.grabs[entity] = participant
            do {
                try publish(
                    session: id, ["type": .string("grab"), "entity": .string(entity), "by": .string(participant)], orTakenThrow: true,
                    grab: .hold(entity: entity, participant: participant, replica: replica, until: leaseEnd()))
            } catch {
                sessions[id]?.grabs[entity] = holder
                throw error
            }
            return nil
        }
    }

    /// When this hub's grabs stop being leased: `grabLease` from now.
    nonisolated func leaseEnd() -> Date {
        Date().addingTimeInterval(LiveRates.seconds(grabLease))
    }

    /// Only the holder or the host releases.
    func release(session id: String, entity: String, by participant: String, isHost: Bool, link: LiveLink? = nil) async throws -> String? {
        try await load(id)
        if link?.isDropped == true { return nil }
        return try decided(session: id) { () throws -> String? in
            guard let holder = sessions[id]?.grabs[entity] else { return nil }
            guard holder == participant || isHost else { return "NOT_HOLDER" }
            try releaseGrab(session: id, entity: entity, held: holder, by: participant)
            return nil
        }
    }

    /// Releases a grab whose lease ended: its replica stopped renewing it (it died, or this process restarted). Nothing
    /// happens when the grab has changed hands or been released since.
    func releaseExpired(_ grab: HeldGrab) async throws {
        try await load(grab.session)
        guard try releaseGrab(session: grab.session, entity: grab.entity, held: grab.participant, by: grab.participant) else { return }
        logger.info("released a grab whose lease ended", metadata: [
            "session": "\(grab.session)", "entity": "\(grab.entity)", "participant": "\(grab.participant)",
        ])
    }

    /// Logs the release of `entity` while `holder` holds it, by `participant`; when another replica logged an event
    /// first, decided again on the table caught up (the grab may have changed hands: then nothing is released). Returns
    /// whether it released.
    @discardableResult
    private func releaseGrab(session id: String, entity: String, held holder: String, by participant: String) throws -> Bool {
        try decided(session: id) {
            guard sessions[id]?.grabs[entity] == holder else { return false }
            sessions[id]?.grabs[entity] = nil
            do {
                try publish(
                    session: id, ["type": .string("release"), "entity": .string(entity), "by": .string(participant)], orTakenThrow: true,
                    grab: .drop(entity: entity))
            } catch {
                sessions[id]?.grabs[entity] = holder
                throw error
            }
            return true
        }
    }

    /// Who is connected now, to any replica.
    func connected(session id: String) -> Set<String> {
        let here = Set(sessions[id]?.connections.values.map(\.participantId) ?? [])
        do {
            return here.union(try catalog.present(session: id, at: Date()))
        } catch {
            logger.warning("cannot read who is connected to other servers", metadata: ["session": "\(id)", "error": "\(error)"])
            return here
        }
    }

    /// A participant's presence on a replica whose lease ended (it died, or this process restarted): they leave, for
    /// everyone, unless they are connected to a replica still (this one included: its lease is then held again).
    func presenceExpired(_ presence: Presence) async throws {
        guard try !catalog.present(session: presence.session, at: Date()).contains(presence.participant) else { return }
        if let live = sessions[presence.session], let here = live.connections.values.first(where: { $0.participantId == presence.participant }) {
            try catalog.holdPresence(
                Presence(session: presence.session, participant: presence.participant, name: here.name, replica: replica), until: leaseEnd())
            return
        }
        try await load(presence.session)
        try publish(
            session: presence.session,
            ["type": .string("presence"), "event": .string("left"), "participant": Self.participant(presence.participant, presence.name)])
        logger.info("a participant left with the server they were connected to", metadata: [
            "session": "\(presence.session)", "participant": "\(presence.participant)",
        ])
    }

    static func participant(_ id: String, _ name: String) -> JSONValue {
        .object(["id": .string(id), "name": .string(name)])
    }

    static func encode(_ event: [String: JSONValue]) throws -> String {
        String(decoding: try CanonicalJSON.encode(JSONValue.object(event)), as: UTF8.self)
    }
}

/// Another replica logged the session's next sequence number first: nothing was logged or sent.
struct SequenceTaken: Error {}

/// Where the hub reads base maps and stores folded ones.
protocol TableStorage: Sendable {
    /// A stored map document.
    func map(_ digest: Digest) async throws -> JSONValue
    /// Stores `map` as the session's base as of `seq` and deletes the log up to it; false when a later base exists.
    func fold(session id: String, map: JSONValue, seq: Int64, catalog: Catalog) async throws -> Bool
}

/// One viewer's map as canonical JSON, and its digest: what `GET /v1/sessions/{id}` and `snapshot` events carry.
struct TableDocument: Sendable {
    var bytes: [UInt8]
    var digest: Digest
    var text: String { String(decoding: bytes, as: UTF8.self) }

    init(_ table: Table, viewer: Table.Actor) throws {
        bytes = try CanonicalJSON.encode(table.view(for: viewer))
        digest = BlobHasher.digest(of: bytes)
    }
}

/// One socket's transport as the hub sees it: the bytes queued for it and not yet written, and how to cut it off.
final class LiveLink: Sendable {
    private struct State {
        var queued = 0
        var isDropped = false
        var ending: Ending?
    }

    private let state = NIOLockedValueBox(State())
    private let abortTransport: @Sendable () -> Void

    /// `abort` closes the connection at once, without a close handshake.
    init(abort: @escaping @Sendable () -> Void = {}) {
        abortTransport = abort
    }

    /// Counts a message in; false when the socket is dropped or the message would take its queue past `limit` bytes
    /// (a message always fits an empty queue).
    func enqueue(_ count: Int, limit: Int) -> Bool {
        state.withLockedValue { state in
            guard !state.isDropped, state.queued == 0 || state.queued + count <= limit else { return false }
            state.queued += count
            return true
        }
    }

    /// A queued message was written to the connection.
    func written(_ count: Int) {
        state.withLockedValue { $0.queued -= count }
    }

    var queuedBytes: Int { state.withLockedValue { $0.queued } }
    var isDropped: Bool { state.withLockedValue { $0.isDropped } }
    /// Why the server ended it, when it did (its stream finished for that reason, not for being slow).
    var ending: Ending? { state.withLockedValue { $0.ending } }

    /// Marks the socket dropped and aborts its connection (once).
    func drop() {
        let first = state.withLockedValue { state in
            defer { state.isDropped = true }
            return !state.isDropped
        }
        if first { abortTransport() }
    }

    /// Why a socket's stream was finished by the server, and the close frame that says so.
    enum Ending: Sendable {
        /// The session ended: 1001.
        case sessionEnded
        /// The host removed its participant: 4403.
        case removed
    }

    func end(_ why: Ending) {
        state.withLockedValue { $0.ending = why }
    }

    /// Aborts the connection without marking it dropped (a close handshake that did not finish in time).
    func abort() {
        abortTransport()
    }
}
