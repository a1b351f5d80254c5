import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// Game sessions, their participants and event logs, and saved maps, as `SQLiteCatalog`'s (HoardCatalog,
/// `Catalog+Sessions.swift`).
///
/// Several replicas may serve one session: a session's event and map are logged only at its next sequence number
/// (`lastSeq + 1`), checked and written in one conditional statement, so of two replicas logging the same number one
/// gets `conflict`. A logged event also notifies ``SessionEventLog/channel`` (`'<seq> <session id>'`, sent at commit)
/// so the other replicas' ``SessionEventListener``s wake.
extension PostgresCatalog {
    /// Creates a session whose map blob is already stored; records everything it makes reachable.
    public func createSession(_ session: SessionRecord, mapBlob: BlobRecord, reachable: Set<Digest>) throws(CatalogError) {
        try write("cannot create session \(session.id)") { tx in
            try Self.insert(mapBlob, tx)
            try tx.execute(#"""
                INSERT INTO session (id, name, "groupId", host, visibility, code, "mapDigest", "baseSeq", "lastSeq", "createdAt")
                VALUES (\#(session.id), \#(session.name), \#(session.groupId), \#(session.host), \#(session.visibility), \#(session.code),
                        \#(session.mapDigest), \#(session.baseSeq), \#(session.lastSeq), \#(session.createdAt))
                """#)
            try Self.addReachable(session: session.id, reachable, tx)
        }
    }

    /// Replaces a session's map (its reachable blobs grow; nothing a participant already fetched is taken away). The
    /// map is the session as of `baseSeq`, whose event (the `map` event) is logged next: `baseSeq` MUST follow the
    /// session's last logged event, `conflict` otherwise (another replica logged one meanwhile), and nothing changes.
    public func setMap(session id: String, mapBlob: BlobRecord, reachable: Set<Digest>, baseSeq: Int64) throws(CatalogError) {
        try write("cannot set the map of session \(id)") { tx in
            try Self.insert(mapBlob, tx)
            let updated = try tx.execute(#"""
                UPDATE session SET "mapDigest" = \#(mapBlob.digest), "baseSeq" = \#(baseSeq) WHERE id = \#(id) AND "lastSeq" = \#(baseSeq - 1)
                """#)
            guard updated == 1 else { throw try Self.sequenceError(session: id, seq: baseSeq, tx) }
            try tx.execute(#"DELETE FROM "sessionEvent" WHERE "sessionId" = \#(id) AND seq <= \#(baseSeq)"#)
            try Self.addReachable(session: id, reachable, tx)
        }
    }

    /// Adds blobs a live op made reachable.
    public func addReachable(session id: String, _ digests: Set<Digest>) throws(CatalogError) {
        try write("cannot add what session \(id) reaches") { tx in try Self.addReachable(session: id, digests, tx) }
    }

    /// A session by id.
    public func session(id: String) throws(CatalogError) -> SessionRecord? {
        try read("cannot read session \(id)") { tx in try Self.sessions("WHERE id = \(id)", tx).first }
    }

    /// Every session's id, oldest first.
    public func sessionIds() throws(CatalogError) -> [String] {
        try read("cannot list the sessions") { tx in
            try tx.values(#"SELECT id FROM session ORDER BY "createdAt", id COLLATE "C""#, as: String.self)
        }
    }

    /// A session by join code.
    public func session(code: String) throws(CatalogError) -> SessionRecord? {
        try read("cannot find a session by its code") { tx in try Self.sessions("WHERE code = \(code)", tx).first }
    }

    /// Sessions in the lobby of a group, newest first: its group-visible sessions, and private ones its `host` label
    /// hosts.
    public func sessions(groupId: Int64, host: String?) throws(CatalogError) -> [SessionRecord] {
        try read("cannot list the sessions of group \(groupId)") { tx in
            try Self.sessions(#"""
                WHERE "groupId" = \#(groupId) AND (visibility = 'group' OR host = \#(host)) ORDER BY "createdAt" DESC
                """#, tx)
        }
    }

    /// Participants of a session, in the order they joined.
    public func participants(session id: String) throws(CatalogError) -> [ParticipantRecord] {
        try read("cannot list the participants of session \(id)") { tx in
            try tx.rows(#"""
                SELECT id, name, "tokenHash", "joinedAt", player FROM participant WHERE "sessionId" = \#(id) ORDER BY "joinedAt"
                """#, as: (String, String, String, Date, String?).self).map {
                ParticipantRecord(id: $0.0, sessionId: id, name: $0.1, tokenHash: $0.2, joinedAt: $0.3, player: $0.4)
            }
        }
    }

    /// How many participants a session has.
    public func participantCount(session id: String) throws(CatalogError) -> Int {
        try read("cannot count the participants of session \(id)") { tx in
            try tx.value(#"SELECT count(*) FROM participant WHERE "sessionId" = \#(id)"#, as: Int.self) ?? 0
        }
    }

    /// Records a participant.
    public func addParticipant(_ participant: ParticipantRecord) throws(CatalogError) {
        try write("cannot add a participant to session \(participant.sessionId)") { tx in
            try tx.execute(#"""
                INSERT INTO participant (id, "sessionId", name, "tokenHash", "joinedAt", player)
                VALUES (\#(participant.id), \#(participant.sessionId), \#(participant.name), \#(participant.tokenHash), \#(participant.joinedAt),
                    \#(participant.player))
                """#)
        }
    }

    /// Forgets one participant of a session: their token stops working. False when the session has no such participant.
    public func removeParticipant(_ id: String, session: String) throws(CatalogError) -> Bool {
        try write("cannot remove a participant from session \(session)") { tx in
            try tx.execute(#"DELETE FROM participant WHERE id = \#(id) AND "sessionId" = \#(session)"#) > 0
        }
    }

    /// Gives a session a new join code: the old one stops working. False when there is no such session.
    public func setCode(_ code: String, session id: String) throws(CatalogError) -> Bool {
        try write("cannot set the code of session \(id)") { tx in try tx.execute("UPDATE session SET code = \(code) WHERE id = \(id)") > 0 }
    }

    /// Appends one event to a session's log at `seq`, advances its last sequence number and notifies
    /// ``SessionEventLog/channel``, in one statement. `views` is what participants are sent instead of `body`, when
    /// not everyone is sent the same. `seq` must follow the session's last: `conflict` otherwise (another replica
    /// logged it), `notFound` without the session, and nothing is written.
    public func appendEvent(
        session id: String, seq: Int64, body: String, views: String?, grab: GrabChange?, isRoll: Bool
    ) throws(CatalogError) {
        try write("cannot log event \(seq) of session \(id)") { tx in
            let logged = try tx.execute(#"""
                WITH next AS (UPDATE session SET "lastSeq" = \#(seq) WHERE id = \#(id) AND "lastSeq" = \#(seq - 1) RETURNING id),
                event AS (INSERT INTO "sessionEvent" ("sessionId", seq, body, views) SELECT id, \#(seq), \#(body), \#(views) FROM next
                          RETURNING seq)
                SELECT pg_notify(\#(SessionEventLog.channel), seq::text || ' ' || \#(id)) FROM event
                """#)
            guard logged == 1 else { throw try Self.sequenceError(session: id, seq: seq, tx) }
            if isRoll { try tx.execute(#"INSERT INTO "diceRoll" ("sessionId", seq, body) VALUES (\#(id), \#(seq), \#(body))"#) }
            switch grab {
            case .hold(let entity, let participant, let replica, let until):
                try tx.execute(#"""
                    INSERT INTO "grabLease" ("sessionId", entity, participant, replica, "expiresAt")
                    VALUES (\#(id), \#(entity), \#(participant), \#(replica), \#(until.millisecondsSince1970))
                    ON CONFLICT ("sessionId", entity) DO UPDATE SET participant = excluded.participant, replica = excluded.replica,
                        "expiresAt" = excluded."expiresAt"
                    """#)
            case .drop(let entity):
                try tx.execute(#"DELETE FROM "grabLease" WHERE "sessionId" = \#(id) AND entity = \#(entity)"#)
            case nil:
                break
            }
        }
    }

    /// Who holds each grabbed entity of a session.
    public func grabs(session id: String) throws(CatalogError) -> [String: String] {
        try read("cannot read the grabs of session \(id)") { tx in
            let rows = try tx.rows(#"SELECT entity, participant FROM "grabLease" WHERE "sessionId" = \#(id)"#, as: (String, String).self)
            return Dictionary(rows.map { ($0.0, $0.1) }) { $1 }
        }
    }

    /// Extends every lease `replica` holds (grabs and presence) to `until`; returns how many.
    @discardableResult
    public func renewLeases(replica: String, until: Date) throws(CatalogError) -> Int {
        try write("cannot renew the leases of replica \(replica)") { tx in
            let until = until.millisecondsSince1970
            return try tx.execute(#"UPDATE "grabLease" SET "expiresAt" = \#(until) WHERE replica = \#(replica)"#)
                + tx.execute(#"UPDATE presence SET "expiresAt" = \#(until) WHERE replica = \#(replica)"#)
        }
    }

    /// Records that a participant has a socket on a replica, leased until `until`.
    public func holdPresence(_ presence: Presence, until: Date) throws(CatalogError) {
        try write("cannot record the presence of \(presence.participant) in session \(presence.session)") { tx in
            try tx.execute(#"""
                INSERT INTO presence ("sessionId", participant, replica, name, "expiresAt")
                VALUES (\#(presence.session), \#(presence.participant), \#(presence.replica), \#(presence.name), \#(until.millisecondsSince1970))
                ON CONFLICT ("sessionId", participant, replica) DO UPDATE SET name = excluded.name, "expiresAt" = excluded."expiresAt"
                """#)
        }
    }

    /// Forgets that a participant has a socket on a replica.
    public func dropPresence(session id: String, participant: String, replica: String) throws(CatalogError) {
        try write("cannot forget the presence of \(participant) in session \(id)") { tx in
            try tx.execute(#"DELETE FROM presence WHERE "sessionId" = \#(id) AND participant = \#(participant) AND replica = \#(replica)"#)
        }
    }

    /// The participants with a socket on any replica whose lease runs past `date`.
    public func present(session id: String, at date: Date) throws(CatalogError) -> Set<String> {
        try read("cannot read who is connected to session \(id)") { tx in
            Set(try tx.values(#"""
                SELECT DISTINCT participant FROM presence WHERE "sessionId" = \#(id) AND "expiresAt" > \#(date.millisecondsSince1970)
                """#, as: String.self))
        }
    }

    /// Deletes and returns the presence whose lease ended before `date`, at most `limit`.
    public func takeExpiredPresence(before date: Date, limit: Int) throws(CatalogError) -> [Presence] {
        try write("cannot read the ended presence leases") { tx in
            try tx.rows(#"""
                DELETE FROM presence WHERE ctid IN (
                    SELECT ctid FROM presence WHERE "expiresAt" < \#(date.millisecondsSince1970) ORDER BY "expiresAt" LIMIT \#(limit)
                    FOR UPDATE SKIP LOCKED)
                RETURNING "sessionId", participant, name, replica
                """#, as: (String, String, String, String).self).map { Presence(session: $0.0, participant: $0.1, name: $0.2, replica: $0.3) }
        }
    }

    /// The grabs whose lease ended before `date`, oldest first, at most `limit`.
    public func expiredGrabs(before date: Date, limit: Int) throws(CatalogError) -> [HeldGrab] {
        try read("cannot read the ended grab leases") { tx in
            try tx.rows(#"""
                SELECT "sessionId", entity, participant FROM "grabLease" WHERE "expiresAt" < \#(date.millisecondsSince1970)
                ORDER BY "expiresAt" LIMIT \#(limit)
                """#, as: (String, String, String).self).map { HeldGrab(session: $0.0, entity: $0.1, participant: $0.2) }
        }
    }

    /// Logged events after `seq`, oldest first.
    public func events(session id: String, after seq: Int64) throws(CatalogError) -> [LoggedEvent] {
        try read("cannot read the events of session \(id)") { tx in
            try tx.rows(#"""
                SELECT seq, body, views FROM "sessionEvent" WHERE "sessionId" = \#(id) AND seq > \#(seq) ORDER BY seq
                """#, as: (Int64, String, String?).self).map { LoggedEvent(seq: $0.0, body: $0.1, views: $0.2) }
        }
    }

    /// The bytes of the logged events after `seq` (bodies and views, in UTF-8), without reading them.
    public func eventBytes(session id: String, after seq: Int64) throws(CatalogError) -> Int {
        try read("cannot measure the events of session \(id)") { tx in
            try tx.value(#"""
                SELECT coalesce(sum(octet_length(body) + coalesce(octet_length(views), 0)), 0)::bigint
                FROM "sessionEvent" WHERE "sessionId" = \#(id) AND seq > \#(seq)
                """#, as: Int.self) ?? 0
        }
    }

    /// Folds a session's log into a new base map: the map (already stored as a blob) is the session as of `baseSeq`;
    /// the `keeping` events up to it stay for clients that reconnect from one of them, older ones are deleted. Does
    /// nothing when the session has a later base already (a map replaced meanwhile); returns whether it folded. The
    /// session row stays locked from the check to the commit, so a replica's map cannot land in between.
    @discardableResult
    public func fold(session id: String, mapBlob: BlobRecord, baseSeq: Int64, keeping: Int64) throws(CatalogError) -> Bool {
        try write("cannot fold the log of session \(id)") { tx in
            guard let base = try tx.value(#"SELECT "baseSeq" FROM session WHERE id = \#(id) FOR UPDATE"#, as: Int64.self), base <= baseSeq
            else { return false }
            try Self.insert(mapBlob, tx)
            try tx.execute(#"UPDATE session SET "mapDigest" = \#(mapBlob.digest), "baseSeq" = \#(baseSeq) WHERE id = \#(id)"#)
            try tx.execute(#"DELETE FROM "sessionEvent" WHERE "sessionId" = \#(id) AND seq <= \#(baseSeq - keeping)"#)
            return true
        }
    }

    /// Pictures participants uploaded into a session (not its members' uploads): digest and participant id.
    public func participantUploads(session id: String) throws(CatalogError) -> [(digest: Digest, participant: String)] {
        try read("cannot list the uploads of session \(id)") { tx in
            try tx.rows(#"""
                SELECT u.digest, u.uploader FROM "privateUpload" u JOIN participant p ON p.id = u.uploader AND p."sessionId" = \#(id)
                WHERE u.scope = \#(UploadScope.session(id).description)
                """#, as: (Digest, String).self).map { (digest: $0.0, participant: $0.1) }
        }
    }

    /// Saves a map under a name for a group, pinning the art it reaches; refuses (conflict) when the name is taken:
    /// saving never overwrites.
    public func saveMap(group groupId: Int64, name: String, blob: BlobRecord, reachable: Set<Digest>) throws(CatalogError) -> SavedMapRecord {
        try write("cannot save map '\(name)'") { tx in
            try Self.insert(blob, tx)
            let savedAt = Date()
            // The unique (group, name) index decides, also against another replica saving the same name.
            guard let id = try tx.value(#"""
                INSERT INTO "savedMap" ("groupId", name, digest, "savedAt") VALUES (\#(groupId), \#(name), \#(blob.digest), \#(savedAt))
                ON CONFLICT ("groupId", name) DO NOTHING RETURNING id
                """#, as: Int64.self)
            else { throw CatalogError(.conflict, "a map named '\(name)' is already saved; delete it first or choose another name") }
            try tx.execute(#"""
                INSERT INTO "savedMapBlob" ("savedMapId", digest) SELECT \#(id), unnest(\#(reachable.texts)::text[]) ON CONFLICT DO NOTHING
                """#)
            return SavedMapRecord(id: id, groupId: groupId, name: name, digest: blob.digest, savedAt: savedAt)
        }
    }

    /// A group's saved maps, by name.
    public func savedMaps(group groupId: Int64) throws(CatalogError) -> [SavedMapRecord] {
        try read("cannot list the saved maps of group \(groupId)") { tx in
            let rows = try tx.rows(#"""
                SELECT id, name, digest, "savedAt" FROM "savedMap" WHERE "groupId" = \#(groupId) ORDER BY name COLLATE "C"
                """#, as: (Int64, String, Digest, Date).self)
            return rows.map { SavedMapRecord(id: $0.0, groupId: groupId, name: $0.1, digest: $0.2, savedAt: $0.3) }
        }
    }

    /// Deletes a saved map; false when absent.
    @discardableResult
    public func deleteMap(group groupId: Int64, name: String) throws(CatalogError) -> Bool {
        try write("cannot delete map '\(name)'") { tx in
            try tx.execute(#"DELETE FROM "savedMap" WHERE "groupId" = \#(groupId) AND name = \#(name)"#) > 0
        }
    }

    /// Ends a session, in one transaction: the session row and, with it, its participants (their tokens), its
    /// `sessionBlob` rows and its event log; and the private uploads made in it. False when there was no such session.
    @discardableResult
    public func deleteSession(id: String) throws(CatalogError) -> Bool {
        try write("cannot end session \(id)") { tx in
            try tx.execute(#"DELETE FROM "privateUpload" WHERE scope = \#(UploadScope.session(id).description)"#)
            return try tx.execute("DELETE FROM session WHERE id = \(id)") > 0
        }
    }

    // MARK: Helpers

    /// Records that a session's participants may fetch these blobs (each MUST have a blob row). Idempotent.
    static func addReachable(session id: String, _ digests: Set<Digest>, _ tx: PostgresTransaction) throws {
        guard !digests.isEmpty else { return }
        try tx.execute(#"""
            INSERT INTO "sessionBlob" ("sessionId", digest) SELECT \#(id), unnest(\#(digests.texts)::text[]) ON CONFLICT DO NOTHING
            """#)
    }

    /// Why `seq` cannot be logged next in a session: there is no such session, or its last event is not `seq - 1`.
    static func sequenceError(session id: String, seq: Int64, _ tx: PostgresTransaction) throws -> CatalogError {
        guard let last = try tx.value(#"SELECT "lastSeq" FROM session WHERE id = \#(id)"#, as: Int64.self) else {
            return CatalogError(.notFound, "there is no session \(id)")
        }
        return CatalogError(.conflict, "session \(id) has logged event \(last); \(seq) does not follow it")
    }

    /// The sessions `condition` (a `WHERE` clause, maybe with an `ORDER BY`) selects.
    private static func sessions(_ condition: PostgresQuery, _ tx: PostgresTransaction) throws -> [SessionRecord] {
        var query: PostgresQuery = #"""
            SELECT id, name, "groupId", host, visibility, code, "mapDigest", "baseSeq", "lastSeq", "createdAt" FROM session
            """#
        query.sql += " " + condition.sql
        query.binds = condition.binds
        return try tx.rows(query, as: (String, String, Int64, String, String, String, Digest, Int64, Int64, Date).self).map {
            SessionRecord(
                id: $0.0, name: $0.1, groupId: $0.2, host: $0.3, visibility: $0.4, code: $0.5, mapDigest: $0.6, baseSeq: $0.7,
                lastSeq: $0.8, createdAt: $0.9)
        }
    }
}
