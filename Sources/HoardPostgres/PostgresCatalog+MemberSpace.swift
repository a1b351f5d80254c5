import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// Refs, private uploads and shares, as `SQLiteCatalog`'s (HoardCatalog, `Catalog+MemberSpace.swift` and
/// `Catalog+Forgetting.swift`). Names and scopes sort byte for byte (`COLLATE "C"`), as SQLite's text does.
extension PostgresCatalog {
    // MARK: Refs

    /// A member's refs, by name.
    public func refs(group groupId: Int64, member: String) throws(CatalogError) -> [RefRecord] {
        try read("cannot list the refs of \(member)") { tx in
            try Self.refs(#"""
                SELECT "groupId", member, name, digest, "updatedAt" FROM ref WHERE "groupId" = \#(groupId) AND member = \#(member)
                ORDER BY name COLLATE "C"
                """#, tx)
        }
    }

    /// One ref of a member, or nil.
    public func ref(group groupId: Int64, member: String, name: String) throws(CatalogError) -> RefRecord? {
        try read("cannot read ref '\(name)'") { tx in try Self.ref(groupId, member, name, locking: false, tx) }
    }

    /// Points a ref at `digest` if it is as `expected`, in one transaction that locks the ref: two replicas moving the
    /// same ref from the same value cannot both succeed. The digest MUST already have a blob row.
    public func moveRef(
        group groupId: Int64, member: String, name: String, to digest: Digest, expected: RefExpectation
    ) throws(CatalogError) -> RefUpdate {
        try write("cannot move ref '\(name)'") { tx in
            let current = try Self.ref(groupId, member, name, locking: true, tx)
            guard expected.isMet(by: current?.digest) else { return .conflict(current: current?.digest) }
            let record = RefRecord(groupId: groupId, member: member, name: name, digest: digest)
            // Absent, nothing was locked: another replica may create it first, and then this one must not overwrite it.
            let onConflict = expected == .absent ? "DO NOTHING" : #"DO UPDATE SET digest = excluded.digest, "updatedAt" = excluded."updatedAt""#
            let written = try tx.execute(#"""
                INSERT INTO ref ("groupId", member, name, digest, "updatedAt")
                VALUES (\#(groupId), \#(member), \#(name), \#(digest), \#(record.updatedAt))
                ON CONFLICT ("groupId", member, name) \#(unescaped: onConflict)
                """#)
            guard written == 1 else { return .conflict(current: try Self.ref(groupId, member, name, locking: false, tx)?.digest) }
            return .moved(record)
        }
    }

    /// Deletes a ref if it is as `expected`. Nil when there was no such ref; otherwise the outcome.
    public func deleteRef(group groupId: Int64, member: String, name: String, expected: RefExpectation) throws(CatalogError) -> RefUpdate? {
        try write("cannot delete ref '\(name)'") { tx in
            guard let current = try Self.ref(groupId, member, name, locking: true, tx) else { return nil }
            guard expected.isMet(by: current.digest) else { return .conflict(current: current.digest) }
            try tx.execute(#"DELETE FROM ref WHERE "groupId" = \#(groupId) AND member = \#(member) AND name = \#(name)"#)
            return .moved(current)
        }
    }

    private static func ref(_ groupId: Int64, _ member: String, _ name: String, locking: Bool, _ tx: PostgresTransaction) throws -> RefRecord? {
        try refs(#"""
            SELECT "groupId", member, name, digest, "updatedAt" FROM ref WHERE "groupId" = \#(groupId) AND member = \#(member)
            AND name = \#(name) \#(unescaped: locking ? "FOR UPDATE" : "")
            """#, tx).first
    }

    private static func refs(_ query: PostgresQuery, _ tx: PostgresTransaction) throws -> [RefRecord] {
        try tx.rows(query, as: (Int64, String, String, Digest, Date).self).map {
            RefRecord(groupId: $0.0, member: $0.1, name: $0.2, digest: $0.3, updatedAt: $0.4)
        }
    }

    // MARK: Private uploads

    /// Records a private upload (and its blob row if new). A session upload also becomes something the session's
    /// participants may fetch (a `sessionBlob` row), like the art its map references. Idempotent.
    public func recordPrivateUpload(_ blob: BlobRecord, _ upload: PrivateUploadRecord, session: String?) throws(CatalogError) {
        try write("cannot record a private upload of blob \(blob.digest)") { tx in
            try Self.insert(blob, tx)
            try tx.execute(#"""
                INSERT INTO "privateUpload" (scope, digest, "groupId", uploader, "createdAt")
                VALUES (\#(upload.scope), \#(upload.digest), \#(upload.groupId), \#(upload.uploader), \#(upload.createdAt))
                ON CONFLICT DO NOTHING
                """#)
            if let session { try Self.addReachable(session: session, [blob.digest], tx) }
        }
    }

    /// A privately uploaded blob and every scope it was uploaded into; nil when it never was.
    public func privateUpload(_ digest: Digest) throws(CatalogError) -> (blob: BlobRecord, scopes: [String])? {
        try read("cannot read the private uploads of blob \(digest)") { tx in
            let scopes = try tx.values(
                #"SELECT scope FROM "privateUpload" WHERE digest = \#(digest) ORDER BY "createdAt", scope COLLATE "C""#, as: String.self)
            guard !scopes.isEmpty, let blob = try Self.blob(digest, tx) else { return nil }
            return (blob, scopes)
        }
    }

    /// The private upload of `digest` in one scope, or nil.
    public func privateUpload(_ digest: Digest, scope: UploadScope) throws(CatalogError) -> PrivateUploadRecord? {
        try read("cannot read a private upload of blob \(digest)") { tx in
            try tx.row(#"""
                SELECT "groupId", uploader, "createdAt" FROM "privateUpload" WHERE scope = \#(scope.description) AND digest = \#(digest)
                """#, as: (Int64, String, Date).self).map {
                PrivateUploadRecord(scope: scope, digest: digest, groupId: $0.0, uploader: $0.1, createdAt: $0.2)
            }
        }
    }

    /// The private uploads `principal` made (``PrivateUploadRecord/isUploaded(by:)``), newest first: one page of at
    /// most `limit` after skipping `offset`, and how many there are in all.
    public func uploads(by principal: Principal, offset: Int, limit: Int) throws(CatalogError) -> (page: [UploadListing], total: Int) {
        let space = UploadScope.member(groupId: principal.groupId, id: principal.memberId).description
        // A participant's: its session's scope, by its id. A member's: their space, and their group's sessions.
        let (scope, uploader, groupId): (String, String, Int64?) = if let participantId = principal.participantId {
            (UploadScope.session(principal.sessionId ?? "").description, participantId, nil)
        } else {
            (space, principal.owner, principal.groupId)
        }
        return try read("cannot list the uploads of \(principal.memberName)") { tx in
            // One row at least, for the count, even past the last page.
            let rows = try tx.rows(#"""
                WITH mine AS (
                    SELECT scope, digest, "createdAt" FROM "privateUpload" WHERE uploader = \#(uploader)
                    AND (scope = \#(scope) OR (\#(groupId)::bigint IS NOT NULL AND scope LIKE 'session:%' AND "groupId" = \#(groupId))))
                SELECT (SELECT count(*) FROM mine), page.scope, page.digest, page."createdAt", page.size, page."mediaType"
                FROM (SELECT 1) AS one LEFT JOIN LATERAL (
                    SELECT m.scope, m.digest, m."createdAt", b.size, b."mediaType" FROM mine m JOIN blob b ON b.digest = m.digest
                    ORDER BY m."createdAt" DESC, m.scope COLLATE "C", m.digest COLLATE "C" LIMIT \#(limit) OFFSET \#(offset)) AS page ON true
                ORDER BY page."createdAt" DESC, page.scope COLLATE "C", page.digest COLLATE "C"
                """#, as: (Int, String?, Digest?, Date?, Int64?, String?).self)
            let page = rows.compactMap { row -> UploadListing? in
                guard let scope = row.1, let digest = row.2, let uploadedAt = row.3, let size = row.4, let mediaType = row.5 else { return nil }
                return UploadListing(digest: digest, size: size, mediaType: mediaType, session: UploadScope.session(of: scope), uploadedAt: uploadedAt)
            }
            let total = rows.first?.0 ?? 0
            return (page, total)
        }
    }

    /// Forgets one private upload, in one transaction: its row goes, and for a session upload so does the session's
    /// reach of it (its `sessionBlob` row), unless a pack or a group upload holds the same bytes. Nil when there was
    /// no such upload.
    public func forgetUpload(_ digest: Digest, scope: UploadScope) throws(CatalogError) -> ForgottenUpload? {
        try write("cannot forget a private upload of blob \(digest)") { tx in
            let deleted = try tx.execute(#"DELETE FROM "privateUpload" WHERE scope = \#(scope.description) AND digest = \#(digest)"#)
            guard deleted > 0 else { return nil }
            guard case .session(let session) = scope else { return ForgottenUpload(unreachableIn: nil) }
            let unreached = try tx.execute(#"""
                DELETE FROM "sessionBlob" WHERE "sessionId" = \#(session) AND digest = \#(digest)
                AND NOT EXISTS (SELECT 1 FROM variant WHERE "blobDigest" = \#(digest))
                AND NOT EXISTS (SELECT 1 FROM rendition WHERE "blobDigest" = \#(digest))
                AND NOT EXISTS (SELECT 1 FROM asset WHERE digest = \#(digest))
                AND NOT EXISTS (SELECT 1 FROM "packVersion" WHERE "manifestDigest" = \#(digest))
                AND NOT EXISTS (SELECT 1 FROM upload WHERE digest = \#(digest))
                """#)
            return ForgottenUpload(unreachableIn: unreached > 0 ? session : nil)
        }
    }

    // MARK: Shares

    /// Stores a new share.
    public func createShare(_ share: ShareRecord) throws(CatalogError) {
        try write("cannot store a share") { tx in
            try tx.execute(#"""
                INSERT INTO share (id, "groupId", member, digest, "pictureDigest", name, "createdAt")
                VALUES (\#(share.id), \#(share.groupId), \#(share.member), \#(share.digest), \#(share.pictureDigest), \#(share.name),
                        \#(share.createdAt))
                """#)
        }
    }

    /// The share with this id, or nil (never made, or revoked).
    public func share(id: String) throws(CatalogError) -> ShareRecord? {
        try read("cannot read a share") { tx in
            try Self.shares(#"SELECT id, "groupId", member, digest, "pictureDigest", name, "createdAt" FROM share WHERE id = \#(id)"#, tx).first
        }
    }

    /// A member's shares, newest first.
    public func shares(group groupId: Int64, member: String) throws(CatalogError) -> [ShareRecord] {
        try read("cannot list the shares of \(member)") { tx in
            try Self.shares(#"""
                SELECT id, "groupId", member, digest, "pictureDigest", name, "createdAt" FROM share
                WHERE "groupId" = \#(groupId) AND member = \#(member) ORDER BY "createdAt" DESC
                """#, tx)
        }
    }

    /// Revokes a share: deletes it. False when there was none.
    @discardableResult
    public func deleteShare(id: String) throws(CatalogError) -> Bool {
        try write("cannot delete a share") { tx in try tx.execute("DELETE FROM share WHERE id = \(id)") > 0 }
    }

    private static func shares(_ query: PostgresQuery, _ tx: PostgresTransaction) throws -> [ShareRecord] {
        try tx.rows(query, as: (String, Int64, String, Digest, Digest, String?, Date).self).map {
            ShareRecord(id: $0.0, groupId: $0.1, member: $0.2, digest: $0.3, pictureDigest: $0.4, name: $0.5, createdAt: $0.6)
        }
    }
}
