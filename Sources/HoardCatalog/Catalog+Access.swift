import Foundation
import GRDB
import HoardCore

/// What a member token may do (`token.role`, migration `v11-roles`).
public enum TokenRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// Reads its group's packs and public ones, imports packs, hosts sessions, uploads.
    case member
    /// A member who also manages the group: deletes and publishes its packs, invites members, lists and revokes
    /// its tokens.
    case owner
    /// The server's operator, not a group's: acts on every group.
    case `operator`
}

/// Who a request acts for: a member of one group (an owner of it, or the server's operator) through one of their
/// tokens, or a participant of one session.
public struct Principal: Sendable, Hashable {
    /// The group's row id.
    public var groupId: Int64
    /// The group's name.
    public var group: String
    /// What the token may do.
    public var role: TokenRole
    /// Whether it may act on every group (an operator).
    public var isAdmin: Bool { role == .operator }
    /// Whether it may manage its group (an owner or an operator).
    public var managesGroup: Bool { isMember && role != .member }
    /// The token's label (a participant's display name).
    public var tokenName: String
    /// The member the token belongs to (`member.id`); -1 for a participant.
    public var memberId: Int64
    /// The member's name, display text only (a participant's display name).
    public var memberName: String
    /// For a participant token: the one session it belongs to.
    public var sessionId: String?
    /// For a participant token: the participant's id.
    public var participantId: String?
    /// For a participant who joined with a player key: the player they are in the session's group
    /// (``PlayerKey/player(inGroup:)``), whom their dice statistics count for.
    public var player: String?

    /// Creates a member principal.
    public init(groupId: Int64, group: String, role: TokenRole, member memberId: Int64, memberName: String, tokenName: String) {
        self.groupId = groupId
        self.group = group
        self.role = role
        self.memberId = memberId
        self.memberName = memberName
        self.tokenName = tokenName
    }

    /// Creates a participant principal: no group, no role beyond a member's, one session.
    public init(participant: String, name: String, session: String, player: String? = nil) {
        self.init(groupId: -1, group: "", role: .member, member: -1, memberName: name, tokenName: name)
        sessionId = session
        participantId = participant
        self.player = player
    }

    /// Whether this is a group member (not a session participant).
    public var isMember: Bool { sessionId == nil }

    /// What a member's refs, shares, sessions (`host`) and uploads (`uploader`, scope) hold to say they are theirs:
    /// their member id, never a name (``MemberRules/owner(_:)``).
    public var owner: String { MemberRules.owner(memberId) }
}

/// What one blob is and who may read it, as the access index keeps it.
public struct BlobAccess: Sendable, Hashable {
    /// Size in bytes.
    public var size: Int64
    /// Media type.
    public var mediaType: String
    /// Whether a public pack references it.
    public var isPublic: Bool
    /// Groups that own a pack referencing it or uploaded it.
    public var groups: Set<Int64>

    /// Creates an entry.
    public init(size: Int64, mediaType: String, isPublic: Bool, groups: Set<Int64>) {
        self.size = size
        self.mediaType = mediaType
        self.isPublic = isPublic
        self.groups = groups
    }
}

/// A blob row and what refers to it, as the catalog has it: the packs (any version) that reference it and the groups
/// that uploaded it. Who may read it then depends only on those packs' owners and visibility.
public struct BlobOwners: Sendable, Hashable {
    /// Size in bytes.
    public var size: Int64
    /// Media type.
    public var mediaType: String
    /// Packs whose versions reference it (manifest, descriptor, variant or rendition), by row id.
    public var packs: [Int64]
    /// Groups that uploaded it (`PUT /v1/blobs`).
    public var uploaders: [Int64]

    /// Creates an entry.
    public init(size: Int64, mediaType: String, packs: [Int64], uploaders: [Int64]) {
        self.size = size
        self.mediaType = mediaType
        self.packs = packs
        self.uploaders = uploaders
    }
}

/// A pack's owner and visibility: all the access index keeps of it.
public struct PackAccess: Sendable, Hashable {
    /// The owning group.
    public var groupId: Int64
    /// Whether every group (and anonymous callers) may read it.
    public var isPublic: Bool

    /// Creates an entry.
    public init(groupId: Int64, isPublic: Bool) {
        self.groupId = groupId
        self.isPublic = isPublic
    }
}

/// What the access index loads when a server starts: everything but blobs (those are looked up when first asked,
/// see `AccessIndex`), so it grows with packs, tokens and sessions, not with assets.
public struct AccessBase: Sendable {
    /// Every pack, by row id.
    public var packs: [Int64: PackAccess]
    /// Every token (members' and participants'), by the hash of its secret.
    public var principals: [String: Principal]
    /// What each session's participants may fetch, by session id.
    public var sessions: [String: Set<Digest>]
    /// The last change-log sequence number included.
    public var lastChange: Int64

    /// Creates a base.
    public init(packs: [Int64: PackAccess], principals: [String: Principal], sessions: [String: Set<Digest>], lastChange: Int64) {
        self.packs = packs
        self.principals = principals
        self.sessions = sessions
        self.lastChange = lastChange
    }
}

/// One row of the access change log (`accessChange`, migration `v8-catalog-scale`), written by triggers in the same
/// transaction as the change it describes, whichever process writes.
public struct AccessChange: Sendable, Hashable {
    /// What changed.
    public enum Kind: String, Sendable {
        /// A pack was created, deleted, published or unpublished: `key` is its id.
        case pack
        /// A pack version was recorded: `key` is its id; its blobs gained an owner.
        case version
        /// A blob row was deleted, or an upload row added or removed: `key` is the digest.
        case blob
        /// A token was created or deleted: `key` is its secret's hash.
        case token
        /// A session participant joined or was removed: `key` is their token's hash.
        case participant
        /// A session was deleted: `key` is its id.
        case session
        /// A session reaches one more blob: `key` is the session's id, a space and the digest.
        case reach
        /// An asset got generated pictures (a rendition job finished): `key` is its digest. Sessions that show it let
        /// their participants fetch the new pictures.
        case art
        /// Something the index cannot apply piecemeal (a group renamed): rebuild.
        case reset
    }

    /// The sequence number: commit order.
    public var seq: Int64
    /// What changed.
    public var kind: Kind
    /// Which row.
    public var key: String

    /// Creates a change.
    public init(seq: Int64, kind: Kind, key: String) {
        self.seq = seq
        self.kind = kind
        self.key = key
    }
}

extension SQLiteCatalog {
    /// Creates a group; throws `invalid` when the name cannot name a group (``GroupName/problem(with:)``) and
    /// `conflict` when it is taken, also by a name that differs from it only in case or Unicode form.
    @discardableResult
    public func createGroup(named name: String, quotaBytes: Int64?) throws(CatalogError) -> GroupRecord {
        let name = try GroupName.canonical(name)
        return try write { db in
            if let existing = try GroupRecord.filter(GroupRecord.Columns.name == name).fetchOne(db) {
                throw CatalogError(.conflict, "a group named '\(existing.name)' already exists; choose another name")
            }
            let key = GroupName.key(name)
            if let existing = try GroupRecord.fetchAll(db).first(where: { GroupName.key($0.name) == key }) {
                throw CatalogError(
                    .conflict,
                    "a group named '\(existing.name)' already exists, and '\(name)' differs from it only in case or accents; "
                        + "choose another name")
            }
            var group = GroupRecord(id: nil, name: name, createdAt: Date(), quotaBytes: quotaBytes)
            try group.insert(db)
            return group
        }
    }

    /// Sets or clears a group's byte quota. False when the group does not exist.
    @discardableResult
    public func setQuota(_ bytes: Int64?, group name: String) throws(CatalogError) -> Bool {
        try write { db in
            guard var group = try GroupRecord.filter(GroupRecord.Columns.name == name).fetchOne(db) else { return false }
            group.quotaBytes = bytes
            try group.update(db)
            return true
        }
    }

    /// Records that a group uploaded a blob (the blob row is created if new). Idempotent.
    public func recordUpload(_ blob: BlobRecord, groupId: Int64) throws(CatalogError) {
        try write { db in
            try blob.insert(db, onConflict: .ignore)
            try UploadRecord(digest: blob.digest, groupId: groupId, createdAt: Date()).insert(db, onConflict: .ignore)
        }
    }

    /// Bytes a group holds: distinct blobs referenced by its packs (every version), its uploads and its members' and
    /// sessions' private uploads.
    public func usage(groupId: Int64) throws(CatalogError) -> Int64 {
        try read { db in
            try Int64.fetchOne(db, sql: """
                SELECT COALESCE(SUM(size), 0) FROM blob WHERE digest IN (
                    SELECT v.manifestDigest FROM packVersion v JOIN pack p ON p.id = v.packId WHERE p.groupId = :g
                    UNION SELECT pva.assetDigest FROM packVersionAsset pva JOIN packVersion v ON v.id = pva.packVersionId
                        JOIN pack p ON p.id = v.packId WHERE p.groupId = :g
                    UNION SELECT va.blobDigest FROM variant va JOIN packVersionAsset pva ON pva.assetDigest = va.assetDigest
                        JOIN packVersion v ON v.id = pva.packVersionId JOIN pack p ON p.id = v.packId WHERE p.groupId = :g
                    UNION SELECT r.blobDigest FROM rendition r JOIN packVersionAsset pva ON pva.assetDigest = r.assetDigest
                        JOIN packVersion v ON v.id = pva.packVersionId JOIN pack p ON p.id = v.packId WHERE p.groupId = :g
                    UNION SELECT digest FROM upload WHERE groupId = :g
                    UNION SELECT digest FROM privateUpload WHERE groupId = :g)
                """, arguments: ["g": groupId]) ?? 0
        }
    }

    /// The group record by name.
    public func group(named name: String) throws(CatalogError) -> GroupRecord? {
        try read { db in try GroupRecord.filter(GroupRecord.Columns.name == name).fetchOne(db) }
    }

    /// The group an import into `name` goes to: exactly that name, else the one name that is the same under
    /// ``GroupName/key(_:)`` ("ÉCLAIR" finds "éclair"); nil when the import would create it.
    public func group(matching name: String) throws(CatalogError) -> GroupRecord? {
        try read { db in try Self.existingGroup(named: name, db) }
    }

    /// Which group owns a pack, and whether it is public; nil when absent (`group` as for ``packRecord(named:group:_:)``).
    public func packOwner(named name: String, group: String?) throws(CatalogError) -> (groupId: Int64, isPublic: Bool)? {
        try read { db in
            try Self.packRecord(named: name, group: group, db).map { ($0.groupId, $0.isPublic) }
        }
    }

    /// Everything but blobs that access decisions need, in one transaction, with the change log's last number.
    public func accessBase() throws(CatalogError) -> AccessBase {
        try read { db in
            var packs: [Int64: PackAccess] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, groupId, isPublic FROM pack") {
                packs[row["id"]] = PackAccess(groupId: row["groupId"], isPublic: row["isPublic"])
            }
            var principals: [String: Principal] = [:]
            for row in try Row.fetchAll(db, sql: """
                \(Self.principalSelect)
                """) {
                principals[row["secretHash"]] = Self.principal(row)
            }
            for row in try Row.fetchAll(db, sql: "SELECT id, sessionId, name, tokenHash, player FROM participant") {
                principals[row["tokenHash"]] = Principal(participant: row["id"], name: row["name"], session: row["sessionId"], player: row["player"])
            }
            var sessions: [String: Set<Digest>] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT sessionId, digest FROM sessionBlob") {
                guard let digest = Digest.fromDatabaseValue(row["digest"]) else { continue }
                sessions[row["sessionId"], default: []].insert(digest)
            }
            let last = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM accessChange") ?? 0
            return AccessBase(packs: packs, principals: principals, sessions: sessions, lastChange: last)
        }
    }

    /// A blob and what refers to it; nil when the catalog has no such blob. A handful of indexed lookups.
    public func blobOwners(_ digest: Digest) throws(CatalogError) -> BlobOwners? {
        try read { db in try Self.blobOwners(digest, db) }
    }

    /// Several blobs' owners in one transaction (absent ones are left out).
    public func blobOwners(_ digests: [Digest]) throws(CatalogError) -> [Digest: BlobOwners] {
        try read { db in
            var result: [Digest: BlobOwners] = [:]
            for digest in digests { result[digest] = try Self.blobOwners(digest, db) }
            return result
        }
    }

    /// The packs whose versions reference blob `:d`: each branch an index search (ListingTests checks the plan).
    static let blobPacksSQL = """
        SELECT packId FROM packVersion WHERE manifestDigest = :d
        UNION SELECT v.packId FROM packVersionAsset pva JOIN packVersion v ON v.id = pva.packVersionId WHERE pva.assetDigest = :d
        UNION SELECT v.packId FROM variant va JOIN packVersionAsset pva ON pva.assetDigest = va.assetDigest
            JOIN packVersion v ON v.id = pva.packVersionId WHERE va.blobDigest = :d
        UNION SELECT v.packId FROM rendition r JOIN packVersionAsset pva ON pva.assetDigest = r.assetDigest
            JOIN packVersion v ON v.id = pva.packVersionId WHERE r.blobDigest = :d
        """

    static func blobOwners(_ digest: Digest, _ db: Database) throws -> BlobOwners? {
        guard let blob = try Row.fetchOne(try db.cachedStatement(sql: "SELECT size, mediaType FROM blob WHERE digest = ?"), arguments: [digest])
        else { return nil }
        let packs = try Int64.fetchAll(try db.cachedStatement(sql: blobPacksSQL), arguments: ["d": digest])
        let uploaders = try Int64.fetchAll(try db.cachedStatement(sql: "SELECT groupId FROM upload WHERE digest = ?"), arguments: [digest])
        return BlobOwners(size: blob["size"], mediaType: blob["mediaType"], packs: packs, uploaders: uploaders)
    }

    /// Change-log rows after `seq`, oldest first, at most `limit`; and the oldest number the log still holds (rows
    /// are pruned), so a reader can tell it missed some.
    public func accessChanges(after seq: Int64, limit: Int) throws(CatalogError) -> (changes: [AccessChange], oldest: Int64?) {
        try read { db in
            let oldest = try Int64.fetchOne(db, sql: "SELECT MIN(seq) FROM accessChange")
            let changes = try Row.fetchAll(
                try db.cachedStatement(sql: "SELECT seq, kind, key FROM accessChange WHERE seq > ? ORDER BY seq LIMIT ?"),
                arguments: [seq, limit]
            ).map { row in
                AccessChange(seq: row["seq"], kind: AccessChange.Kind(rawValue: row["kind"]) ?? .reset, key: row["key"])
            }
            return (changes, oldest)
        }
    }

    /// The last change-log number (0 when empty).
    public func lastAccessChange() throws(CatalogError) -> Int64 {
        try read { db in try Int64.fetchOne(try db.cachedStatement(sql: "SELECT COALESCE(MAX(seq), 0) FROM accessChange")) ?? 0 }
    }

    /// Forgets change-log rows up to `seq` written before `date`; the last row is always kept, so numbering goes on.
    public func pruneAccessChanges(through seq: Int64, writtenBefore date: Date) throws(CatalogError) {
        try write { db in
            try db.execute(sql: """
                DELETE FROM accessChange WHERE seq <= ? AND at < ? AND seq < (SELECT MAX(seq) FROM accessChange)
                """, arguments: [seq, Int64(date.timeIntervalSince1970)])
        }
    }

    /// A pack's owner and visibility; nil when it was deleted.
    public func packAccess(id: Int64) throws(CatalogError) -> PackAccess? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT groupId, isPublic FROM pack WHERE id = ?", arguments: [id]).map {
                PackAccess(groupId: $0["groupId"], isPublic: $0["isPublic"])
            }
        }
    }

    /// The principal of a member's or a session participant's token by its secret's hash; nil when there is none.
    public func principal(tokenHash: String) throws(CatalogError) -> Principal? {
        try read { db in
            if let member = try Row.fetchOne(db, sql: "\(Self.principalSelect) WHERE t.secretHash = ?", arguments: [tokenHash]) {
                return Self.principal(member)
            }
            return try Row.fetchOne(db, sql: "SELECT id, name, sessionId, player FROM participant WHERE tokenHash = ?", arguments: [tokenHash]).map {
                Principal(participant: $0["id"], name: $0["name"], session: $0["sessionId"], player: $0["player"])
            }
        }
    }

    /// The query of member tokens' principals.
    static let principalSelect = """
        SELECT t.secretHash, t.role, t.name, t.memberId, m.name AS memberName, g.id AS groupId, g.name AS groupName
        FROM token t JOIN "group" g ON g.id = t.groupId JOIN member m ON m.id = t.memberId
        """

    /// A member token's principal from a row of ``principalSelect``.
    static func principal(_ row: Row) -> Principal {
        Principal(
            groupId: row["groupId"], group: row["groupName"], role: TokenRole(rawValue: row["role"]) ?? .member, member: row["memberId"],
            memberName: row["memberName"], tokenName: row["name"])
    }

    /// Every blob a pack version references: its manifest, descriptors, variants and renditions.
    public func versionDigests(id: Int64) throws(CatalogError) -> [Digest] {
        try read { db in
            try Digest.fetchAll(db, sql: """
                SELECT manifestDigest FROM packVersion WHERE id = :v
                UNION ALL SELECT assetDigest FROM packVersionAsset WHERE packVersionId = :v
                UNION ALL SELECT va.blobDigest FROM packVersionAsset pva JOIN variant va ON va.assetDigest = pva.assetDigest
                    WHERE pva.packVersionId = :v
                UNION ALL SELECT r.blobDigest FROM packVersionAsset pva JOIN rendition r ON r.assetDigest = pva.assetDigest
                    WHERE pva.packVersionId = :v
                """, arguments: ["v": id])
        }
    }
}
