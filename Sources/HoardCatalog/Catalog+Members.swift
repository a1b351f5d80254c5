import Foundation
import GRDB
import HoardCore

extension SQLiteCatalog {
    // MARK: Members and their tokens

    /// Stores a new token for a group (only the hash of its secret is kept): a device of the member of that name
    /// (``MemberRules/member(named:role:among:)``), who takes `role` with all their devices, or of a new member.
    /// Throws `notFound` for an unknown group. This is the operator's `hoard token create`; invitations go through ``redeemInvite``.
    @discardableResult
    public func addToken(group name: String, label: String, secretHash: String, role: TokenRole) throws(CatalogError) -> TokenRecord {
        try write { db in
            guard let group = try GroupRecord.filter(GroupRecord.Columns.name == name).fetchOne(db), let groupId = group.id else {
                throw CatalogError(.notFound, "no group named '\(name)'; create it with `hoard group create \(name)`")
            }
            let members = try MemberRecord.filter(Column("groupId") == groupId).order(Column("id")).fetchAll(db)
            var member = MemberRules.member(named: label, role: role, among: members)
                ?? MemberRecord(id: nil, groupId: groupId, name: label, role: role.rawValue, createdAt: Date())
            if let id = member.id {
                try Self.setRole(role, member: id, db)
            } else {
                try member.insert(db)
            }
            var token = TokenRecord(
                id: nil, groupId: groupId, name: label, secretHash: secretHash, isAdmin: role == .operator, role: role.rawValue,
                createdAt: Date(), memberId: member.id)
            try token.insert(db)
            return token
        }
    }

    /// A group's member tokens (never their secrets), oldest first.
    public func tokens(groupId: Int64) throws(CatalogError) -> [TokenRecord] {
        try read { db in try TokenRecord.filter(Column("groupId") == groupId).order(Column("id")).fetchAll(db) }
    }

    /// A group's members with how many devices each has, oldest first.
    public func members(groupId: Int64) throws(CatalogError) -> [MemberListing] {
        try read { db in
            let devices = try Row.fetchAll(
                db, sql: "SELECT memberId, COUNT(*) AS n FROM token WHERE groupId = ? GROUP BY memberId", arguments: [groupId]
            ).reduce(into: [Int64: Int]()) { $0[$1["memberId"]] = $1["n"] }
            return try MemberRecord.filter(Column("groupId") == groupId).order(Column("id")).fetchAll(db).map {
                (member: $0, devices: devices[$0.id ?? 0] ?? 0)
            }
        }
    }

    /// Gives a member of a group `role`, with every device of theirs, in one transaction; the invitations they made
    /// that the new role could not make are deleted with it. False when the group has no such member.
    public func setRole(_ role: TokenRole, member id: Int64, groupId: Int64) throws(CatalogError) -> Bool {
        try write { db in
            guard try MemberRecord.filter(Column("id") == id && Column("groupId") == groupId).fetchCount(db) > 0 else { return false }
            try Self.setRole(role, member: id, db)
            try Self.dropFallenInvites(groupId: groupId, db)
            return true
        }
    }

    private static func setRole(_ role: TokenRole, member id: Int64, _ db: Database) throws {
        try db.execute(sql: "UPDATE member SET role = ? WHERE id = ?", arguments: [role.rawValue, id])
        try db.execute(
            sql: "UPDATE token SET role = ?, isAdmin = ? WHERE memberId = ? AND role <> ?",
            arguments: [role.rawValue, role == .operator, id, role.rawValue])
    }

    /// Removes a member of a group: deletes every device (token) of theirs and the invitations they made or that
    /// would add them a device. What they own stays theirs, under their id. False when the group has no such member.
    public func removeMember(id: Int64, groupId: Int64) throws(CatalogError) -> Bool {
        try write { db in
            guard try MemberRecord.filter(Column("id") == id && Column("groupId") == groupId).fetchCount(db) > 0 else { return false }
            try TokenRecord.filter(Column("memberId") == id).deleteAll(db)
            try InviteRecord.filter(Column("memberId") == id).deleteAll(db)
            try Self.dropFallenInvites(groupId: groupId, db)
            return true
        }
    }

    /// Deletes a member token of a group; false when the group has no such token. Its access ends when the access
    /// index reads the change log (the server catches up before answering).
    ///
    /// The invitations its member made are deleted with their last device (carl's owner invitation dies with carl's
    /// last token).
    public func deleteToken(id: Int64, groupId: Int64) throws(CatalogError) -> Bool {
        try write { db in
            guard try TokenRecord.filter(Column("id") == id && Column("groupId") == groupId).deleteAll(db) > 0 else { return false }
            try Self.dropFallenInvites(groupId: groupId, db)
            return true
        }
    }

    /// Deletes a group's invitations that no longer stand (``MemberRules/stands(inviter:gives:)``).
    static func dropFallenInvites(groupId: Int64, _ db: Database) throws {
        for invite in try InviteRecord.filter(Column("groupId") == groupId).fetchAll(db) where try !stands(invite, db) {
            try invite.delete(db)
        }
    }

    private static func stands(_ invite: InviteRecord, _ db: Database) throws -> Bool {
        func member(_ id: Int64?) throws -> (role: String, devices: Int)? {
            guard let id, let row = try Row.fetchOne(db, sql: """
                SELECT role, (SELECT COUNT(*) FROM token WHERE memberId = member.id) AS devices FROM member WHERE id = ?
                """, arguments: [id]) else { return nil }
            return (row["role"], row["devices"])
        }
        let gives = invite.memberId == nil ? invite.role : try member(invite.memberId)?.role
        return MemberRules.stands(inviter: try member(invite.inviterId), gives: gives)
    }

    /// The name of the group's member that `name` would be taken for; nil when it is free.
    private static func takenName(_ name: String, groupId: Int64, _ db: Database) throws -> String? {
        MemberRules.taken(name, among: try String.fetchAll(db, sql: "SELECT name FROM member WHERE groupId = ?", arguments: [groupId]))
    }

    /// A group's pending invitations (those not expired at `now`), soonest to expire first.
    public func invites(groupId: Int64, now: Date) throws(CatalogError) -> [InviteRecord] {
        try read { db in
            try InviteRecord.filter(Column("groupId") == groupId && Column("expiresAt") > now).order(Column("expiresAt"), Column("codeHash"))
                .fetchAll(db)
        }
    }

    /// Cancels one of a group's invitations (by its code's hash); false when the group has no such invitation.
    public func cancelInvite(codeHash: String, groupId: Int64) throws(CatalogError) -> Bool {
        try write { db in try InviteRecord.filter(Column("codeHash") == codeHash && Column("groupId") == groupId).deleteAll(db) > 0 }
    }

    /// Records a one-time invitation into a group (only the hash of its code is kept). Throws `conflict` when it
    /// names a new member by a name the group already uses for one, and `notFound` when the member a device invitation
    /// names is not the group's.
    public func addInvite(_ invite: InviteRecord) throws(CatalogError) {
        try write { db in
            if let name = invite.memberName, let existing = try Self.takenName(name, groupId: invite.groupId, db) {
                throw CatalogError(.conflict, MemberRules.takenMessage(name, existing: existing))
            }
            if let id = invite.memberId,
                try MemberRecord.filter(Column("id") == id && Column("groupId") == invite.groupId).fetchCount(db) == 0
            {
                throw CatalogError(.notFound, "the group has no member \(id); list them with GET /v1/members")
            }
            try invite.insert(db)
        }
    }

    /// Redeems an invitation: in one transaction it is deleted and a token stored, a device of the member it names or
    /// of a new member of its role (called its `memberName`, else `label`); gives the token and its group's name. Nil
    /// when there is no such invitation, it expired or it no longer stands (such an invitation is deleted too).
    /// Throws `conflict`, keeping the invitation, when the new member's name is one the group already uses.
    public func redeemInvite(
        codeHash: String, label: String, secretHash: String, now: Date
    ) throws(CatalogError) -> (token: TokenRecord, group: String)? {
        try write { db -> (token: TokenRecord, group: String)? in
            guard let invite = try InviteRecord.fetchOne(db, key: codeHash) else { return nil }
            try invite.delete(db)
            guard invite.expiresAt > now, try Self.stands(invite, db) else { return nil }
            var member: MemberRecord
            if let id = invite.memberId, let existing = try MemberRecord.fetchOne(db, key: id) {
                member = existing
            } else {
                let name = invite.memberName ?? label
                if let existing = try Self.takenName(name, groupId: invite.groupId, db) {
                    throw CatalogError(.conflict, MemberRules.takenMessage(name, existing: existing))
                }
                member = MemberRecord(id: nil, groupId: invite.groupId, name: name, role: invite.role, createdAt: now)
                try member.insert(db)
            }
            var token = TokenRecord(
                id: nil, groupId: invite.groupId, name: label, secretHash: secretHash, isAdmin: member.role == TokenRole.operator.rawValue,
                role: member.role, createdAt: now,
                memberId: member.id)
            try token.insert(db)
            return (token, try GroupRecord.fetchOne(db, key: invite.groupId)?.name ?? "")
        }
    }

    /// Migration `v14-members`: a member for each name and role among a group's tokens, each token theirs; a member
    /// for each name that owns something but has no token; then what names owned (refs, shares, sessions' hosts,
    /// private uploads and invitations' makers) is owned by the id of the member of that name with the highest role.
    static func migrateMembers(_ db: Database) throws {
        try db.create(table: "member") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("groupId", .integer).notNull().indexed().references("group", onDelete: .cascade)
            t.column("name", .text).notNull()
            t.column("role", .text).notNull()
            t.column("createdAt", .datetime).notNull()
        }
        try db.alter(table: "token") { t in t.add(column: "memberId", .integer).references("member", onDelete: .cascade) }
        try db.create(index: "token_on_memberId", on: "token", columns: ["memberId"])
        try db.alter(table: "invite") { t in
            t.add(column: "inviterId", .integer)
            t.add(column: "memberId", .integer).references("member", onDelete: .cascade)
            t.add(column: "memberName", .text)
        }
        for statement in memberMigrationSQL { try db.execute(sql: statement) }
        // A role changed in place (``setRole(_:member:groupId:)``) reaches every server's access index.
        try db.execute(sql: """
            CREATE TRIGGER accessChange_tokenRole AFTER UPDATE OF role ON token BEGIN
                INSERT INTO accessChange (kind, key, at) VALUES ('token', new.secretHash, CAST(strftime('%s', 'now') AS INTEGER));
            END
            """)
    }

    /// The statements of `v14-members` that move rows once the tables exist; PostgreSQL's twin runs them too, with
    /// its identifiers quoted.
    public static let memberMigrationSQL: [String] = {
        let memberOf = { (table: String, name: String) in
            """
            FROM member m WHERE m.groupId = \(table).groupId AND m.name = \(name)
                ORDER BY CASE m.role WHEN 'operator' THEN 0 WHEN 'owner' THEN 1 ELSE 2 END, m.id LIMIT 1
            """
        }
        let owner = { (table: String, name: String) in
            """
            (SELECT CAST(m.id AS TEXT) \(memberOf(table, name)))
            """
        }
        let scopeName = "substr(privateUpload.scope, length('member:' || privateUpload.groupId || ':') + 1)"
        return [
            """
            INSERT INTO member (groupId, name, role, createdAt)
                SELECT groupId, name, role, MIN(createdAt) FROM token GROUP BY groupId, name, role ORDER BY MIN(id)
            """,
            "UPDATE token SET memberId = (SELECT m.id FROM member m WHERE m.groupId = token.groupId AND m.name = token.name AND m.role = token.role)",
            """
            INSERT INTO member (groupId, name, role, createdAt)
                SELECT DISTINCT o.groupId, o.name, 'member', CURRENT_TIMESTAMP FROM (
                    SELECT groupId, member AS name FROM ref UNION SELECT groupId, member AS name FROM share
                    UNION SELECT groupId, host AS name FROM session
                    UNION SELECT groupId, \(scopeName) AS name FROM privateUpload WHERE scope LIKE 'member:%') o
                WHERE NOT EXISTS (SELECT 1 FROM member m WHERE m.groupId = o.groupId AND m.name = o.name)
            """,
            "UPDATE ref SET member = \(owner("ref", "ref.member"))",
            "UPDATE share SET member = \(owner("share", "share.member"))",
            "UPDATE session SET host = \(owner("session", "session.host"))",
            """
            UPDATE privateUpload SET uploader = \(owner("privateUpload", "privateUpload.uploader"))
                WHERE EXISTS (SELECT 1 FROM member m WHERE m.groupId = privateUpload.groupId AND m.name = privateUpload.uploader)
            """,
            """
            UPDATE privateUpload SET scope = 'member:' || groupId || ':' || \(owner("privateUpload", scopeName))
                WHERE scope LIKE 'member:%'
            """,
            "UPDATE invite SET inviterId = (SELECT m.id \(memberOf("invite", "invite.createdBy")))",
        ]
    }()
}
