import Foundation
import GRDB
import HoardCore
import Testing

@testable import HoardCatalog

/// Issue 43 on every backend: pack names under the one text rule, members who are identities with names a redeemer
/// cannot take, and invitations that live only while their inviter may make them.
@Suite struct WallsCatalogTests {
    @Test(arguments: CatalogBackendKind.allCases)
    func packNamesAreOneNameUnderTheTextRuleAndEveryCallFindsTheSameOne(_ kind: CatalogBackendKind) throws {
        let catalog = try kind.makeCatalog()
        _ = try catalog.record(CommitFixture(pack: "Émoi", assets: goblinAssets()).commit)
        let emoi = try #require(try catalog.packs().first { $0.name == "Émoi" })
        for alike in ["émoi", "éMOI", "\u{FF45}\u{301}moi"] {
            let error = #expect(throws: CatalogError.self, "\(alike)") {
                try catalog.record(CommitFixture(pack: alike, version: "2", assets: goblinAssets(labelPrefix: alike)).commit)
            }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("'Émoi'") == true, "\(error?.message ?? "")")
            #expect(try catalog.packOwner(named: alike, group: "dragons")?.groupId == emoi.groupId, "\(alike) finds Émoi")
        }
        #expect(try catalog.packs().map(\.name) == ["Émoi"])
        #expect(try catalog.packOwner(named: "ÉMOI", group: "dragons")?.groupId == emoi.groupId, "ASCII case aside")
        #expect(try catalog.setPublic(true, pack: "émoi", group: "dragons"))
        #expect(try catalog.packs().first?.isPublic == true)
        // Another group's pack of that name is another pack; a name of another key is another name.
        _ = try catalog.record(CommitFixture(group: "owlbears", pack: "émoi", assets: goblinAssets()).commit)
        _ = try catalog.record(CommitFixture(pack: "Emoi", assets: goblinAssets()).commit)
        #expect(throws: CatalogError.self, "full-width letters are Emoi") {
            try catalog.record(CommitFixture(pack: "ＥＭＯＩ", assets: goblinAssets(labelPrefix: "wide")).commit)
        }
        #expect(try catalog.packs().count == 3)
        #expect(try catalog.deletePack(named: "émoi", group: "dragons"))
        #expect(try catalog.packs().map(\.name).sorted() == ["Emoi", "émoi"])
    }

    @Test func anOldCatalogsLookAlikePacksAreEachFoundByTheirOwnName() throws {
        let catalog = try SQLiteCatalog.inMemory()
        _ = try catalog.record(CommitFixture(pack: "Émoi", assets: goblinAssets()).commit)
        // Written before names were compared under the text rule (NOCASE folds ASCII only).
        try catalog.write { db in
            let group = try #require(try Int64.fetchOne(db, sql: #"SELECT id FROM "group" WHERE name = 'dragons'"#))
            try db.execute(
                sql: "INSERT INTO pack (name, groupId, isPublic, createdAt) VALUES ('émoi', ?, 0, '2026-01-01 00:00:00.000')",
                arguments: [group])
        }
        #expect(try catalog.setPublic(true, pack: "émoi", group: "dragons"))
        #expect(try catalog.packs().first { $0.name == "Émoi" }?.isPublic == false, "PATCH of émoi does not publish Émoi")
        let error = #expect(throws: CatalogError.self) { try catalog.deletePack(named: "\u{FF45}\u{301}MOI", group: "dragons") }
        #expect(error?.code == .conflict, "a name that could be either is refused, not guessed")
        #expect(try catalog.deletePack(named: "émoi", group: "dragons"))
        #expect(try catalog.packs().map(\.name) == ["Émoi"])
    }

    /// A new catalog of `kind` with the group "table" and its owner gm (token hash "h1"): the group's id and gm's
    /// member id.
    static func tableWithOwner(_ kind: CatalogBackendKind) throws -> (catalog: Catalog, groupId: Int64, gm: Int64) {
        let catalog = try kind.makeCatalog()
        let groupId = try #require(try catalog.ensureGroup(named: "table").id)
        let gm = try #require(try catalog.addToken(group: "table", label: "gm", secretHash: "h1", role: .owner).memberId)
        return (catalog, groupId, gm)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func aNewMemberCannotTakeANameTheGroupUsesForAMember(_ kind: CatalogBackendKind) throws {
        let (catalog, groupId, gm) = try Self.tableWithOwner(kind)
        // A member whose devices are all gone is still a member: their name is not free either.
        let ghost = try #require(try catalog.addToken(group: "table", label: "ghost", secretHash: "h0", role: .member).memberId)
        #expect(try catalog.removeMember(id: ghost, groupId: groupId))
        try catalog.addInvite(InviteRecord(codeHash: "c1", groupId: groupId, role: .member, createdBy: "gm", inviterId: gm, expiresAt: Date() + 60))
        for taken in ["gm", "GM", "ｇｍ", "Ghost", "ghost"] {
            let error = #expect(throws: CatalogError.self, "\(taken)") {
                try catalog.redeemInvite(codeHash: "c1", label: taken, secretHash: "h2")
            }
            #expect(error?.code == .conflict)
            let named = InviteRecord(
                codeHash: "n", groupId: groupId, role: .member, createdBy: "gm", inviterId: gm, expiresAt: Date() + 60, memberName: taken)
            #expect(errorCode { () throws(CatalogError) in try catalog.addInvite(named) } == .conflict, "an inviter cannot name them \(taken)")
        }
        #expect(try catalog.tokens(groupId: groupId).map(\.name) == ["gm"], "nothing was given")
        let redeemed = try #require(try catalog.redeemInvite(codeHash: "c1", label: "ana", secretHash: "h2"), "the invitation was kept")
        #expect(redeemed.token.name == "ana" && redeemed.token.role == "member")
        #expect(try catalog.members(groupId: groupId).map { "\($0.member.name) \($0.member.role) \($0.devices)" }
            == ["gm owner 1", "ghost member 0", "ana member 1"])
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func aMemberInvitationNamesTheMemberAndTheRedeemersNameOnlyLabelsTheDevice(_ kind: CatalogBackendKind) throws {
        let (catalog, groupId, gmId) = try Self.tableWithOwner(kind)
        let now = Date()
        try catalog.addInvite(InviteRecord(
            codeHash: "new", groupId: groupId, role: .member, createdBy: "gm", inviterId: gmId, expiresAt: now + 60, memberName: "ana"))
        // The redeemer calls the device "gm": it is ana's device, not gm's.
        let ana = try #require(try catalog.redeemInvite(codeHash: "new", label: "gm", secretHash: "h2", now: now))
        #expect(ana.token.name == "gm" && ana.token.memberId != gmId && ana.token.role == "member")
        let principal = try #require(try catalog.principal(tokenHash: "h2"))
        #expect(principal.memberName == "ana" && principal.owner != MemberRules.owner(gmId))
        // A device invitation adds a token to gm, with gm's role.
        try catalog.addInvite(InviteRecord(
            codeHash: "device", groupId: groupId, role: .member, createdBy: "gm", inviterId: gmId, expiresAt: now + 60, memberId: gmId))
        let tablet = try #require(try catalog.redeemInvite(codeHash: "device", label: "gm's tablet", secretHash: "h3", now: now))
        #expect(tablet.token.memberId == gmId && tablet.token.role == "owner")
        #expect(try catalog.principal(tokenHash: "h3")?.owner == MemberRules.owner(gmId))
        #expect(try catalog.members(groupId: groupId).map(\.devices) == [2, 1])
        let other = try #require(try catalog.ensureGroup(named: "other").id)
        let stray = InviteRecord(codeHash: "x", groupId: other, role: .member, createdBy: "gm", inviterId: gmId, expiresAt: now + 60, memberId: gmId)
        #expect(errorCode { () throws(CatalogError) in try catalog.addInvite(stray) } == .notFound, "a device of another group's member")
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func demotingOrRemovingAMemberCancelsTheInvitationsTheyMayNoLongerMake(_ kind: CatalogBackendKind) throws {
        let (catalog, groupId, gm) = try Self.tableWithOwner(kind)
        let carl = try #require(try catalog.addToken(group: "table", label: "carl", secretHash: "h2", role: .owner).memberId)
        try catalog.addToken(group: "table", label: "carl", secretHash: "h3", role: .owner)
        let dana = try #require(try catalog.addToken(group: "table", label: "dana", secretHash: "h4", role: .owner).memberId)
        let now = Date()
        for (code, inviter) in [("carl's", carl), ("gm's", gm), ("dana's", dana)] {
            try catalog.addInvite(InviteRecord(codeHash: code, groupId: groupId, role: .member, createdBy: "", inviterId: inviter, expiresAt: now + 60))
        }
        #expect(try !catalog.setRole(.member, member: carl, groupId: groupId + 1), "another group's member")
        #expect(try catalog.setRole(.member, member: carl, groupId: groupId))
        #expect(try catalog.tokens(groupId: groupId).filter { $0.memberId == carl }.map(\.role) == ["member", "member"], "every device")
        #expect(try catalog.principal(tokenHash: "h3")?.role == .member)
        #expect(try Set(catalog.invites(groupId: groupId, now: now).map(\.codeHash)) == ["gm's", "dana's"])
        #expect(try catalog.redeemInvite(codeHash: "carl's", label: "mallory", secretHash: "h5", now: now) == nil)
        #expect(try catalog.accessChanges(after: 0).changes.filter { $0.kind == .token }.map(\.key).suffix(2) == ["h2", "h3"], "logged")
        #expect(try catalog.removeMember(id: dana, groupId: groupId))
        #expect(try catalog.invites(groupId: groupId, now: now).map(\.codeHash) == ["gm's"])
        #expect(try catalog.principal(tokenHash: "h4") == nil)
        #expect(try !catalog.removeMember(id: dana, groupId: groupId + 1))
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func anInvitationLivesWhileItsInviterMayMakeItAndCanBeCancelled(_ kind: CatalogBackendKind) throws {
        let catalog = try kind.makeCatalog()
        let groupId = try #require(try catalog.ensureGroup(named: "table").id)
        let otherGroup = try #require(try catalog.ensureGroup(named: "other").id)
        try catalog.addToken(group: "table", label: "gm", secretHash: "h1", role: .owner)
        let gm = try catalog.tokens(groupId: groupId).first?.memberId
        let carlPhone = try catalog.addToken(group: "table", label: "carl", secretHash: "h2", role: .owner)
        let carlTablet = try #require(try catalog.addToken(group: "table", label: "carl", secretHash: "h3", role: .owner).id)
        let (carl, now) = (carlPhone.memberId, Date())
        try catalog.addInvite(InviteRecord(codeHash: "carl's", groupId: groupId, role: .owner, createdBy: "carl", inviterId: carl, expiresAt: now + 120))
        try catalog.addInvite(InviteRecord(codeHash: "gm's", groupId: groupId, role: .member, createdBy: "gm", inviterId: gm, expiresAt: now + 60))
        try catalog.addInvite(InviteRecord(codeHash: "old", groupId: groupId, role: .member, createdBy: "gm", inviterId: gm, expiresAt: now - 60))
        #expect(try catalog.invites(groupId: groupId, now: now).map(\.codeHash) == ["gm's", "carl's"], "pending, soonest first")
        #expect(try catalog.invites(groupId: otherGroup, now: now).isEmpty)
        // One of carl's devices revoked: carl is still an owner, the invitation stands.
        #expect(try catalog.deleteToken(id: try #require(carlPhone.id), groupId: groupId))
        #expect(try catalog.invites(groupId: groupId, now: now).map(\.codeHash) == ["gm's", "carl's"])
        // Carl's last owner token revoked: carl's owner invitation dies with it.
        #expect(try catalog.deleteToken(id: carlTablet, groupId: groupId))
        #expect(try catalog.invites(groupId: groupId, now: now).map(\.codeHash) == ["gm's"])
        #expect(try catalog.redeemInvite(codeHash: "carl's", label: "mallory", secretHash: "h4", now: now) == nil)
        // Cancelled by the group only, once.
        #expect(try !catalog.cancelInvite(codeHash: "gm's", groupId: otherGroup))
        #expect(try catalog.cancelInvite(codeHash: "gm's", groupId: groupId))
        #expect(try !catalog.cancelInvite(codeHash: "gm's", groupId: groupId))
        #expect(try catalog.redeemInvite(codeHash: "gm's", label: "ana", secretHash: "h5", now: now) == nil)
        #expect(try catalog.tokens(groupId: groupId).map(\.name) == ["gm"])
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func anInvitationWhoseInviterWasRevokedElsewhereIsRefusedWhenRedeemed(_ kind: CatalogBackendKind) throws {
        let catalog = try kind.makeCatalog()
        let groupId = try #require(try catalog.ensureGroup(named: "table").id)
        // An invitation whose inviter holds no owner token (a catalog written before invitations were tied to them).
        let carl = try catalog.addToken(group: "table", label: "carl", secretHash: "h1", role: .member).memberId
        try catalog.addInvite(InviteRecord(codeHash: "c1", groupId: groupId, role: .owner, createdBy: "carl", inviterId: carl, expiresAt: Date() + 60))
        #expect(try catalog.redeemInvite(codeHash: "c1", label: "mallory", secretHash: "h2") == nil)
        #expect(try catalog.invites(groupId: groupId, now: Date()).isEmpty, "and it is gone")
    }
}
