import Foundation
import GRDB
import HoardCore

/// One private upload as listed to the participant or member who made it.
public struct UploadListing: Sendable, Hashable {
    /// The picture.
    public var digest: Digest
    /// Its size in bytes.
    public var size: Int64
    /// Its media type.
    public var mediaType: String
    /// The session it went into; nil for the member's own space.
    public var session: String?
    /// When it was uploaded into that scope.
    public var uploadedAt: Date

    /// Creates a listing.
    public init(digest: Digest, size: Int64, mediaType: String, session: String?, uploadedAt: Date) {
        self.digest = digest
        self.size = size
        self.mediaType = mediaType
        self.session = session
        self.uploadedAt = uploadedAt
    }
}

/// What forgetting a private upload changed.
public struct ForgottenUpload: Sendable, Hashable {
    /// The session whose participants no longer reach the blob. Nil for a member's upload, and when the same bytes
    /// are also a pack's art or a group's upload, which the session keeps reaching as such.
    public var unreachableIn: String?

    /// Creates an outcome.
    public init(unreachableIn: String?) { self.unreachableIn = unreachableIn }
}

extension SQLiteCatalog {
    // MARK: Listing what one person uploaded

    /// The private uploads `principal` made (``PrivateUploadRecord/isUploaded(by:)``), newest first: one page of at
    /// most `limit` after skipping `offset`, and how many there are in all.
    public func uploads(by principal: Principal, offset: Int, limit: Int) throws(CatalogError) -> (page: [UploadListing], total: Int) {
        let space = UploadScope.member(groupId: principal.groupId, id: principal.memberId).description
        let (condition, arguments): (String, StatementArguments) = if let participantId = principal.participantId {
            ("p.scope = ? AND p.uploader = ?", [UploadScope.session(principal.sessionId ?? "").description, participantId])
        } else {
            ("p.uploader = ? AND (p.scope = ? OR (p.scope LIKE 'session:%' AND p.groupId = ?))", [principal.owner, space, principal.groupId])
        }
        return try read { db in
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM privateUpload p WHERE \(condition)", arguments: arguments) ?? 0
            let rows = try Row.fetchAll(db, sql: """
                SELECT p.scope, p.digest, p.createdAt, b.size, b.mediaType FROM privateUpload p JOIN blob b ON b.digest = p.digest
                WHERE \(condition) ORDER BY p.createdAt DESC, p.scope, p.digest LIMIT ? OFFSET ?
                """, arguments: arguments + [limit, offset])
            let page = rows.compactMap { row -> UploadListing? in
                guard let digest = Digest.fromDatabaseValue(row["digest"]) else { return nil }
                return UploadListing(
                    digest: digest, size: row["size"], mediaType: row["mediaType"],
                    session: UploadScope.session(of: row["scope"]),
                    uploadedAt: row["createdAt"])
            }
            return (page, total)
        }
    }

    /// The private upload of `digest` in one scope, or nil.
    public func privateUpload(_ digest: Digest, scope: UploadScope) throws(CatalogError) -> PrivateUploadRecord? {
        try read { db in
            try PrivateUploadRecord.filter(Column("scope") == scope.description && Column("digest") == digest).fetchOne(db)
        }
    }

    // MARK: Forgetting

    /// Forgets one private upload, in one transaction: its row goes (so it no longer counts against the group's quota
    /// and garbage collection may free its bytes), and for a session upload so does the session's reach of it (its
    /// `sessionBlob` row) — unless a pack or a group upload holds the same bytes, which the session may reach as
    /// such. Nil when there was no such upload.
    public func forgetUpload(_ digest: Digest, scope: UploadScope) throws(CatalogError) -> ForgottenUpload? {
        try write { db in
            let row = PrivateUploadRecord.filter(Column("scope") == scope.description && Column("digest") == digest)
            guard try row.deleteAll(db) > 0 else { return nil }
            guard case .session(let session) = scope else { return ForgottenUpload(unreachableIn: nil) }
            try db.execute(sql: """
                DELETE FROM sessionBlob WHERE sessionId = :s AND digest = :d
                AND NOT EXISTS (SELECT 1 FROM variant WHERE blobDigest = :d) AND NOT EXISTS (SELECT 1 FROM rendition WHERE blobDigest = :d)
                AND NOT EXISTS (SELECT 1 FROM asset WHERE digest = :d) AND NOT EXISTS (SELECT 1 FROM packVersion WHERE manifestDigest = :d)
                AND NOT EXISTS (SELECT 1 FROM upload WHERE digest = :d)
                """, arguments: ["s": session, "d": digest])
            return ForgottenUpload(unreachableIn: db.changesCount > 0 ? session : nil)
        }
    }

    /// Ends a session, in one transaction: the session row and, with it, its participants (their tokens), its
    /// `sessionBlob` rows and its event log; and the private uploads made in it. Its join code is then unknown. The
    /// bytes stay until garbage collection finds nothing else references them. False when there was no such session.
    @discardableResult
    public func deleteSession(id: String) throws(CatalogError) -> Bool {
        try write { db in
            try PrivateUploadRecord.filter(Column("scope") == UploadScope.session(id).description).deleteAll(db)
            return try SessionRecord.deleteOne(db, key: id)
        }
    }
}
