import Foundation
import GRDB
import HoardCore

/// The outcome of a compare-and-set on a ref.
public enum RefUpdate: Sendable, Hashable {
    /// The ref now points where asked.
    case moved(RefRecord)
    /// The ref was not where the caller expected; nothing changed. `current` is where it is (nil: absent).
    case conflict(current: Digest?)
}

/// What a compare-and-set expects a ref to be before it moves.
public enum RefExpectation: Sendable, Hashable {
    /// Move whatever it points at.
    case any
    /// Move only if the ref does not exist yet.
    case absent
    /// Move only if it points at this digest.
    case pointing(at: Digest)

    /// Whether a ref pointing at `current` (nil: absent) is as expected.
    public func isMet(by current: Digest?) -> Bool {
        switch self {
        case .any: true
        case .absent: current == nil
        case .pointing(let digest): current == digest
        }
    }
}

extension SQLiteCatalog {
    // MARK: Refs

    /// A member's refs, by name.
    public func refs(group groupId: Int64, member: String) throws(CatalogError) -> [RefRecord] {
        try read { db in
            try RefRecord.filter(Column("groupId") == groupId && Column("member") == member).order(Column("name")).fetchAll(db)
        }
    }

    /// One ref of a member, or nil.
    public func ref(group groupId: Int64, member: String, name: String) throws(CatalogError) -> RefRecord? {
        try read { db in try Self.ref(groupId, member, name, db) }
    }

    private static func ref(_ groupId: Int64, _ member: String, _ name: String, _ db: Database) throws -> RefRecord? {
        try RefRecord.filter(Column("groupId") == groupId && Column("member") == member && Column("name") == name).fetchOne(db)
    }

    /// Points a ref at `digest` if it is as `expected`, in one transaction: two devices moving the same ref from the
    /// same value cannot both succeed. The digest MUST already have a blob row.
    public func moveRef(
        group groupId: Int64, member: String, name: String, to digest: Digest, expected: RefExpectation
    ) throws(CatalogError) -> RefUpdate {
        try write { db in
            let current = try Self.ref(groupId, member, name, db)
            guard expected.isMet(by: current?.digest) else { return .conflict(current: current?.digest) }
            let record = RefRecord(groupId: groupId, member: member, name: name, digest: digest)
            try record.save(db)
            return .moved(record)
        }
    }

    /// Deletes a ref if it is as `expected`. Nil when there was no such ref; otherwise the outcome.
    public func deleteRef(group groupId: Int64, member: String, name: String, expected: RefExpectation) throws(CatalogError) -> RefUpdate? {
        try write { db in
            guard let current = try Self.ref(groupId, member, name, db) else { return nil }
            guard expected.isMet(by: current.digest) else { return .conflict(current: current.digest) }
            try current.delete(db)
            return .moved(current)
        }
    }

    // MARK: Private uploads

    /// Records a private upload (and its blob row if new). A session upload also becomes something the session's
    /// participants may fetch (a `sessionBlob` row), like the art its map references. Idempotent.
    public func recordPrivateUpload(_ blob: BlobRecord, _ upload: PrivateUploadRecord, session: String?) throws(CatalogError) {
        try write { db in
            try blob.insert(db, onConflict: .ignore)
            try upload.insert(db, onConflict: .ignore)
            if let session {
                try db.execute(sql: "INSERT OR IGNORE INTO sessionBlob (sessionId, digest) VALUES (?, ?)", arguments: [session, blob.digest])
            }
        }
    }

    /// A privately uploaded blob and every scope it was uploaded into; nil when it never was.
    public func privateUpload(_ digest: Digest) throws(CatalogError) -> (blob: BlobRecord, scopes: [String])? {
        try read { db in
            let scopes = try String.fetchAll(db, sql: "SELECT scope FROM privateUpload WHERE digest = ?", arguments: [digest])
            guard !scopes.isEmpty, let blob = try BlobRecord.fetchOne(db, key: digest.description) else { return nil }
            return (blob, scopes)
        }
    }

    /// The blob row of a digest, or nil.
    public func blob(_ digest: Digest) throws(CatalogError) -> BlobRecord? {
        try read { db in try BlobRecord.fetchOne(db, key: digest.description) }
    }

    /// Bytes a group holds and its quota (nil: none); nil when the group does not exist.
    public func quota(groupId: Int64) throws(CatalogError) -> (used: Int64, quota: Int64?, name: String)? {
        guard let group = try read({ db in try GroupRecord.fetchOne(db, key: groupId) }) else { return nil }
        return (try usage(groupId: groupId), group.quotaBytes, group.name)
    }

    // MARK: Shares

    /// Stores a new share.
    public func createShare(_ share: ShareRecord) throws(CatalogError) {
        try write { db in try share.insert(db) }
    }

    /// The share with this id, or nil (never made, or revoked).
    public func share(id: String) throws(CatalogError) -> ShareRecord? {
        try read { db in try ShareRecord.fetchOne(db, key: id) }
    }

    /// A member's shares, newest first.
    public func shares(group groupId: Int64, member: String) throws(CatalogError) -> [ShareRecord] {
        try read { db in
            try ShareRecord.filter(Column("groupId") == groupId && Column("member") == member)
                .order(Column("createdAt").desc).fetchAll(db)
        }
    }

    /// Revokes a share: deletes it. False when there was none.
    @discardableResult
    public func deleteShare(id: String) throws(CatalogError) -> Bool {
        try write { db in try ShareRecord.deleteOne(db, key: id) }
    }
}
