import Foundation
import GRDB
import HoardCore
import HoardPostgres
import HoardTestSupport
import Testing

@testable import HoardCatalog

/// Migration `v14-members` on both backends: a catalog whose members were names gets member rows, each token
/// theirs, and what names owned is owned by the member of that name (the highest role's, when a name had several).
@Suite struct MemberMigrationTests {
    /// What a catalog held before `v14-members`: owner gm, a member-role token a redeemer also called "gm", ana on two
    /// devices, and "ghost" who owns a ref but has no token.
    static let oldRows: [String] = {
        let (picture, map) = (fakeDigest("picture"), fakeDigest("map"))
        let at = "'2026-01-01 00:00:00.000'"
        let later = "'2099-01-01 00:00:00.000'"
        return [
            #"INSERT INTO "group" (name, "createdAt") VALUES ('table', \#(at))"#,
            #"INSERT INTO blob (digest, size, "mediaType", "createdAt") VALUES ('\#(picture)', 3, 'image/png', \#(at))"#,
            #"INSERT INTO blob (digest, size, "mediaType", "createdAt") VALUES ('\#(map)', 2, 'application/json', \#(at))"#,
            #"""
            INSERT INTO token ("groupId", name, "secretHash", "isAdmin", role, "createdAt") VALUES
                (1, 'gm', 'h1', false, 'owner', \#(at)), (1, 'gm', 'h2', false, 'member', \#(at)),
                (1, 'ana', 'h3', false, 'member', \#(at)), (1, 'ana', 'h4', false, 'member', \#(at))
            """#,
            #"""
            INSERT INTO ref ("groupId", member, name, digest, "updatedAt") VALUES
                (1, 'gm', 'last', '\#(picture)', \#(at)), (1, 'ghost', 'old', '\#(picture)', \#(at))
            """#,
            #"""
            INSERT INTO share (id, "groupId", member, digest, "pictureDigest", "createdAt")
                VALUES ('s1', 1, 'gm', '\#(picture)', '\#(picture)', \#(at))
            """#,
            #"""
            INSERT INTO session (id, name, "groupId", host, visibility, code, "mapDigest", "createdAt")
                VALUES ('game', 'Friday', 1, 'gm', 'private', 'ABCD-EFGH', '\#(map)', \#(at))
            """#,
            #"""
            INSERT INTO "privateUpload" (scope, digest, "groupId", uploader, "createdAt") VALUES
                ('member:1:gm', '\#(picture)', 1, 'gm', \#(at)), ('session:game', '\#(map)', 1, 'ana', \#(at))
            """#,
            #"""
            INSERT INTO invite ("codeHash", "groupId", role, "createdBy", "expiresAt") VALUES ('c', 1, 'member', 'gm', \#(later))
            """#,
        ]
    }()

    /// A catalog of `kind` with ``oldRows``, migrated to the current schema.
    static func migratedCatalog(_ kind: CatalogBackendKind) throws -> Catalog {
        switch kind {
        case .sqlite:
            let queue = try DatabaseQueue()
            try SQLiteCatalog.migrator.migrate(queue, upTo: "v13-leases")
            try queue.write { db in for statement in oldRows { try db.execute(sql: statement) } }
            return try SQLiteCatalog(writer: queue)
        case .postgres:
            let url = try TestPostgres.newDatabase()
            let before = PostgresSchema.migrations.prefix { $0.name != "v14-members" }
            try TestPostgres.execute(
                in: url,
                statements: [#"CREATE TABLE schema_migrations (name text PRIMARY KEY, "appliedAt" timestamptz NOT NULL DEFAULT now())"#]
                    + before.flatMap(\.statements) + before.map { "INSERT INTO schema_migrations (name) VALUES ('\($0.name)')" } + oldRows)
            return try PostgresCatalog(url: url)
        }
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func whatANameOwnedBelongsToTheMemberOfThatNameWithTheHighestRole(_ kind: CatalogBackendKind) throws {
        let catalog = try Self.migratedCatalog(kind)
        let gm = try #require(try catalog.principal(tokenHash: "h1"))
        let impostor = try #require(try catalog.principal(tokenHash: "h2"))
        let (ana, anaTablet) = (try #require(try catalog.principal(tokenHash: "h3")), try #require(try catalog.principal(tokenHash: "h4")))
        #expect(gm.role == .owner && gm.memberName == "gm" && impostor.role == .member)
        #expect(gm.owner != impostor.owner, "one name, two roles: two members")
        #expect(ana.owner == anaTablet.owner, "one name, one role: one member on two devices")
        let members = try catalog.members(groupId: 1).map { "\($0.member.name) \($0.member.role) \($0.devices)" }
        #expect(members == ["gm owner 1", "gm member 1", "ana member 2", "ghost member 0"])

        #expect(try catalog.refs(group: 1, member: gm.owner).map(\.name) == ["last"])
        #expect(try catalog.refs(group: 1, member: impostor.owner).isEmpty)
        let ghost = try #require(try catalog.members(groupId: 1).first { $0.member.name == "ghost" }?.member.id)
        #expect(try catalog.refs(group: 1, member: MemberRules.owner(ghost)).map(\.name) == ["old"])
        #expect(try catalog.shares(group: 1, member: gm.owner).map(\.id) == ["s1"])
        #expect(try catalog.shares(group: 1, member: impostor.owner).isEmpty)
        #expect(try catalog.session(id: "game")?.host == gm.owner)
        #expect(try catalog.sessions(groupId: 1, host: impostor.owner).isEmpty, "the private session is not the impostor's")
        #expect(try catalog.uploads(by: gm, offset: 0, limit: 10).page.map(\.digest) == [fakeDigest("picture")])
        #expect(try catalog.uploads(by: impostor, offset: 0, limit: 10).total == 0)
        #expect(try catalog.uploads(by: ana, offset: 0, limit: 10).page.map(\.digest) == [fakeDigest("map")], "a session upload")
        #expect(try catalog.privateUpload(fakeDigest("picture"))?.scopes == [UploadScope.member(groupId: 1, id: gm.memberId).description])

        // gm's invitation is gm the owner's, and stands.
        #expect(try catalog.invites(groupId: 1, now: Date()).first?.inviterId == gm.memberId)
        let redeemed = try #require(try catalog.redeemInvite(codeHash: "c", label: "bo", secretHash: "h5"))
        #expect(redeemed.token.role == "member" && redeemed.token.memberId != nil)
    }
}
