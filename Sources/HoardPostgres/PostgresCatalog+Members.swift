import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// Members, their tokens and invitations, as `SQLiteCatalog`'s (HoardCatalog, `Catalog+Members.swift`): the same
/// ``MemberRules`` decide. Two replicas redeeming one code: one deletes it, the other finds none.
extension PostgresCatalog {
    /// Stores a new token for a group: a device of the member of that name (who takes `role`), or of a new member.
    /// Throws `notFound` for an unknown group.
    @discardableResult
    public func addToken(group name: String, label: String, secretHash: String, role: TokenRole) throws(CatalogError) -> TokenRecord {
        try write("cannot store a token of group '\(name)'") { tx in
            guard let groupId = try Self.group(named: name, tx)?.id else {
                throw CatalogError(.notFound, "no group named '\(name)'; create it with `hoard group create \(name)`")
            }
            let memberId: Int64
            if let existing = MemberRules.member(named: label, role: role, among: try Self.memberRecords(groupId: groupId, tx))?.id {
                memberId = existing
                try Self.setRole(role, member: existing, tx)
            } else {
                memberId = try Self.insertMember(groupId: groupId, name: label, role: role.rawValue, at: Date(), tx)
            }
            return try Self.insertToken(
                groupId: groupId, label: label, secretHash: secretHash, role: role.rawValue, member: memberId, at: Date(), tx)
        }
    }

    /// A group's member tokens (never their secrets), oldest first.
    public func tokens(groupId: Int64) throws(CatalogError) -> [TokenRecord] {
        try read("cannot list the tokens of group \(groupId)") { tx in
            let rows = try tx.rows(#"""
                SELECT id, "groupId", name, "secretHash", "isAdmin", role, "createdAt", "memberId" FROM token
                WHERE "groupId" = \#(groupId) ORDER BY id
                """#, as: (Int64, Int64, String, String, Bool, String, Date, Int64?).self)
            return rows.map {
                TokenRecord(id: $0.0, groupId: $0.1, name: $0.2, secretHash: $0.3, isAdmin: $0.4, role: $0.5, createdAt: $0.6, memberId: $0.7)
            }
        }
    }

    /// A group's members with how many devices each has, oldest first.
    public func members(groupId: Int64) throws(CatalogError) -> [MemberListing] {
        try read("cannot list the members of group \(groupId)") { tx in
            let devices = Dictionary(uniqueKeysWithValues: try tx.rows(#"""
                SELECT "memberId", count(*) FROM token WHERE "groupId" = \#(groupId) AND "memberId" IS NOT NULL GROUP BY "memberId"
                """#, as: (Int64, Int64).self).map { ($0.0, Int($0.1)) })
            return try Self.memberRecords(groupId: groupId, tx).map { (member: $0, devices: devices[$0.id ?? 0] ?? 0) }
        }
    }

    /// Gives a group's member and all their devices `role`; the invitations they may no longer make are deleted.
    public func setRole(_ role: TokenRole, member id: Int64, groupId: Int64) throws(CatalogError) -> Bool {
        try write("cannot change the role of member \(id)") { tx in
            guard try Self.isMember(id, of: groupId, tx) else { return false }
            try Self.setRole(role, member: id, tx)
            try Self.dropFallenInvites(groupId: groupId, tx)
            return true
        }
    }

    /// Deletes a group's member's devices and the invitations they made or that name them.
    public func removeMember(id: Int64, groupId: Int64) throws(CatalogError) -> Bool {
        try write("cannot remove member \(id)") { tx in
            guard try Self.isMember(id, of: groupId, tx) else { return false }
            try tx.execute(#"DELETE FROM token WHERE "memberId" = \#(id)"#)
            try tx.execute(#"DELETE FROM invite WHERE "memberId" = \#(id)"#)
            try Self.dropFallenInvites(groupId: groupId, tx)
            return true
        }
    }

    /// Deletes a member token of a group; false when the group has no such token. The invitations its member made
    /// are deleted with their last device.
    public func deleteToken(id: Int64, groupId: Int64) throws(CatalogError) -> Bool {
        try write("cannot delete token \(id)") { tx in
            guard try tx.execute(#"DELETE FROM token WHERE id = \#(id) AND "groupId" = \#(groupId)"#) > 0 else { return false }
            try Self.dropFallenInvites(groupId: groupId, tx)
            return true
        }
    }

    /// A group's pending invitations (those not expired at `now`), soonest to expire first.
    public func invites(groupId: Int64, now: Date) throws(CatalogError) -> [InviteRecord] {
        try read("cannot list the invitations of group \(groupId)") { tx in
            try Self.inviteRecords(#"WHERE "groupId" = \#(groupId) AND "expiresAt" > \#(now) ORDER BY "expiresAt", "codeHash" COLLATE "C""#, tx)
        }
    }

    /// Cancels one of a group's invitations (by its code's hash); false when the group has no such invitation.
    public func cancelInvite(codeHash: String, groupId: Int64) throws(CatalogError) -> Bool {
        try write("cannot cancel an invitation") { tx in
            try tx.execute(#"DELETE FROM invite WHERE "codeHash" = \#(codeHash) AND "groupId" = \#(groupId)"#) > 0
        }
    }

    /// Records a one-time invitation into a group (only the hash of its code is kept); `conflict` when the member it
    /// creates has a name the group uses, `notFound` when the member it adds a device to is not the group's.
    public func addInvite(_ invite: InviteRecord) throws(CatalogError) {
        try write("cannot store an invitation") { tx in
            if let name = invite.memberName, let existing = try Self.takenName(name, groupId: invite.groupId, tx) {
                throw CatalogError(.conflict, MemberRules.takenMessage(name, existing: existing))
            }
            if let id = invite.memberId, try !Self.isMember(id, of: invite.groupId, tx) {
                throw CatalogError(.notFound, "the group has no member \(id); list them with GET /v1/members")
            }
            try tx.execute(#"""
                INSERT INTO invite ("codeHash", "groupId", role, "createdBy", "expiresAt", "inviterId", "memberId", "memberName")
                VALUES (\#(invite.codeHash), \#(invite.groupId), \#(invite.role), \#(invite.createdBy), \#(invite.expiresAt),
                    \#(invite.inviterId), \#(invite.memberId), \#(invite.memberName))
                """#)
        }
    }

    /// Redeems an invitation: in one transaction it is deleted and a token stored, a device of the member it names or
    /// of a new member; nil when there is none, it expired or it no longer stands; `conflict` (the invitation kept)
    /// when the new member's name is taken.
    public func redeemInvite(
        codeHash: String, label: String, secretHash: String, now: Date
    ) throws(CatalogError) -> (token: TokenRecord, group: String)? {
        try write("cannot redeem an invitation") { tx -> (token: TokenRecord, group: String)? in
            guard let invite = try Self.inviteRecords(#"WHERE "codeHash" = \#(codeHash) FOR UPDATE"#, tx).first else { return nil }
            try tx.execute(#"DELETE FROM invite WHERE "codeHash" = \#(codeHash)"#)
            guard invite.expiresAt > now, try Self.stands(invite, tx) else { return nil }
            let member: (id: Int64, role: String)
            if let id = invite.memberId, let role = try tx.value(#"SELECT role FROM member WHERE id = \#(id)"#, as: String.self) {
                member = (id, role)
            } else {
                let name = invite.memberName ?? label
                if let existing = try Self.takenName(name, groupId: invite.groupId, tx) {
                    throw CatalogError(.conflict, MemberRules.takenMessage(name, existing: existing))
                }
                member = (try Self.insertMember(groupId: invite.groupId, name: name, role: invite.role, at: now, tx), invite.role)
            }
            let token = try Self.insertToken(
                groupId: invite.groupId, label: label, secretHash: secretHash, role: member.role, member: member.id, at: now, tx)
            return (token, try tx.value(#"SELECT name FROM "group" WHERE id = \#(invite.groupId)"#, as: String.self) ?? "")
        }
    }

    // MARK: Shared steps

    private static func isMember(_ id: Int64, of groupId: Int64, _ tx: PostgresTransaction) throws -> Bool {
        try tx.value(#"SELECT EXISTS (SELECT 1 FROM member WHERE id = \#(id) AND "groupId" = \#(groupId))"#, as: Bool.self) ?? false
    }

    private static func memberRecords(groupId: Int64, _ tx: PostgresTransaction) throws -> [MemberRecord] {
        let rows = try tx.rows(
            #"SELECT id, name, role, "createdAt" FROM member WHERE "groupId" = \#(groupId) ORDER BY id"#, as: (Int64, String, String, Date).self)
        return rows.map { (id: Int64, name: String, role: String, createdAt: Date) in
            MemberRecord(id: id, groupId: groupId, name: name, role: role, createdAt: createdAt)
        }
    }

    private static func takenName(_ name: String, groupId: Int64, _ tx: PostgresTransaction) throws -> String? {
        MemberRules.taken(name, among: try tx.values(#"SELECT name FROM member WHERE "groupId" = \#(groupId)"#, as: String.self))
    }

    private static func setRole(_ role: TokenRole, member id: Int64, _ tx: PostgresTransaction) throws {
        try tx.execute(#"UPDATE member SET role = \#(role.rawValue) WHERE id = \#(id)"#)
        try tx.execute(#"""
            UPDATE token SET role = \#(role.rawValue), "isAdmin" = \#(role == .operator) WHERE "memberId" = \#(id) AND role <> \#(role.rawValue)
            """#)
    }

    private static func inviteRecords(_ tail: PostgresQuery, _ tx: PostgresTransaction) throws -> [InviteRecord] {
        var query = PostgresQuery(
            unsafeSQL: #"SELECT "codeHash", "groupId", role, "createdBy", "expiresAt", "inviterId", "memberId", "memberName" FROM invite "#)
        query.sql += tail.sql
        query.binds = tail.binds
        return try tx.rows(query, as: (String, Int64, String, String, Date, Int64?, Int64?, String?).self).map {
            InviteRecord(
                codeHash: $0.0, groupId: $0.1, role: TokenRole(rawValue: $0.2) ?? .member, createdBy: $0.3, inviterId: $0.5, expiresAt: $0.4,
                memberId: $0.6, memberName: $0.7)
        }
    }

    private static func dropFallenInvites(groupId: Int64, _ tx: PostgresTransaction) throws {
        for invite in try inviteRecords(#"WHERE "groupId" = \#(groupId) FOR UPDATE"#, tx) where try !stands(invite, tx) {
            try tx.execute(#"DELETE FROM invite WHERE "codeHash" = \#(invite.codeHash)"#)
        }
    }

    private static func stands(_ invite: InviteRecord, _ tx: PostgresTransaction) throws -> Bool {
        func member(_ id: Int64?) throws -> (role: String, devices: Int)? {
            guard let id else { return nil }
            return try tx.row(#"""
                SELECT role, (SELECT count(*) FROM token WHERE "memberId" = member.id) FROM member WHERE id = \#(id)
                """#, as: (String, Int64).self).map { ($0.0, Int($0.1)) }
        }
        let gives = invite.memberId == nil ? invite.role : try member(invite.memberId)?.role
        return MemberRules.stands(inviter: try member(invite.inviterId), gives: gives)
    }

    private static func insertMember(groupId: Int64, name: String, role: String, at createdAt: Date, _ tx: PostgresTransaction) throws -> Int64 {
        guard let id = try tx.value(#"""
            INSERT INTO member ("groupId", name, role, "createdAt") VALUES (\#(groupId), \#(name), \#(role), \#(createdAt)) RETURNING id
            """#, as: Int64.self) else { throw CatalogError(.database, "no id for a new member") }
        return id
    }

    private static func insertToken(
        groupId: Int64, label: String, secretHash: String, role: String, member: Int64, at createdAt: Date, _ tx: PostgresTransaction
    ) throws -> TokenRecord {
        let isAdmin = role == TokenRole.operator.rawValue
        let id = try tx.value(#"""
            INSERT INTO token ("groupId", name, "secretHash", "isAdmin", role, "createdAt", "memberId")
            VALUES (\#(groupId), \#(label), \#(secretHash), \#(isAdmin), \#(role), \#(createdAt), \#(member)) RETURNING id
            """#, as: Int64.self)
        return TokenRecord(
            id: id, groupId: groupId, name: label, secretHash: secretHash, isAdmin: isAdmin, role: role, createdAt: createdAt, memberId: member)
    }
}
