import Foundation
import GRDB
import HoardCore

/// Who a request acts for: a member of one group, possibly an admin of every group.
public struct Principal: Sendable, Hashable {
    /// The group's row id.
    public var groupId: Int64
    /// The group's name.
    public var group: String
    /// Whether it may act on every group.
    public var isAdmin: Bool
    /// The token's label (a participant's display name).
    public var tokenName: String
    /// For a participant token: the one session it belongs to.
    public var sessionId: String?
    /// For a participant token: the participant's id.
    public var participantId: String?

    /// Creates a member principal.
    public init(groupId: Int64, group: String, isAdmin: Bool, tokenName: String) {
        self.groupId = groupId
        self.group = group
        self.isAdmin = isAdmin
        self.tokenName = tokenName
    }

    /// Creates a participant principal: no group, no admin, one session.
    public init(participant: String, name: String, session: String) {
        self.init(groupId: -1, group: "", isAdmin: false, tokenName: name)
        sessionId = session
        participantId = participant
    }

    /// Whether this is a group member (not a session participant).
    public var isMember: Bool { sessionId == nil }
}

/// Everything the server needs to decide, in memory, who may read which blob.
public struct AccessSnapshot: Sendable {
    /// What one blob is and who may read it.
    public struct Entry: Sendable, Hashable {
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

    /// Every catalogued blob.
    public var blobs: [Digest: Entry]
    /// Every token (members' and participants'), by the hash of its secret.
    public var principals: [String: Principal]
    /// What each session's participants may fetch, by session id.
    public var sessions: [String: Set<Digest>]
}

extension Catalog {
    /// Creates a group; throws `conflict` when the name is taken.
    @discardableResult
    public func createGroup(named name: String, quotaBytes: Int64? = nil) throws(CatalogError) -> GroupRecord {
        try write { db in
            if try GroupRecord.filter(GroupRecord.Columns.name == name).fetchOne(db) != nil {
                throw CatalogError(.conflict, "a group named '\(name)' already exists")
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

    /// Stores a new token for a group: only the hash of its secret is kept. Throws `notFound` for an unknown group.
    @discardableResult
    public func addToken(group name: String, label: String, secretHash: String, isAdmin: Bool) throws(CatalogError) -> TokenRecord {
        try write { db in
            guard let group = try GroupRecord.filter(GroupRecord.Columns.name == name).fetchOne(db), let groupId = group.id else {
                throw CatalogError(.notFound, "no group named '\(name)'; create it with `hoard group create \(name)`")
            }
            var token = TokenRecord(id: nil, groupId: groupId, name: label, secretHash: secretHash, isAdmin: isAdmin, createdAt: Date())
            try token.insert(db)
            return token
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

    /// Which group owns a pack, and whether it is public; nil when absent.
    public func packOwner(named name: String) throws(CatalogError) -> (groupId: Int64, isPublic: Bool)? {
        try read { db in
            try PackRecord.filter(PackRecord.Columns.name == name).fetchOne(db).map { ($0.groupId, $0.isPublic) }
        }
    }

    /// A cheap value that changes whenever anything access depends on changes (for cache invalidation).
    public func accessFingerprint() throws(CatalogError) -> [Int64] {
        try read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT (SELECT COUNT(*) FROM packVersion), (SELECT COALESCE(MAX(id), 0) FROM packVersion),
                       (SELECT COUNT(*) FROM pack), (SELECT COUNT(*) FROM pack WHERE isPublic),
                       (SELECT COUNT(*) FROM upload), (SELECT COUNT(*) FROM token), (SELECT COALESCE(MAX(id), 0) FROM token),
                       (SELECT COUNT(*) FROM blob)
                """)
            // Participants and session reach are written only by the server, which updates its index in place.
            return (0..<8).map { row?[$0] ?? 0 }
        }
    }

    /// Reads everything access decisions need, in one transaction.
    public func accessSnapshot() throws(CatalogError) -> AccessSnapshot {
        try read { db in
            var blobs: [Digest: AccessSnapshot.Entry] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT digest, size, mediaType FROM blob") {
                guard let digest = Digest.fromDatabaseValue(row["digest"]) else { continue }
                blobs[digest] = AccessSnapshot.Entry(size: row["size"], mediaType: row["mediaType"], isPublic: false, groups: [])
            }
            let owners = try Row.fetchAll(db, sql: """
                SELECT v.manifestDigest AS digest, p.groupId, p.isPublic FROM packVersion v JOIN pack p ON p.id = v.packId
                UNION SELECT pva.assetDigest, p.groupId, p.isPublic FROM packVersionAsset pva
                    JOIN packVersion v ON v.id = pva.packVersionId JOIN pack p ON p.id = v.packId
                UNION SELECT va.blobDigest, p.groupId, p.isPublic FROM variant va JOIN packVersionAsset pva ON pva.assetDigest = va.assetDigest
                    JOIN packVersion v ON v.id = pva.packVersionId JOIN pack p ON p.id = v.packId
                UNION SELECT r.blobDigest, p.groupId, p.isPublic FROM rendition r JOIN packVersionAsset pva ON pva.assetDigest = r.assetDigest
                    JOIN packVersion v ON v.id = pva.packVersionId JOIN pack p ON p.id = v.packId
                UNION SELECT digest, groupId, 0 FROM upload
                """)
            for row in owners {
                guard let digest = Digest.fromDatabaseValue(row["digest"]) else { continue }
                let isPublic: Bool = row["isPublic"]
                blobs[digest]?.groups.insert(row["groupId"])
                if isPublic { blobs[digest]?.isPublic = true }
            }
            var principals: [String: Principal] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT t.secretHash, t.isAdmin, t.name, g.id AS groupId, g.name AS groupName FROM token t JOIN "group" g ON g.id = t.groupId
                """) {
                principals[row["secretHash"]] = Principal(
                    groupId: row["groupId"], group: row["groupName"], isAdmin: row["isAdmin"], tokenName: row["name"])
            }
            for row in try Row.fetchAll(db, sql: "SELECT id, sessionId, name, tokenHash FROM participant") {
                principals[row["tokenHash"]] = Principal(participant: row["id"], name: row["name"], session: row["sessionId"])
            }
            var sessions: [String: Set<Digest>] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT sessionId, digest FROM sessionBlob") {
                guard let digest = Digest.fromDatabaseValue(row["digest"]) else { continue }
                sessions[row["sessionId"], default: []].insert(digest)
            }
            return AccessSnapshot(blobs: blobs, principals: principals, sessions: sessions)
        }
    }
}
