import Foundation
import HoardCatalog
import HoardCore
import HoardPostgres
import HoardTestSupport
import Testing

/// `hoard migrate-catalog --to postgres://…` on the real binary, into new databases of the PostgreSQL `scripts/test.sh`
/// starts (`HOARD_TEST_POSTGRES`). Without it these tests fail.
@Suite("hoard migrate-catalog", .serialized)
struct MigrateCatalogCommandTests {
    /// A data directory as an embedded deployment leaves it: two packs imported and one deleted again (a gap in the
    /// pack ids), a token, and rows in every other table: a group with a quota, an upload, an invitation, a session with
    /// a participant and events (views NULL and empty), a saved map, a ref, a private upload and a share (no name).
    static func embeddedDeployment() throws -> String {
        let data = try CLI.temporaryDirectory()
        let imported = try CLI.run(["import", CLI.pack("dungeon-basics.zip"), CLI.pack("scifi-outpost.zip"), "--data-dir", data])
        try #require(imported.status == 0, "\(imported.stderr)")
        try #require(try CLI.run(["delete", "scifi-outpost", "--data-dir", data]).status == 0)
        try #require(try CLI.run(["token", "create", "--group", "default", "--data-dir", data]).status == 0)
        let catalog = try SQLiteCatalog(path: data + "/catalog.sqlite")
        let groupId = try #require(try catalog.createGroup(named: "dragons", quotaBytes: 2_000_000).id)
        let map = BlobRecord(digest: BlobHasher.digest(of: Array("map".utf8)), size: 3, mediaType: "application/json")
        let picture = BlobRecord(digest: BlobHasher.digest(of: Array("picture".utf8)), size: 7, mediaType: "image/png")
        try catalog.recordUpload(picture, groupId: groupId)
        let anaId = try #require(try catalog.addToken(group: "dragons", label: "ana", secretHash: "ana", role: .owner).memberId)
        let ana = MemberRules.owner(anaId)
        try catalog.addInvite(InviteRecord(
            codeHash: "invite", groupId: groupId, role: .owner, createdBy: "ana", inviterId: anaId, expiresAt: Date() + 3600, memberName: "bo"))
        let session = SessionRecord(id: "s1", name: "Friday", groupId: groupId, host: ana, visibility: "group", code: "ABCD-EFGH",
                                    mapDigest: map.digest, baseSeq: 0, lastSeq: 0, createdAt: Date())
        try catalog.createSession(session, mapBlob: map, reachable: [picture.digest])
        try catalog.addParticipant(ParticipantRecord(id: "p1", sessionId: "s1", name: "Bo", tokenHash: "bo", joinedAt: Date()))
        try catalog.appendEvent(session: "s1", seq: 1, body: #"{"op":"move"}"#, views: nil)
        try catalog.appendEvent(session: "s1", seq: 2, body: #"{"op":"draw"}"#, views: "")
        _ = try catalog.saveMap(group: groupId, name: "cave", blob: map, reachable: [picture.digest])
        _ = try catalog.moveRef(group: groupId, member: ana, name: "sheet", to: picture.digest, expected: .absent)
        let upload = PrivateUploadRecord(scope: .member(groupId: groupId, id: anaId), digest: picture.digest, groupId: groupId, uploader: ana)
        try catalog.recordPrivateUpload(picture, upload, session: nil)
        try catalog.createShare(ShareRecord(id: "share1", groupId: groupId, member: ana, digest: picture.digest, pictureDigest: picture.digest,
                                            name: nil))
        return data
    }

    /// Every table's row count in a PostgreSQL catalog.
    static func counts(_ url: String, _ tables: [String]) throws -> [String: String] {
        try Dictionary(uniqueKeysWithValues: tables.map { table in
            (table, try TestPostgres.value(in: url, "SELECT count(*)::text FROM \"\(table)\"") ?? "")
        })
    }

    @Test func everyTableArrivesWithItsRowsValuesAndIdsAndASecondCopyIsRefused() throws {
        let data = try Self.embeddedDeployment()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let url = try TestPostgres.newDatabase()
        let migrated = try CLI.run(["migrate-catalog", "--to", url, "--data-dir", data, "--json"])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stderr.contains("copied pack: 1 row") && migrated.stderr.contains("verified asset: "), "\(migrated.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(migrated.stdout.utf8)) as? [String: Any], "\(migrated.stderr)")
        let reported = (report["tables"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) { $0[$1["name"] as? String ?? ""] = $1["rows"] as? Int }

        let source = try SQLiteCatalog(path: data + "/catalog.sqlite")
        let counts = try source.export { export in
            try export.tables.reduce(into: [String: Int]()) { $0[$1.name] = try export.count(of: $1.name) }
        }
        let tables = [
            "group", "blob", "pack", "packVersion", "asset", "variant", "packVersionAsset", "packVersionKind", "token", "upload",
            "invite", "session", "participant", "sessionBlob", "sessionEvent", "savedMap", "savedMapBlob", "ref", "privateUpload", "share",
        ]
        for table in tables {
            #expect((counts[table] ?? 0) > 0, "the deployment has rows in \(table)")
        }
        // The access log is PostgreSQL's own: its triggers log the copy.
        let target = try Self.counts(url, counts.keys.filter { $0 != "accessChange" })
        for (table, count) in counts where table != "accessChange" {
            #expect(target[table] == String(count), "\(table): \(count) rows in SQLite")
            #expect(reported[table] == count, "\(table) in the report")
        }
        #expect(report["rows"] as? Int == counts.filter { !["accessChange", "packVersionKind"].contains($0.key) }.values.reduce(0, +))

        // Values: a quota, a boolean, NULL apart from empty text, a time to the millisecond.
        #expect(try TestPostgres.value(in: url, #"SELECT "quotaBytes"::text FROM "group" WHERE name = 'dragons'"#) == "2000000")
        #expect(try TestPostgres.rows(in: url, #"SELECT "isAdmin"::text, role FROM token ORDER BY id"#) == [["false", "member"], ["false", "owner"]])
        #expect(try TestPostgres.rows(in: url, #"SELECT t.name, m.name FROM token t JOIN member m ON m.id = t."memberId" ORDER BY t.id"#)
            == [["member", "member"], ["ana", "ana"]], "each token its member's")
        #expect(try TestPostgres.rows(in: url, #"SELECT coalesce(views, 'NULL') FROM "sessionEvent" ORDER BY seq"#) == [["NULL"], [""]])
        #expect(try TestPostgres.value(in: url, "SELECT (name IS NULL)::text FROM share") == "true")
        for group in try source.groups() {
            let milliseconds = Int64((group.createdAt.timeIntervalSince1970 * 1000).rounded())
            #expect(try TestPostgres.value(in: url, """
                SELECT floor(extract(epoch FROM "createdAt") * 1000)::bigint::text FROM "group" WHERE name = '\(group.name)'
                """) == String(milliseconds))
        }
        // The triggers' counts are the memberships'; ids go on past the deleted pack's.
        #expect(try TestPostgres.value(in: url, """
            SELECT count(*)::text FROM (SELECT "packVersionId", kind, count(*) AS n FROM "packVersionAsset" GROUP BY 1, 2) m
                FULL JOIN "packVersionKind" k USING ("packVersionId", kind) WHERE m.n IS DISTINCT FROM k."assetCount"
            """) == "0")
        #expect(try TestPostgres.value(in: url, "SELECT nextval(pg_get_serial_sequence('pack', 'id'))::text") == "3")
        #expect(try TestPostgres.value(in: url, #"SELECT nextval(pg_get_serial_sequence('"group"', 'id'))::text"#) == "3")

        // The commands read the same catalog from either backend.
        for command in [["packs", "--json"], ["assets", "--json"]] {
            let embedded = try CLI.run(command + ["--data-dir", data])
            let shared = try CLI.run(command + ["--data-dir", data, "--catalog", url])
            #expect(embedded.status == 0 && shared.status == 0, "\(shared.stderr)")
            #expect(shared.stdout == embedded.stdout, "\(command[0]) lists the same from PostgreSQL as from SQLite")
        }

        // A second copy into the same database: refused, nothing changed.
        let before = try Self.counts(url, Array(counts.keys))
        let again = try CLI.run(["migrate-catalog", "--to", url, "--data-dir", data])
        #expect(again.status != 0)
        #expect(again.stderr.contains("is not empty") && again.stderr.contains("migrate into a new database"), "\(again.stderr)")
        #expect(try Self.counts(url, Array(counts.keys)) == before)
    }

    @Test func aDatabaseWithAnyRowsIsRefusedBeforeItsSchemaIsTouched() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        _ = try SQLiteCatalog(path: data + "/catalog.sqlite")
        let url = try TestPostgres.newDatabase()
        try TestPostgres.execute(in: url, "CREATE TABLE notes (line text)")
        try TestPostgres.execute(in: url, "INSERT INTO notes VALUES ('keep me')")
        let result = try CLI.run(["migrate-catalog", "--to", url, "--data-dir", data])
        #expect(result.status != 0)
        #expect(result.stderr.contains("is not empty (rows in notes)"), "\(result.stderr)")
        #expect(try TestPostgres.value(in: url, "SELECT (to_regclass('schema_migrations') IS NULL)::text") == "true")
    }

    /// A target that changes what it is given (a trigger here; a wrong conversion alike): the comparison finds the
    /// table, the copy rolls back. One case per kind of value: text, time, boolean.
    @Test(arguments: [
        ("group", #"NEW.name := NEW.name || '!'"#),
        ("blob", #"NEW."createdAt" := NEW."createdAt" + interval '1 millisecond'"#),
        ("token", #"NEW."isAdmin" := NOT NEW."isAdmin""#),
    ])
    func aCopyThatDiffersRollsBackNamingTheTable(table: String, change: String) throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        #expect(try CLI.run(["import", CLI.pack("scifi-outpost.zip"), "--data-dir", data]).status == 0)
        #expect(try CLI.run(["token", "create", "--group", "default", "--data-dir", data]).status == 0)
        let url = try TestPostgres.newDatabase()
        try PostgresCatalog(url: url).close()
        try TestPostgres.execute(in: url, "CREATE FUNCTION tamper() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \(change); RETURN NEW; END $$")
        try TestPostgres.execute(in: url, "CREATE TRIGGER tamper BEFORE INSERT ON \"\(table)\" FOR EACH ROW EXECUTE FUNCTION tamper()")
        let result = try CLI.run(["migrate-catalog", "--to", url, "--data-dir", data])
        #expect(result.status != 0)
        #expect(result.stderr.contains("the copy of \(table) does not match") && result.stderr.contains("nothing was written"), "\(result.stderr)")
        #expect(try Self.counts(url, ["group", "blob", "pack", "token"]).values.allSatisfy { $0 == "0" })
    }

    @Test func wrongURLsAndSourcesAreClearErrors() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let empty = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        _ = try SQLiteCatalog(path: data + "/catalog.sqlite")
        let server = try TestPostgres.serverURL()
        var missing = try #require(URLComponents(string: server))
        missing.path = "/no_such_database"
        let cases: [(arguments: [String], says: String)] = [
            (["--to", "mysql://hoard@127.0.0.1/hoard", "--data-dir", data], "is not a PostgreSQL URL"),
            (["--to", "postgres://hoard@127.0.0.1:1/hoard", "--data-dir", data], "cannot reach PostgreSQL at postgres://hoard@127.0.0.1:1/hoard"),
            (["--to", missing.string ?? "", "--data-dir", data], "has no database 'no_such_database'"),
            (["--to", server, "--catalog", server], "copies a SQLite catalog"),
            (["--to", server, "--data-dir", empty + "/nothing"], "there is no data directory"),
            (["--to", server, "--data-dir", empty], "there is no catalog at"),
        ]
        for (arguments, says) in cases {
            let result = try CLI.run(["migrate-catalog"] + arguments)
            #expect(result.status != 0 && result.stderr.contains(says), "\(arguments): \(result.stderr)")
        }
    }
}
