import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// Groups, tokens, invitations and quotas, as `SQLiteCatalog`'s (HoardCatalog, `Catalog+Access.swift`).
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

    /// Stores a new token for a group: only the hash of its secret is kept. Throws `notFound` for an unknown group.
    @discardableResult
    public func addToken(group name: String, label: String, secretHash: String, role: TokenRole) throws(CatalogError) -> TokenRecord {
        try write("cannot store a token of group '\(name)'") { tx in
            guard let groupId = try Self.group(named: name, tx)?.id else {
                throw CatalogError(.notFound, "no group named '\(name)'; create it with `hoard group create \(name)`")
            }
            return try Self.insertToken(
                groupId: groupId, label: label, secretHash: secretHash, isAdmin: role == .operator, role: role.rawValue, at: Date(), tx)
        }
    }

    /// A group's member tokens (never their secrets), oldest first.
    public func tokens(groupId: Int64) throws(CatalogError) -> [TokenRecord] {
        try read("cannot list the tokens of group \(groupId)") { tx in
            let rows = try tx.rows(#"""
                SELECT id, "groupId", name, "secretHash", "isAdmin", role, "createdAt" FROM token WHERE "groupId" = \#(groupId) ORDER BY id
                """#, as: (Int64, Int64, String, String, Bool, String, Date).self)
            return rows.map { TokenRecord(id: $0.0, groupId: $0.1, name: $0.2, secretHash: $0.3, isAdmin: $0.4, role: $0.5, createdAt: $0.6) }
        }
    }

    /// Deletes a member token of a group; false when the group has no such token. Its access ends when the access
    /// index reads the change log.
    ///
    /// As on SQLite, the invitations its member made that no remaining token of theirs could make are deleted with it.
    public func deleteToken(id: Int64, groupId: Int64) throws(CatalogError) -> Bool {
        try write("cannot delete token \(id)") { tx in
            guard try tx.execute(#"DELETE FROM token WHERE id = \#(id) AND "groupId" = \#(groupId)"#) > 0 else { return false }
            let tokens = try Self.tokenRoles(groupId: groupId, tx)
            for (codeHash, createdBy) in try tx.rows(
                #"SELECT "codeHash", "createdBy" FROM invite WHERE "groupId" = \#(groupId) FOR UPDATE"#, as: (String, String).self)
            where !MemberNames.stands(createdBy: createdBy, tokens: tokens) {
                try tx.execute(#"DELETE FROM invite WHERE "codeHash" = \#(codeHash)"#)
            }
            return true
        }
    }

    /// A group's tokens' labels and roles.
    static func tokenRoles(groupId: Int64, _ tx: PostgresTransaction) throws -> [(name: String, role: String)] {
        try tx.rows(#"SELECT name, role FROM token WHERE "groupId" = \#(groupId)"#, as: (String, String).self).map { (name: $0.0, role: $0.1) }
    }

    /// Every name the group uses for a member, as ``SQLiteCatalog`` reads them.
    static func memberNames(groupId: Int64, _ tx: PostgresTransaction) throws -> [String] {
        let names = try tx.values(#"""
            SELECT name FROM token WHERE "groupId" = \#(groupId) UNION SELECT member FROM ref WHERE "groupId" = \#(groupId)
            UNION SELECT member FROM share WHERE "groupId" = \#(groupId) UNION SELECT host FROM session WHERE "groupId" = \#(groupId)
            """#, as: String.self)
        let scopes = try tx.values(
            #"SELECT DISTINCT scope FROM "privateUpload" WHERE "groupId" = \#(groupId) AND scope LIKE 'member:%'"#, as: String.self)
        return names + scopes.compactMap(MemberNames.member(ofScope:))
    }

    /// A group's pending invitations (those not expired at `now`), soonest to expire first.
    public func invites(groupId: Int64, now: Date) throws(CatalogError) -> [InviteRecord] {
        try read("cannot list the invitations of group \(groupId)") { tx in
            try tx.rows(#"""
                SELECT "codeHash", role, "createdBy", "expiresAt" FROM invite WHERE "groupId" = \#(groupId) AND "expiresAt" > \#(now)
                ORDER BY "expiresAt", "codeHash" COLLATE "C"
                """#, as: (String, String, String, Date).self).map {
                InviteRecord(codeHash: $0.0, groupId: groupId, role: TokenRole(rawValue: $0.1) ?? .member, createdBy: $0.2, expiresAt: $0.3)
            }
        }
    }

    /// Cancels one of a group's invitations (by its code's hash); false when the group has no such invitation.
    public func cancelInvite(codeHash: String, groupId: Int64) throws(CatalogError) -> Bool {
        try write("cannot cancel an invitation") { tx in
            try tx.execute(#"DELETE FROM invite WHERE "codeHash" = \#(codeHash) AND "groupId" = \#(groupId)"#) > 0
        }
    }

    /// Records a one-time invitation into a group (only the hash of its code is kept).
    public func addInvite(_ invite: InviteRecord) throws(CatalogError) {
        try write("cannot store an invitation") { tx in
            try tx.execute(#"""
                INSERT INTO invite ("codeHash", "groupId", role, "createdBy", "expiresAt")
                VALUES (\#(invite.codeHash), \#(invite.groupId), \#(invite.role), \#(invite.createdBy), \#(invite.expiresAt))
                """#)
        }
    }

    /// Redeems an invitation: in one transaction it is deleted and a token of its group and role stored; gives the
    /// token and its group's name. Nil when there is no such invitation or it expired (an expired one is deleted too).
    /// Two replicas redeeming one code: one deletes it, the other finds none.
    public func redeemInvite(
        codeHash: String, label: String, secretHash: String, now: Date
    ) throws(CatalogError) -> (token: TokenRecord, group: String)? {
        try write("cannot redeem an invitation") { tx in
            guard let invite = try tx.row(#"""
                DELETE FROM invite WHERE "codeHash" = \#(codeHash) RETURNING "groupId", role, "expiresAt", "createdBy"
                """#, as: (Int64, String, Date, String).self), invite.2 > now
            else { return nil }
            let (groupId, role) = (invite.0, invite.1)
            // The inviter may no longer make it: it is gone (deleted above). A name taken is refused, the invitation kept.
            guard MemberNames.stands(createdBy: invite.3, tokens: try Self.tokenRoles(groupId: groupId, tx)) else { return nil }
            if let existing = MemberNames.taken(label, among: try Self.memberNames(groupId: groupId, tx)) {
                throw CatalogError(.conflict, MemberNames.takenMessage(label, existing: existing))
            }
            // As SQLite's: an invitation's token is never flagged an operator's (invitations give members and owners).
            let token = try Self.insertToken(groupId: groupId, label: label, secretHash: secretHash, isAdmin: false, role: role, at: now, tx)
            return (token, try tx.value(#"SELECT name FROM "group" WHERE id = \#(groupId)"#, as: String.self) ?? "")
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

    private static func insertToken(
        groupId: Int64, label: String, secretHash: String, isAdmin: Bool, role: String, at createdAt: Date, _ tx: PostgresTransaction
    ) throws -> TokenRecord {
        let id = try tx.value(#"""
            INSERT INTO token ("groupId", name, "secretHash", "isAdmin", role, "createdAt")
            VALUES (\#(groupId), \#(label), \#(secretHash), \#(isAdmin), \#(role), \#(createdAt)) RETURNING id
            """#, as: Int64.self)
        return TokenRecord(id: id, groupId: groupId, name: label, secretHash: secretHash, isAdmin: isAdmin, role: role, createdAt: createdAt)
    }
}
