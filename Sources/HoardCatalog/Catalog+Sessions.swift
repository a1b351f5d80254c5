import Foundation
import GRDB
import HoardCore

/// A game session as stored: its host, its join code and its current map.
public struct SessionRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "session"
    /// Opaque id.
    public var id: String
    /// Name shown in the lobby.
    public var name: String
    /// The host's group.
    public var groupId: Int64
    /// The hosting member: their id (``MemberRules/owner(_:)``).
    public var host: String
    /// `group` (listed to the host's group) or `private` (join code only).
    public var visibility: String
    /// The join code.
    public var code: String
    /// The current map document's blob.
    public var mapDigest: Digest
    /// The sequence number at which the current map was set.
    public var baseSeq: Int64
    /// The last event's sequence number.
    public var lastSeq: Int64
    /// When it was created.
    public var createdAt: Date

    /// Creates a record.
    public init(id: String, name: String, groupId: Int64, host: String, visibility: String, code: String, mapDigest: Digest,
                baseSeq: Int64, lastSeq: Int64, createdAt: Date) {
        self.id = id
        self.name = name
        self.groupId = groupId
        self.host = host
        self.visibility = visibility
        self.code = code
        self.mapDigest = mapDigest
        self.baseSeq = baseSeq
        self.lastSeq = lastSeq
        self.createdAt = createdAt
    }
}

/// Someone who joined a session with its code.
public struct ParticipantRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "participant"
    /// Opaque id.
    public var id: String
    /// The session.
    public var sessionId: String
    /// Display name.
    public var name: String
    /// SHA-256 (hex) of the participant token.
    public var tokenHash: String
    /// When it joined.
    public var joinedAt: Date
    /// The player they are in the group (`v20`, ``PlayerKey/player(inGroup:)``): whom their dice statistics count for
    /// across the group's sessions; nil when they joined without a key (their record is this seat's).
    public var player: String?

    /// Creates a record.
    public init(id: String, sessionId: String, name: String, tokenHash: String, joinedAt: Date, player: String? = nil) {
        self.id = id
        self.sessionId = sessionId
        self.name = name
        self.tokenHash = tokenHash
        self.joinedAt = joinedAt
        self.player = player
    }
}

/// A map saved by a group under a name.
public struct SavedMapRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "savedMap"
    /// Row id.
    public var id: Int64?
    /// Owning group.
    public var groupId: Int64
    /// Name, unique in the group.
    public var name: String
    /// The map document's blob.
    public var digest: Digest
    /// When it was saved.
    public var savedAt: Date

    /// Creates a record (`id` nil until inserted).
    public init(id: Int64?, groupId: Int64, name: String, digest: Digest, savedAt: Date) {
        self.id = id
        self.groupId = groupId
        self.name = name
        self.digest = digest
        self.savedAt = savedAt
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// What a session event does to the session's grabs (table `grabLease`, migration `v13-grab-leases`): a grab is a
/// row leased by the replica that granted it, which renews the lease while it runs; a replica that dies stops
/// renewing, and another releases the grab once the lease has ended.
public enum GrabChange: Sendable, Hashable {
    /// `participant` holds `entity` now (taking it over from any holder), leased by `replica` until `until`.
    case hold(entity: String, participant: String, replica: String, until: Date)
    /// Nobody holds `entity` now.
    case drop(entity: String)
}

extension Date {
    /// Whole milliseconds since 1970: how a grab lease's end is stored (`grabLease.expiresAt`).
    public var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// A participant's sockets on one replica, as the catalog keeps them (table `presence`): what every replica answers
/// "who is connected" from, leased like grabs.
public struct Presence: Sendable, Hashable {
    public var session: String
    public var participant: String
    /// Their name, for the `left` event another replica sends when the lease ends.
    public var name: String
    public var replica: String

    public init(session: String, participant: String, name: String, replica: String) {
        self.session = session
        self.participant = participant
        self.name = name
        self.replica = replica
    }
}

/// A grab as the catalog keeps it.
public struct HeldGrab: Sendable, Hashable {
    public var session: String
    public var entity: String
    public var participant: String

    public init(session: String, entity: String, participant: String) {
        self.session = session
        self.entity = entity
        self.participant = participant
    }
}

/// One event of a session's log: its body (what the host is sent) and, when participants are sent something else,
/// the views (JSON).
public struct LoggedEvent: Sendable, Hashable {
    /// Sequence number.
    public var seq: Int64
    /// The event's JSON.
    public var body: String
    /// What participants are sent instead, when not all of them are sent `body`.
    public var views: String?

    /// An event as logged.
    public init(seq: Int64, body: String, views: String?) {
        self.seq = seq
        self.body = body
        self.views = views
    }
}

/// What a map's references resolve to: assets (with their variants), other blobs, and what is missing.
public struct ResolvedReferences: Sendable {
    /// Referenced assets, as listed for clients.
    public var assets: [AssetListing]
    /// Referenced blobs that are not assets.
    public var blobs: [BlobRecord]
    /// Referenced digests with no blob.
    public var missing: [Digest]
    /// Everything a participant may fetch: the references and every variant and rendition of every asset (not the
    /// map's own blob, which may hold what some participants may not see).
    public var reachable: Set<Digest>

    /// Creates a resolution.
    public init(assets: [AssetListing], blobs: [BlobRecord], missing: [Digest], reachable: Set<Digest>) {
        self.assets = assets
        self.blobs = blobs
        self.missing = missing
        self.reachable = reachable
    }

    /// Resolves `references` from what a backend read of them: the assets among them (kind, name and footprint; one
    /// without a valid footprint counts as a blob), the blob rows, the assets' variants and renditions, and the pack
    /// each asset is named after. Assets, blobs and missing digests come in digest order.
    public init(
        _ references: Set<Digest>, assets: [Digest: (kind: String, name: String, footprint: Footprint?)], blobs: [Digest: BlobRecord],
        variants: [Digest: [AssetDescriptor.Variant]], renditions: [Digest: [String: AssetDescriptor.Rendition]],
        packs: [Digest: (name: String, version: String)], pending: [Digest: [String]] = [:]
    ) {
        self.init(assets: [], blobs: [], missing: [], reachable: references)
        reachable.formUnion(renditions.values.flatMap { $0.values.map(\.digest) })
        for digest in references.sorted() {
            if let asset = assets[digest], let footprint = asset.footprint {
                let assetVariants = variants[digest] ?? []
                reachable.formUnion(assetVariants.map(\.digest))
                self.assets.append(AssetListing(
                    digest: digest, kind: AssetKind(rawValue: asset.kind), name: asset.name, pack: packs[digest]?.name ?? "",
                    footprint: footprint, variants: assetVariants, packVersion: packs[digest]?.version,
                    preview: renditions[digest]?["preview"], pending: pending[digest],
                    compatible: renditions[digest]?["compatible"]))
            } else if let blob = blobs[digest] {
                self.blobs.append(blob)
            } else {
                missing.append(digest)
            }
        }
    }
}

extension SQLiteCatalog {
    /// Resolves a map's references against the catalog. With `group`, each asset names the pack (and version) it
    /// came from: one of that group's packs, else a public one (another group's private pack is never named).
    public func resolve(_ references: Set<Digest>, group: Int64?) throws(CatalogError) -> ResolvedReferences {
        try read { db in try Self.resolve(references, group: group, db) }
    }

    static func resolve(_ references: Set<Digest>, group: Int64? = nil, _ db: Database) throws -> ResolvedReferences {
        let sorted = references.sorted()
        var assets: [Digest: AssetRecord] = [:]
        var blobs: [Digest: BlobRecord] = [:]
        // A few queries per 500 references, not two per reference: maps of 10,000 references are normal.
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let chunk = Array(sorted[start..<min(start + 500, sorted.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let arguments = StatementArguments(chunk)
            for asset in try AssetRecord.fetchAll(db, sql: "SELECT * FROM asset WHERE digest IN (\(marks))", arguments: arguments) {
                assets[asset.digest] = asset
            }
            for blob in try BlobRecord.fetchAll(db, sql: "SELECT * FROM blob WHERE digest IN (\(marks))", arguments: arguments) {
                blobs[blob.digest] = blob
            }
        }
        let variantsByAsset = try variants(of: Set(assets.keys), db)
        let renditions = try renditions(of: Set(assets.keys), db)
        let packs = try group.map { try packsHolding(Set(assets.keys), group: $0, db) } ?? [:]
        return ResolvedReferences(
            references, assets: assets.mapValues { ($0.kind, $0.name, Footprint(width: $0.footprintWidth, height: $0.footprintHeight)) },
            blobs: blobs, variants: variantsByAsset, renditions: renditions, packs: packs,
            pending: try pendingRoles(of: Set(assets.keys), db))
    }

    /// For each asset, a pack that holds it and the version: the group's own packs first, then public ones; current
    /// versions before older ones, then by name.
    static func packsHolding(_ assets: Set<Digest>, group: Int64, _ db: Database) throws -> [Digest: (name: String, version: String)] {
        var found: [Digest: (name: String, version: String)] = [:]
        let sorted = assets.sorted()
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let chunk = Array(sorted[start..<min(start + 500, sorted.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let rows = try Row.fetchAll(db, sql: """
                SELECT pva.assetDigest, p.name, v.version FROM packVersionAsset pva
                JOIN packVersion v ON v.id = pva.packVersionId JOIN pack p ON p.id = v.packId
                WHERE pva.assetDigest IN (\(marks)) AND (p.groupId = ? OR p.isPublic)
                ORDER BY p.groupId = ? DESC, p.currentVersionId = v.id DESC, p.name, v.id DESC
                """, arguments: StatementArguments(chunk) + [group, group])
            for row in rows {
                guard let digest = Digest.fromDatabaseValue(row["assetDigest"]), found[digest] == nil else { continue }
                found[digest] = (row["name"], row["version"])
            }
        }
        return found
    }

    /// Creates a session whose map blob is already stored; records everything it makes reachable.
    public func createSession(_ session: SessionRecord, mapBlob: BlobRecord, reachable: Set<Digest>) throws(CatalogError) {
        try write { db in
            try mapBlob.insert(db, onConflict: .ignore)
            try session.insert(db)
            for digest in reachable {
                try db.execute(sql: "INSERT OR IGNORE INTO sessionBlob (sessionId, digest) VALUES (?, ?)", arguments: [session.id, digest])
            }
        }
    }

    /// Replaces a session's map (its reachable blobs grow; nothing a participant already fetched is taken away). The
    /// map is the session as of `baseSeq`, whose event (the `map` event) is logged next: `baseSeq` MUST follow the
    /// session's last logged event, `conflict` otherwise (another replica logged one meanwhile), and nothing changes.
    public func setMap(session id: String, mapBlob: BlobRecord, reachable: Set<Digest>, baseSeq: Int64) throws(CatalogError) {
        try write { db in
            try mapBlob.insert(db, onConflict: .ignore)
            try db.execute(sql: "UPDATE session SET mapDigest = ?, baseSeq = ? WHERE id = ? AND lastSeq = ?",
                           arguments: [mapBlob.digest, baseSeq, id, baseSeq - 1])
            guard db.changesCount == 1 else { throw try Self.sequenceError(session: id, seq: baseSeq, db) }
            try db.execute(sql: "DELETE FROM sessionEvent WHERE sessionId = ? AND seq <= ?", arguments: [id, baseSeq])
            for digest in reachable {
                try db.execute(sql: "INSERT OR IGNORE INTO sessionBlob (sessionId, digest) VALUES (?, ?)", arguments: [id, digest])
            }
        }
    }

    /// Adds blobs a live op made reachable.
    public func addReachable(session id: String, _ digests: Set<Digest>) throws(CatalogError) {
        try write { db in
            for digest in digests {
                try db.execute(sql: "INSERT OR IGNORE INTO sessionBlob (sessionId, digest) VALUES (?, ?)", arguments: [id, digest])
            }
        }
    }

    /// A session by id.
    public func session(id: String) throws(CatalogError) -> SessionRecord? {
        try read { db in try SessionRecord.fetchOne(db, key: id) }
    }

    /// Every session's id.
    public func sessionIds() throws(CatalogError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT id FROM session") }
    }

    /// A session by join code.
    public func session(code: String) throws(CatalogError) -> SessionRecord? {
        try read { db in try SessionRecord.filter(Column("code") == code).fetchOne(db) }
    }

    /// Sessions in the lobby of a group: its group-visible sessions, and the private ones member `host`
    /// (``MemberRules/owner(_:)``) hosts.
    public func sessions(groupId: Int64, host: String?) throws(CatalogError) -> [SessionRecord] {
        try read { db in
            try SessionRecord.filter(Column("groupId") == groupId && (Column("visibility") == "group" || Column("host") == host))
                .order(Column("createdAt").desc).fetchAll(db)
        }
    }

    /// Participants of a session.
    public func participants(session id: String) throws(CatalogError) -> [ParticipantRecord] {
        try read { db in try ParticipantRecord.filter(Column("sessionId") == id).order(Column("joinedAt")).fetchAll(db) }
    }

    /// How many participants a session has.
    public func participantCount(session id: String) throws(CatalogError) -> Int {
        try read { db in try ParticipantRecord.filter(Column("sessionId") == id).fetchCount(db) }
    }

    /// Records a participant.
    public func addParticipant(_ participant: ParticipantRecord) throws(CatalogError) {
        try write { db in try participant.insert(db) }
    }

    /// Forgets one participant of a session: their token stops working. False when the session has no such participant.
    public func removeParticipant(_ id: String, session: String) throws(CatalogError) -> Bool {
        try write { db in try ParticipantRecord.filter(Column("id") == id && Column("sessionId") == session).deleteAll(db) > 0 }
    }

    /// Gives a session a new join code: the old one stops working. False when there is no such session.
    public func setCode(_ code: String, session id: String) throws(CatalogError) -> Bool {
        try write { db in
            try db.execute(sql: "UPDATE session SET code = ? WHERE id = ?", arguments: [code, id])
            return db.changesCount > 0
        }
    }

    /// Appends one event to a session's log and advances its last sequence number. `views` is what participants
    /// are sent instead of `body`, when not everyone is sent the same (JSON, as the server writes it). `seq` must
    /// follow the session's last: `conflict` otherwise, `notFound` without the session, and nothing is written.
    public func appendEvent(
        session id: String, seq: Int64, body: String, views: String?, grab: GrabChange?, isRoll: Bool
    ) throws(CatalogError) {
        try write { db in
            try db.execute(sql: "UPDATE session SET lastSeq = ? WHERE id = ? AND lastSeq = ?", arguments: [seq, id, seq - 1])
            guard db.changesCount == 1 else { throw try Self.sequenceError(session: id, seq: seq, db) }
            try db.execute(sql: "INSERT INTO sessionEvent (sessionId, seq, body, views) VALUES (?, ?, ?, ?)", arguments: [id, seq, body, views])
            if isRoll {
                try db.execute(sql: "INSERT INTO diceRoll (sessionId, seq, body) VALUES (?, ?, ?)", arguments: [id, seq, body])
            }
            switch grab {
            case .hold(let entity, let participant, let replica, let until):
                try db.execute(sql: """
                    INSERT INTO grabLease (sessionId, entity, participant, replica, expiresAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (sessionId, entity) DO UPDATE SET participant = excluded.participant, replica = excluded.replica,
                        expiresAt = excluded.expiresAt
                    """, arguments: [id, entity, participant, replica, until.millisecondsSince1970])
            case .drop(let entity):
                try db.execute(sql: "DELETE FROM grabLease WHERE sessionId = ? AND entity = ?", arguments: [id, entity])
            case nil:
                break
            }
        }
    }

    /// Who holds each grabbed entity of a session.
    public func grabs(session id: String) throws(CatalogError) -> [String: String] {
        try read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT entity, participant FROM grabLease WHERE sessionId = ?", arguments: [id])
            return Dictionary(rows.map { ($0["entity"], $0["participant"]) }) { $1 }
        }
    }

    /// Extends every lease `replica` holds (grabs and presence) to `until`; returns how many. A replica that holds none
    /// writes nothing: an idle server never waits for the file's write lock in the background (a foreground write
    /// queued behind it would wait twice the busy timeout).
    @discardableResult
    public func renewLeases(replica: String, until: Date) throws(CatalogError) -> Int {
        let holds = try read { db in
            try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM grabLease WHERE replica = ?) OR EXISTS (SELECT 1 FROM presence WHERE replica = ?)
                """, arguments: [replica, replica]) ?? false
        }
        guard holds else { return 0 }
        return try write { db in
            try db.execute(sql: "UPDATE grabLease SET expiresAt = ? WHERE replica = ?", arguments: [until.millisecondsSince1970, replica])
            let grabs = db.changesCount
            try db.execute(sql: "UPDATE presence SET expiresAt = ? WHERE replica = ?", arguments: [until.millisecondsSince1970, replica])
            return grabs + db.changesCount
        }
    }

    /// Records that a participant has a socket on a replica, leased until `until`.
    public func holdPresence(_ presence: Presence, until: Date) throws(CatalogError) {
        try write { db in
            try db.execute(sql: """
                INSERT INTO presence (sessionId, participant, replica, name, expiresAt) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (sessionId, participant, replica) DO UPDATE SET name = excluded.name, expiresAt = excluded.expiresAt
                """, arguments: [presence.session, presence.participant, presence.replica, presence.name, until.millisecondsSince1970])
        }
    }

    /// Forgets that a participant has a socket on a replica.
    public func dropPresence(session id: String, participant: String, replica: String) throws(CatalogError) {
        try write { db in
            try db.execute(
                sql: "DELETE FROM presence WHERE sessionId = ? AND participant = ? AND replica = ?", arguments: [id, participant, replica])
        }
    }

    /// The participants with a socket on any replica whose lease runs past `date`.
    public func present(session id: String, at date: Date) throws(CatalogError) -> Set<String> {
        try read { db in
            Set(try String.fetchAll(
                db, sql: "SELECT DISTINCT participant FROM presence WHERE sessionId = ? AND expiresAt > ?",
                arguments: [id, date.millisecondsSince1970]))
        }
    }

    /// Deletes and returns the presence whose lease ended before `date`, at most `limit`; writes only when there is one.
    public func takeExpiredPresence(before date: Date, limit: Int) throws(CatalogError) -> [Presence] {
        let any = try read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM presence WHERE expiresAt < ?)", arguments: [date.millisecondsSince1970])
                ?? false
        }
        guard any else { return [] }
        return try write { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT sessionId, participant, name, replica FROM presence WHERE expiresAt < ? ORDER BY expiresAt LIMIT ?
                """, arguments: [date.millisecondsSince1970, limit])
            let taken = rows.map { Presence(session: $0["sessionId"], participant: $0["participant"], name: $0["name"], replica: $0["replica"]) }
            for presence in taken {
                try db.execute(
                    sql: "DELETE FROM presence WHERE sessionId = ? AND participant = ? AND replica = ?",
                    arguments: [presence.session, presence.participant, presence.replica])
            }
            return taken
        }
    }

    /// The grabs whose lease ended before `date`, oldest first, at most `limit`.
    public func expiredGrabs(before date: Date, limit: Int) throws(CatalogError) -> [HeldGrab] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT sessionId, entity, participant FROM grabLease WHERE expiresAt < ? ORDER BY expiresAt LIMIT ?
                """, arguments: [date.millisecondsSince1970, limit]).map {
                HeldGrab(session: $0["sessionId"], entity: $0["entity"], participant: $0["participant"])
            }
        }
    }

    /// Why `seq` cannot be logged next in a session: there is no such session, or its last event is not `seq - 1`.
    static func sequenceError(session id: String, seq: Int64, _ db: Database) throws -> CatalogError {
        guard let last = try Int64.fetchOne(db, sql: "SELECT lastSeq FROM session WHERE id = ?", arguments: [id]) else {
            return CatalogError(.notFound, "there is no session \(id)")
        }
        return CatalogError(.conflict, "session \(id) has logged event \(last); \(seq) does not follow it")
    }

    /// Logged events after `seq`, oldest first.
    public func events(session id: String, after seq: Int64) throws(CatalogError) -> [LoggedEvent] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT seq, body, views FROM sessionEvent WHERE sessionId = ? AND seq > ? ORDER BY seq",
                             arguments: [id, seq]).map { LoggedEvent(seq: $0["seq"], body: $0["body"], views: $0["views"]) }
        }
    }

    /// The bytes of the logged events after `seq` (bodies and views), without reading them.
    public func eventBytes(session id: String, after seq: Int64) throws(CatalogError) -> Int {
        try read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT coalesce(sum(length(CAST(body AS BLOB)) + coalesce(length(CAST(views AS BLOB)), 0)), 0)
                    FROM sessionEvent WHERE sessionId = ? AND seq > ?
                    """,
                arguments: [id, seq]) ?? 0
        }
    }

    /// Folds a session's log into a new base map: the map (already stored as a blob) is the session as of `baseSeq`;
    /// the `keeping` events up to it stay for clients that reconnect from one of them, older ones are deleted. Does
    /// nothing when the session has a later base already (a map replaced meanwhile); returns whether it folded.
    @discardableResult
    public func fold(session id: String, mapBlob: BlobRecord, baseSeq: Int64, keeping: Int64) throws(CatalogError) -> Bool {
        try write { db in
            guard let base = try Int64.fetchOne(db, sql: "SELECT baseSeq FROM session WHERE id = ?", arguments: [id]), base <= baseSeq else { return false }
            try mapBlob.insert(db, onConflict: .ignore)
            try db.execute(sql: "UPDATE session SET mapDigest = ?, baseSeq = ? WHERE id = ?", arguments: [mapBlob.digest, baseSeq, id])
            try db.execute(sql: "DELETE FROM sessionEvent WHERE sessionId = ? AND seq <= ?", arguments: [id, baseSeq - keeping])
            return true
        }
    }

    /// For each asset among `digests`, the blobs that show it (the descriptor, its variants and renditions); other
    /// digests map to themselves.
    public func art(of digests: Set<Digest>) throws(CatalogError) -> [Digest: Set<Digest>] {
        try read { db in
            let variants = try Self.variants(of: digests, db)
            var result: [Digest: Set<Digest>] = [:]
            for digest in digests {
                var blobs: Set<Digest> = [digest]
                blobs.formUnion((variants[digest] ?? []).map(\.digest))
                blobs.formUnion(try Self.renditionDigests(of: [digest], db))
                result[digest] = blobs
            }
            return result
        }
    }

    /// Pictures participants uploaded into a session (not its members' uploads): digest and participant id.
    public func participantUploads(session id: String) throws(CatalogError) -> [(digest: Digest, participant: String)] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT u.digest, u.uploader FROM privateUpload u JOIN participant p ON p.id = u.uploader AND p.sessionId = ?
                WHERE u.scope = ?
                """, arguments: [id, "session:" + id]).compactMap { row in
                Digest.fromDatabaseValue(row["digest"]).map { ($0, row["uploader"]) }
            }
        }
    }

    /// Saves a map under a name for a group, pinning the art it reaches; refuses (conflict) when the name is taken:
    /// saving never overwrites.
    public func saveMap(group groupId: Int64, name: String, blob: BlobRecord, reachable: Set<Digest>) throws(CatalogError) -> SavedMapRecord {
        try write { db in
            if try SavedMapRecord.filter(Column("groupId") == groupId && Column("name") == name).fetchOne(db) != nil {
                throw CatalogError(.conflict, "a map named '\(name)' is already saved; delete it first or choose another name")
            }
            try blob.insert(db, onConflict: .ignore)
            var map = SavedMapRecord(id: nil, groupId: groupId, name: name, digest: blob.digest, savedAt: Date())
            try map.insert(db)
            for digest in reachable {
                try db.execute(sql: "INSERT OR IGNORE INTO savedMapBlob (savedMapId, digest) VALUES (?, ?)", arguments: [map.id, digest])
            }
            return map
        }
    }

    /// A group's saved maps, by name.
    public func savedMaps(group groupId: Int64) throws(CatalogError) -> [SavedMapRecord] {
        try read { db in try SavedMapRecord.filter(Column("groupId") == groupId).order(Column("name")).fetchAll(db) }
    }

    /// Deletes a saved map; false when absent.
    @discardableResult
    public func deleteMap(group groupId: Int64, name: String) throws(CatalogError) -> Bool {
        try write { db in
            try SavedMapRecord.filter(Column("groupId") == groupId && Column("name") == name).deleteAll(db) > 0
        }
    }
}
