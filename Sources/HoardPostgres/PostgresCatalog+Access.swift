import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// What access decisions read, and the access change log, as `SQLiteCatalog`'s (HoardCatalog, `Catalog+Access.swift`).
///
/// The change log's numbers: SQLite's AUTOINCREMENT never reuses nor skips a number (a rolled-back insert gives its
/// number back). Here `seq` is an identity column: a transaction that logged a change and then rolled back leaves
/// its number unused, so the log may skip numbers that were never committed. A reader (`AccessIndex`) rebuilds when
/// ``accessChanges(after:limit:)``'s `oldest` is past the number after the last it applied, taking that as rows
/// pruned away. So pruning here keeps the newest row it would delete (``pruneAccessChanges(through:writtenBefore:)``)
/// and `oldest` is the oldest row kept: every committed row below it is gone and every row from it on is kept. A
/// reader that applied through the pruned rows (the pruner among them) then never rebuilds, whatever numbers were
/// skipped, and a reader behind them rebuilds as on SQLite. One case rebuilds needlessly: a reader behind the pruned
/// rows whose next numbers were all skipped (it rebuilds once, missing nothing).
extension PostgresCatalog {
    /// Everything but blobs that access decisions need, in one transaction, with the change log's last number.
    public func accessBase() throws(CatalogError) -> AccessBase {
        try read("cannot read what access decisions need") { tx in
            var packs: [Int64: PackAccess] = [:]
            for (id, groupId, isPublic) in try tx.rows(#"SELECT id, "groupId", "isPublic" FROM pack"#, as: (Int64, Int64, Bool).self) {
                packs[id] = PackAccess(groupId: groupId, isPublic: isPublic)
            }
            var principals: [String: Principal] = [:]
            for row in try tx.rows(PostgresQuery(unsafeSQL: Self.principalSelect), as: Self.PrincipalRow.self) {
                principals[row.0] = Self.principal(row)
            }
            for (id, session, name, hash, player) in try tx.rows(
                #"SELECT id, "sessionId", name, "tokenHash", player FROM participant"#, as: (String, String, String, String, String?).self) {
                principals[hash] = Principal(participant: id, name: name, session: session, player: player)
            }
            var sessions: [String: Set<Digest>] = [:]
            for (session, digest) in try tx.rows(#"SELECT "sessionId", digest FROM "sessionBlob""#, as: (String, Digest).self) {
                sessions[session, default: []].insert(digest)
            }
            let last = try Self.lastAccessChange(tx)
            return AccessBase(packs: packs, principals: principals, sessions: sessions, lastChange: last)
        }
    }

    /// A blob and what refers to it; nil when the catalog has no such blob. A handful of indexed lookups.
    public func blobOwners(_ digest: Digest) throws(CatalogError) -> BlobOwners? {
        try read("cannot read who owns blob \(digest)") { tx in try Self.blobOwners([digest], tx)[digest] }
    }

    /// Several blobs' owners in one transaction (absent ones are left out): three queries for them all, not three
    /// round trips each.
    public func blobOwners(_ digests: [Digest]) throws(CatalogError) -> [Digest: BlobOwners] {
        try read("cannot read who owns \(digests.count) blobs") { tx in try Self.blobOwners(digests, tx) }
    }

    static func blobOwners(_ digests: [Digest], _ tx: PostgresTransaction) throws -> [Digest: BlobOwners] {
        guard !digests.isEmpty else { return [:] }
        let d = digests.texts
        var result: [Digest: BlobOwners] = [:]
        for (digest, size, mediaType) in try tx.rows(
            #"SELECT digest, size, "mediaType" FROM blob WHERE digest = ANY(\#(d)::text[])"#, as: (Digest, Int64, String).self) {
            result[digest] = BlobOwners(size: size, mediaType: mediaType, packs: [], uploaders: [])
        }
        // The packs whose versions reference each blob: manifest, descriptor, variant or rendition; each an index search.
        for (digest, pack) in try tx.rows(#"""
            SELECT "manifestDigest", "packId" FROM "packVersion" WHERE "manifestDigest" = ANY(\#(d)::text[])
            UNION SELECT pva."assetDigest", v."packId" FROM "packVersionAsset" pva JOIN "packVersion" v ON v.id = pva."packVersionId"
                WHERE pva."assetDigest" = ANY(\#(d)::text[])
            UNION SELECT va."blobDigest", v."packId" FROM variant va JOIN "packVersionAsset" pva ON pva."assetDigest" = va."assetDigest"
                JOIN "packVersion" v ON v.id = pva."packVersionId" WHERE va."blobDigest" = ANY(\#(d)::text[])
            UNION SELECT r."blobDigest", v."packId" FROM rendition r JOIN "packVersionAsset" pva ON pva."assetDigest" = r."assetDigest"
                JOIN "packVersion" v ON v.id = pva."packVersionId" WHERE r."blobDigest" = ANY(\#(d)::text[])
            ORDER BY 2
            """#, as: (Digest, Int64).self) {
            result[digest]?.packs.append(pack)
        }
        for (digest, groupId) in try tx.rows(
            #"SELECT digest, "groupId" FROM upload WHERE digest = ANY(\#(d)::text[]) ORDER BY "groupId""#, as: (Digest, Int64).self) {
            result[digest]?.uploaders.append(groupId)
        }
        return result
    }

    /// Change-log rows after `seq`, oldest first, at most `limit`; and the oldest row the log still holds, below which
    /// every committed row is gone (see this extension's comment on skipped numbers), so a reader can tell it missed
    /// some.
    public func accessChanges(after seq: Int64, limit: Int) throws(CatalogError) -> (changes: [AccessChange], oldest: Int64?) {
        try read("cannot read the access change log") { tx in
            let oldest = try tx.value(#"SELECT MIN(seq) FROM "accessChange""#, as: Int64?.self) ?? nil
            let changes = try tx.rows(
                #"SELECT seq, kind, key FROM "accessChange" WHERE seq > \#(seq) ORDER BY seq LIMIT \#(limit)"#, as: (Int64, String, String).self
            ).map { AccessChange(seq: $0.0, kind: AccessChange.Kind(rawValue: $0.1) ?? .reset, key: $0.2) }
            return (changes, oldest)
        }
    }

    /// The last change-log number (0 when empty).
    public func lastAccessChange() throws(CatalogError) -> Int64 {
        try read("cannot read the access change log") { tx in try Self.lastAccessChange(tx) }
    }

    static func lastAccessChange(_ tx: PostgresTransaction) throws -> Int64 {
        try tx.value(#"SELECT COALESCE(MAX(seq), 0)::bigint FROM "accessChange""#, as: Int64.self) ?? 0
    }

    /// Forgets change-log rows up to `seq` written before `date`, but for the newest of them, which stays as the
    /// boundary (so skipped numbers above it do not read as pruned rows; see this extension's comment). The last row
    /// is always kept, as on SQLite.
    public func pruneAccessChanges(through seq: Int64, writtenBefore date: Date) throws(CatalogError) {
        let before = Int64(date.timeIntervalSince1970)
        try write("cannot prune the access change log") { tx in
            try tx.execute(#"""
                DELETE FROM "accessChange" WHERE at < \#(before)
                AND seq < (SELECT MAX(seq) FROM "accessChange" WHERE seq <= \#(seq) AND at < \#(before))
                """#)
        }
    }

    /// A pack's owner and visibility; nil when it was deleted.
    public func packAccess(id: Int64) throws(CatalogError) -> PackAccess? {
        try read("cannot read pack \(id)") { tx in
            try tx.row(#"SELECT "groupId", "isPublic" FROM pack WHERE id = \#(id)"#, as: (Int64, Bool).self).map {
                PackAccess(groupId: $0.0, isPublic: $0.1)
            }
        }
    }

    /// The principal of a member's or a session participant's token by its secret's hash; nil when there is none.
    public func principal(tokenHash: String) throws(CatalogError) -> Principal? {
        try read("cannot read a token") { tx in
            if let member = try tx.row(#"\#(unescaped: Self.principalSelect) WHERE t."secretHash" = \#(tokenHash)"#, as: Self.PrincipalRow.self) {
                return Self.principal(member)
            }
            return try tx.row(
                #"SELECT id, name, "sessionId", player FROM participant WHERE "tokenHash" = \#(tokenHash)"#, as: (String, String, String, String?).self
            ).map { Principal(participant: $0.0, name: $0.1, session: $0.2, player: $0.3) }
        }
    }

    /// Every blob a pack version references: its manifest, descriptors, variants and renditions.
    public func versionDigests(id v: Int64) throws(CatalogError) -> [Digest] {
        try read("cannot read the blobs of pack version \(v)") { tx in
            try tx.values(#"""
                SELECT "manifestDigest" FROM "packVersion" WHERE id = \#(v)
                UNION ALL SELECT "assetDigest" FROM "packVersionAsset" WHERE "packVersionId" = \#(v)
                UNION ALL SELECT va."blobDigest" FROM "packVersionAsset" pva JOIN variant va ON va."assetDigest" = pva."assetDigest"
                    WHERE pva."packVersionId" = \#(v)
                UNION ALL SELECT r."blobDigest" FROM "packVersionAsset" pva JOIN rendition r ON r."assetDigest" = pva."assetDigest"
                    WHERE pva."packVersionId" = \#(v)
                """#, as: Digest.self)
        }
    }

    /// Which group owns a pack, and whether it is public; nil when absent (`group` as for ``pack(named:group:_:)``).
    public func packOwner(named name: String, group: String?) throws(CatalogError) -> (groupId: Int64, isPublic: Bool)? {
        try read("cannot read pack '\(name)'") { tx in try Self.pack(named: name, group: group, tx).map { ($0.groupId, $0.isPublic) } }
    }

    /// A pack's row, as ``pack(named:group:_:)`` finds it.
    struct PackRow {
        var id: Int64
        var name: String
        var groupId: Int64
        var isPublic: Bool
        var currentVersionId: Int64?
    }

    /// A pack by its name within `group` (a group name as ``existingGroup(named:_:)`` finds it), the name compared as
    /// SQLite's `NOCASE` does; with no group, the one pack of that name in any group. Pack names are unique within a
    /// group only, so without a group several packs may answer: that throws `conflict`, naming no group (the caller
    /// may not see them).
    static func pack(named name: String, group: String?, _ tx: PostgresTransaction) throws -> PackRow? {
        let owner: Int64?
        if let group {
            guard let id = try existingGroup(named: group, tx)?.id else { return nil }
            owner = id
        } else {
            owner = nil
        }
        let name = name.precomposedStringWithCanonicalMapping
        var packs = try tx.rows(#"""
            SELECT id, name, "groupId", "isPublic", "currentVersionId" FROM pack
            WHERE name = \#(name) AND (\#(owner)::bigint IS NULL OR "groupId" = \#(owner)) ORDER BY id
            """#, as: (Int64, String, Int64, Bool, Int64?).self)
            .filter { isSameName($0.1, name) }
            .map { PackRow(id: $0.0, name: $0.1, groupId: $0.2, isPublic: $0.3, currentVersionId: $0.4) }
        if packs.isEmpty {
            // Not by its exact name: the one pack of the same NameRule key ("émoi" finds "Émoi"), as on SQLite.
            let key = NameRule.key(name)
            packs = try tx.rows(#"""
                SELECT id, name, "groupId", "isPublic", "currentVersionId" FROM pack
                WHERE \#(owner)::bigint IS NULL OR "groupId" = \#(owner) ORDER BY id
                """#, as: (Int64, String, Int64, Bool, Int64?).self)
                .filter { NameRule.key($0.1) == key }
                .map { PackRow(id: $0.0, name: $0.1, groupId: $0.2, isPublic: $0.3, currentVersionId: $0.4) }
        }
        guard packs.count < 2 else {
            guard owner != nil else { throw CatalogError(.conflict, "several groups have a pack named '\(name)'; name the group") }
            let names = packs.map { "'\($0.name)'" }.joined(separator: ", ")
            throw CatalogError(.conflict, "'\(name)' could be any of the packs \(names); give one of them exactly")
        }
        return packs.first
    }

    /// A member token's row: secret's hash, role, label, member id and name, group id and name.
    typealias PrincipalRow = (String, String, String, Int64, String, Int64, String)

    /// The query of member tokens' principals (``PrincipalRow``).
    static let principalSelect = #"""
        SELECT t."secretHash", t.role, t.name, t."memberId", m.name, g.id, g.name
        FROM token t JOIN "group" g ON g.id = t."groupId" JOIN member m ON m.id = t."memberId"
        """#

    /// A member token's principal.
    static func principal(_ row: PrincipalRow) -> Principal {
        Principal(
            groupId: row.5, group: row.6, role: TokenRole(rawValue: row.1) ?? .member, member: row.3, memberName: row.4, tokenName: row.2)
    }
}
