import Foundation
import HoardCatalog
import HoardCore
import Testing

@testable import HoardPostgres

/// Groups, tokens, invitations and the access change log, on every backend.
@Suite struct AccessCatalogTests {
    @Test(arguments: CatalogBackendKind.allCases)
    func groupNamesCompareAsciiCaseAsideAndAlikeNamesAreRefused(_ kind: CatalogBackendKind) throws {
        let catalog = try kind.makeCatalog()
        let eclair = try catalog.createGroup(named: "éclair", quotaBytes: 10)
        #expect(errorCode { () throws(CatalogError) in try catalog.createGroup(named: "ÉCLAIR") } == .conflict)
        #expect(errorCode { () throws(CatalogError) in try catalog.createGroup(named: "e\u{301}clair") } == .conflict)
        #expect(errorCode { () throws(CatalogError) in try catalog.createGroup(named: " ") } == .invalid)
        try catalog.createGroup(named: "Zebra")
        try catalog.createGroup(named: "apple")
        #expect(try catalog.groups().map(\.name) == ["apple", "Zebra", "éclair"])
        // Exactly that name, ASCII case aside: "ÉCLAIR" is not "éclair" there, but an import into it finds it.
        #expect(try catalog.group(named: "ZEBRA")?.name == "Zebra")
        #expect(try catalog.group(named: "ÉCLAIR") == nil)
        #expect(try catalog.group(matching: "ÉCLAIR")?.id == eclair.id)
        #expect(try catalog.ensureGroup(named: "ÉCLAIR").id == eclair.id)
        #expect(try catalog.setQuota(20, group: "éclair"))
        #expect(try !catalog.setQuota(20, group: "absent"))
        let eclairId = try #require(eclair.id)
        let quota = try #require(try catalog.quota(groupId: eclairId))
        #expect(quota.used == 0 && quota.quota == 20 && quota.name == "éclair")
        #expect(try catalog.quota(groupId: -5) == nil)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func tokensAndInvitationsGiveMembersTheirGroupAndRole(_ kind: CatalogBackendKind) throws {
        let catalog = try kind.makeCatalog()
        let groupId = try #require(try catalog.ensureGroup(named: "table").id)
        #expect(errorCode { () throws(CatalogError) in
            try catalog.addToken(group: "absent", label: "x", secretHash: "h0", role: .member)
        } == .notFound)
        let owner = try catalog.addToken(group: "TABLE", label: "gm", secretHash: "h1", role: .owner)
        let admin = try catalog.addToken(group: "table", label: "root", secretHash: "h2", role: .operator)
        let (ownerId, adminId) = (try #require(owner.id), try #require(admin.id))
        #expect(owner.groupId == groupId && !owner.isAdmin && admin.isAdmin)
        #expect(try catalog.tokens(groupId: groupId).map(\.name) == ["gm", "root"])
        #expect(try catalog.principal(tokenHash: "h1") == Principal(
            groupId: groupId, group: "table", role: .owner, member: try #require(owner.memberId), memberName: "gm", tokenName: "gm"))
        #expect(try catalog.principal(tokenHash: "nothing") == nil)
        #expect(try catalog.deleteToken(id: adminId, groupId: groupId))
        #expect(try !catalog.deleteToken(id: adminId, groupId: groupId))
        #expect(try !catalog.deleteToken(id: ownerId, groupId: groupId + 1))

        let now = Date()
        try catalog.addInvite(InviteRecord(codeHash: "c1", groupId: groupId, role: .owner, createdBy: "gm", inviterId: owner.memberId, expiresAt: now + 60))
        try catalog.addInvite(InviteRecord(codeHash: "c2", groupId: groupId, role: .member, createdBy: "gm", inviterId: owner.memberId, expiresAt: now - 60))
        let redeemed = try #require(try catalog.redeemInvite(codeHash: "c1", label: "ana", secretHash: "h3", now: now))
        #expect(redeemed.group == "table" && redeemed.token.role == "owner" && redeemed.token.name == "ana")
        #expect(try catalog.redeemInvite(codeHash: "c1", label: "bo", secretHash: "h4", now: now) == nil, "used once")
        #expect(try catalog.redeemInvite(codeHash: "c2", label: "bo", secretHash: "h4", now: now) == nil, "expired")
        #expect(try catalog.redeemInvite(codeHash: "c2", label: "bo", secretHash: "h4", now: now - 3600) == nil, "an expired one is deleted")
        #expect(try catalog.accessBase().principals["h3"]?.role == .owner)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func theChangeLogListsChangesInOrderAndAPruneShowsOnlyToReadersBehindIt(_ kind: CatalogBackendKind) throws {
        let catalog = try kind.makeCatalog()
        let groupId = try #require(try catalog.ensureGroup(named: "table").id)
        #expect(try catalog.lastAccessChange() == 0)
        try catalog.addToken(group: "table", label: "a", secretHash: "h1", role: .member)
        let blob = BlobRecord(digest: fakeDigest("upload"), size: 3, mediaType: "image/png")
        try catalog.recordUpload(blob, groupId: groupId)
        try catalog.addToken(group: "table", label: "b", secretHash: "h2", role: .member)
        let all = try catalog.accessChanges(after: 0).changes
        #expect(all.map(\.kind) == [.token, .blob, .token])
        #expect(all.map(\.key) == ["h1", blob.digest.description, "h2"])
        let last = try catalog.lastAccessChange()
        #expect(all.last?.seq == last)
        #expect(try catalog.accessBase().lastChange == last)
        #expect(try catalog.accessChanges(after: all[0].seq, limit: 1).changes.map(\.key) == [blob.digest.description])

        // Pruned through the second change: a reader that applied it goes on; one that applied nothing must rebuild.
        try catalog.pruneAccessChanges(through: all[1].seq, writtenBefore: Date(timeIntervalSinceNow: 60))
        let caughtUp = try catalog.accessChanges(after: all[1].seq)
        #expect(caughtUp.changes.map(\.key) == ["h2"])
        #expect(caughtUp.oldest.map { $0 <= all[1].seq + 1 } == true)
        #expect(try catalog.accessChanges(after: 0).oldest.map { $0 > 1 } == true)
        // The last row always stays.
        try catalog.pruneAccessChanges(through: last, writtenBefore: Date(timeIntervalSinceNow: 60))
        #expect(try catalog.lastAccessChange() == last)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func aBlobsOwnersAreTheGroupsThatUploadedItAndAnAbsentBlobHasNone(_ kind: CatalogBackendKind) throws {
        let catalog = try kind.makeCatalog()
        let (red, blue) = (try #require(try catalog.ensureGroup(named: "red").id), try #require(try catalog.ensureGroup(named: "blue").id))
        let (picture, other) = (fakeDigest("picture"), fakeDigest("other"))
        for groupId in [blue, red, blue] {
            try catalog.recordUpload(BlobRecord(digest: picture, size: 5, mediaType: "image/webp"), groupId: groupId)
        }
        try catalog.recordUpload(BlobRecord(digest: other, size: 6, mediaType: "image/png"), groupId: blue)
        let owners = try #require(try catalog.blobOwners(picture))
        #expect(owners == BlobOwners(size: 5, mediaType: "image/webp", packs: [], uploaders: [red, blue].sorted()))
        let several = try catalog.blobOwners([picture, other, fakeDigest("absent")])
        #expect(several.count == 2)
        #expect(several[picture] == owners && several[other]?.uploaders == [blue])
        #expect(try catalog.blobOwners(fakeDigest("absent")) == nil)
        #expect(try catalog.blob(other)?.size == 6 && catalog.blob(fakeDigest("absent")) == nil)
        #expect(Set(try catalog.blobs().map(\.digest)) == [picture, other])
        #expect(try catalog.usage(groupId: blue) == 11)
    }

    /// A rolled-back write leaves its number unused on PostgreSQL: a reader past the pruned rows must not take that
    /// gap for pruning.
    @Test func aNumberSkippedByARollbackIsNotTakenForPruning() throws {
        let catalog = try #require(try CatalogBackendKind.postgres.makeCatalog() as? PostgresCatalog)
        try catalog.ensureGroup(named: "table")
        try catalog.addToken(group: "table", label: "a", secretHash: "h1", role: .member)
        let applied = try catalog.lastAccessChange()
        _ = try? catalog.write("a write that rolls back") { tx in
            try tx.execute(#"INSERT INTO token ("groupId", name, "secretHash", "createdAt") SELECT id, 'x', 'h0', now() FROM "group""#)
            throw CatalogError(.invalid, "rolled back")
        }
        try catalog.addToken(group: "table", label: "b", secretHash: "h2", role: .member)
        let changes = try catalog.accessChanges(after: applied)
        #expect(changes.changes.map(\.seq) == [applied + 2], "the rolled-back number is skipped")
        try catalog.pruneAccessChanges(through: applied, writtenBefore: Date(timeIntervalSinceNow: 60))
        let after = try catalog.accessChanges(after: applied)
        #expect(after.oldest.map { $0 <= applied + 1 } == true, "no rebuild for the reader that applied through the pruned rows")
        #expect(after.changes.map(\.key) == ["h2"])
    }
}
