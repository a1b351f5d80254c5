import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// Groups and quotas, as `SQLiteCatalog`'s (HoardCatalog, `Catalog+Access.swift`).
///
/// Names compare as SQLite's `COLLATE NOCASE` does, ASCII case aside: a query finds candidates through the column's
/// `nocase` collation (its index; ICU's, which also folds other cases) and ``PostgresCatalog/isSameName(_:_:)`` keeps
/// the ones SQLite would find, so "ÉCLAIR" does not name "éclair" here either: ``group(matching:)`` does, through
/// ``GroupName/key(_:)``.
extension PostgresCatalog {
    /// The group with this name (as ``group(matching:)`` finds it), created if there is none; `invalid` when the name
    /// cannot name a group, `conflict` when several old groups share its key.
    @discardableResult
    public func ensureGroup(named name: String) throws(CatalogError) -> GroupRecord {
        try write("cannot create group '\(name)'") { tx in try Self.ensureGroup(named: name, tx) }
    }

    /// ``ensureGroup(named:)`` inside a transaction (an import's, so that a refused import leaves no group behind).
    static func ensureGroup(named name: String, _ tx: PostgresTransaction) throws -> GroupRecord {
        if let group = try existingGroup(named: name, tx) { return group }
        let name = try GroupName.canonical(name)
        if let group = try existingGroup(named: name, tx) { return group }
        if let group = try insertGroup(named: name, quotaBytes: nil, tx) { return group }
        // Another replica created it meanwhile.
        guard let group = try existingGroup(named: name, tx) else {
            throw CatalogError(.conflict, "a group whose name is like '\(name)' was just created; give its name exactly")
        }
        return group
    }

    /// Every group, by name (ASCII case aside, as SQLite orders them).
    public func groups() throws(CatalogError) -> [GroupRecord] {
        try read("cannot list the groups") { tx in
            try Self.groups(#"SELECT id, name, "createdAt", "quotaBytes" FROM "group" ORDER BY lower(name COLLATE "C"), id"#, tx)
        }
    }

    /// Creates a group; throws `invalid` when the name cannot name a group (``GroupName/problem(with:)``) and
    /// `conflict` when it is taken, also by a name that differs from it only in case or Unicode form.
    @discardableResult
    public func createGroup(named name: String, quotaBytes: Int64?) throws(CatalogError) -> GroupRecord {
        let name = try GroupName.canonical(name)
        return try write("cannot create group '\(name)'") { tx in
            if let existing = try Self.group(named: name, tx) {
                throw CatalogError(.conflict, "a group named '\(existing.name)' already exists; choose another name")
            }
            let key = GroupName.key(name)
            let all = try Self.groups(#"SELECT id, name, "createdAt", "quotaBytes" FROM "group" ORDER BY id"#, tx)
            if let existing = all.first(where: { GroupName.key($0.name) == key }) {
                throw CatalogError(
                    .conflict,
                    "a group named '\(existing.name)' already exists, and '\(name)' differs from it only in case or accents; "
                        + "choose another name")
            }
            guard let group = try Self.insertGroup(named: name, quotaBytes: quotaBytes, tx) else {
                throw CatalogError(.conflict, "a group named like '\(name)' already exists; choose another name")
            }
            return group
        }
    }

    /// Sets or clears a group's byte quota. False when the group does not exist.
    @discardableResult
    public func setQuota(_ bytes: Int64?, group name: String) throws(CatalogError) -> Bool {
        try write("cannot set the quota of group '\(name)'") { tx in
            guard let id = try Self.group(named: name, tx)?.id else { return false }
            try tx.execute(#"UPDATE "group" SET "quotaBytes" = \#(bytes) WHERE id = \#(id)"#)
            return true
        }
    }

    /// Bytes a group holds: distinct blobs referenced by its packs (every version), its uploads and its members' and
    /// sessions' private uploads.
    public func usage(groupId: Int64) throws(CatalogError) -> Int64 {
        try read("cannot add up the bytes of group \(groupId)") { tx in try Self.usage(groupId: groupId, tx) }
    }

    static func usage(groupId g: Int64, _ tx: PostgresTransaction) throws -> Int64 {
        try tx.value(#"""
            SELECT COALESCE(SUM(size), 0)::bigint FROM blob WHERE digest IN (
                SELECT v."manifestDigest" FROM "packVersion" v JOIN pack p ON p.id = v."packId" WHERE p."groupId" = \#(g)
                UNION SELECT pva."assetDigest" FROM "packVersionAsset" pva JOIN "packVersion" v ON v.id = pva."packVersionId"
                    JOIN pack p ON p.id = v."packId" WHERE p."groupId" = \#(g)
                UNION SELECT va."blobDigest" FROM variant va JOIN "packVersionAsset" pva ON pva."assetDigest" = va."assetDigest"
                    JOIN "packVersion" v ON v.id = pva."packVersionId" JOIN pack p ON p.id = v."packId" WHERE p."groupId" = \#(g)
                UNION SELECT r."blobDigest" FROM rendition r JOIN "packVersionAsset" pva ON pva."assetDigest" = r."assetDigest"
                    JOIN "packVersion" v ON v.id = pva."packVersionId" JOIN pack p ON p.id = v."packId" WHERE p."groupId" = \#(g)
                UNION SELECT digest FROM upload WHERE "groupId" = \#(g)
                UNION SELECT digest FROM "privateUpload" WHERE "groupId" = \#(g))
            """#, as: Int64.self) ?? 0
    }

    /// The group of exactly this name, ASCII case aside; nil when there is none.
    public func group(named name: String) throws(CatalogError) -> GroupRecord? {
        try read("cannot read group '\(name)'") { tx in try Self.group(named: name, tx) }
    }

    /// The group an import into `name` goes to: exactly that name, else the one name that is the same under
    /// ``GroupName/key(_:)`` ("ÉCLAIR" finds "éclair"); nil when the import would create it.
    public func group(matching name: String) throws(CatalogError) -> GroupRecord? {
        try read("cannot read group '\(name)'") { tx in try Self.existingGroup(named: name, tx) }
    }

    /// Bytes a group holds and its quota (nil: none), read in one transaction; nil when the group does not exist.
    public func quota(groupId: Int64) throws(CatalogError) -> (used: Int64, quota: Int64?, name: String)? {
        try read("cannot read the quota of group \(groupId)") { tx in
            guard let group = try tx.row(#"SELECT name, "quotaBytes" FROM "group" WHERE id = \#(groupId)"#, as: (String, Int64?).self)
            else { return nil }
            return (try Self.usage(groupId: groupId, tx), group.1, group.0)
        }
    }

    // MARK: Helpers

    /// Whether two names are equal as SQLite's `NOCASE` compares them: byte for byte, ASCII letters in either case.
    static func isSameName(_ a: String, _ b: String) -> Bool {
        func folded(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
        return a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { folded($0) == folded($1) }
    }

    /// The group of exactly `name` (ASCII case aside), or nil.
    static func group(named name: String, _ tx: PostgresTransaction) throws -> GroupRecord? {
        try groups(#"SELECT id, name, "createdAt", "quotaBytes" FROM "group" WHERE name = \#(name)"#, tx).first { isSameName($0.name, name) }
    }

    /// The group `name` names: the one of exactly that name, else the one whose ``GroupName/key(_:)`` is the same;
    /// nil when there is none. Throws `conflict` when an old catalog holds several groups of that key and none of
    /// exactly that name.
    static func existingGroup(named name: String, _ tx: PostgresTransaction) throws -> GroupRecord? {
        if let group = try group(named: name, tx) { return group }
        let key = GroupName.key(name)
        let alike = try groups(#"SELECT id, name, "createdAt", "quotaBytes" FROM "group" ORDER BY id"#, tx).filter { GroupName.key($0.name) == key }
        guard alike.count <= 1 else {
            let names = alike.map { "'\($0.name)'" }.joined(separator: ", ")
            throw CatalogError(.conflict, "'\(name)' could be any of the groups \(names); give one of them exactly")
        }
        return alike.first
    }

    /// The groups a query of `id, name, "createdAt", "quotaBytes"` gives.
    static func groups(_ query: PostgresQuery, _ tx: PostgresTransaction) throws -> [GroupRecord] {
        try tx.rows(query, as: (Int64, String, Date, Int64?).self).map {
            GroupRecord(id: $0.0, name: $0.1, createdAt: $0.2, quotaBytes: $0.3)
        }
    }

    /// Inserts a group; nil when the name's unique index already holds one like it (another replica's, just now).
    private static func insertGroup(named name: String, quotaBytes: Int64?, _ tx: PostgresTransaction) throws -> GroupRecord? {
        let createdAt = Date()
        return try tx.value(#"""
            INSERT INTO "group" (name, "createdAt", "quotaBytes") VALUES (\#(name), \#(createdAt), \#(quotaBytes))
            ON CONFLICT DO NOTHING RETURNING id
            """#, as: Int64.self).map { GroupRecord(id: $0, name: name, createdAt: createdAt, quotaBytes: quotaBytes) }
    }
}
