import Foundation
import GRDB
import HoardCatalog
import HoardPostgres
import PostgresNIO
import Testing

@Suite struct PostgresSchemaTests {
    @Test func migrationsApplyOnAnEmptyDatabaseOnceAndInOrder() async throws {
        let database = try await PostgresFixture.emptyDatabase()
        let logger = PostgresFixture.logger
        let names = PostgresSchema.migrations.map(\.name)
        try await PostgresFixture.withConnection(database) { connection in
            let first = try PostgresSchema.migrate(connection, logger: logger)
            let again = try PostgresSchema.migrate(connection, logger: logger)
            let applied = try await PostgresSchema.appliedMigrations(connection, logger: logger)
            #expect(first == names)
            #expect(again == [])
            #expect(applied.sorted() == names.sorted())
        }
    }

    @Test func twoReplicasMigratingAtOnceApplyEachMigrationOnce() async throws {
        let database = try await PostgresFixture.emptyDatabase()
        let logger = PostgresFixture.logger
        async let first = PostgresFixture.withConnection(database) { connection in
            try PostgresSchema.migrate(connection, logger: logger)
        }
        async let second = PostgresFixture.withConnection(database) { connection in
            try PostgresSchema.migrate(connection, logger: logger)
        }
        let ran = try await [first, second].sorted { $0.count < $1.count }
        #expect(ran == [[], PostgresSchema.migrations.map(\.name)])
    }

    @Test func theSchemaHasTheSQLiteCatalogsTablesColumnsKeysIndexesAndTriggers() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("catalog.sqlite").path
        _ = try SQLiteCatalog(path: path)
        let sqlite = try await DatabaseQueue(path: path).read { db in try Shape(sqlite: db) }
        let database = try await PostgresFixture.migratedDatabase()
        let postgres = try await PostgresFixture.withConnection(database) { connection in
            try await Shape(postgres: connection)
        }
        #expect(postgres.columns.keys.sorted() == sqlite.columns.keys.sorted())
        for (table, columns) in sqlite.columns {
            #expect(postgres.columns[table] == columns, "columns of \(table)")
            #expect(postgres.primaryKeys[table] == sqlite.primaryKeys[table], "primary key of \(table)")
        }
        #expect(postgres.indexes == sqlite.indexes)
        #expect(postgres.triggers == sqlite.triggers)
    }

    @Test func theTriggersKeepKindCountsAndTheAccessLogAndNamesIgnoreCase() async throws {
        let database = try await PostgresFixture.migratedDatabase()
        let logger = PostgresFixture.logger
        let digest = "sha256:" + String(repeating: "1", count: 64)
        try await PostgresFixture.withConnection(database) { connection in
            try await connection.query("""
                WITH g AS (INSERT INTO "group" (name, "createdAt") VALUES ('Dragons', now()) RETURNING id),
                b AS (INSERT INTO blob VALUES (\(digest), 1, 'image/png', now())),
                a AS (INSERT INTO asset VALUES (\(digest), 'token', 'orc', 1, 1)),
                p AS (INSERT INTO pack (name, "groupId", "createdAt") SELECT 'Monsters', id, now() FROM g RETURNING id)
                INSERT INTO "packVersion" ("packId", version, "manifestDigest", "assetCount", "totalBytes",
                                           "importedAt")
                SELECT id, '1', \(digest), 1, 1, now() FROM p
                """, logger: logger)
            try await connection.query("""
                INSERT INTO "packVersionAsset" ("packVersionId", "assetDigest", kind, name)
                SELECT id, \(digest), 'token', 'orc' FROM "packVersion"
                """, logger: logger)
            let counts = try await connection.query(
                #"SELECT kind, "assetCount" FROM "packVersionKind""#, logger: logger
            ).decode((String, Int64).self).reduce(into: [(String, Int64)]()) { $0.append($1) }
            #expect(counts.map(\.0) == ["token"] && counts.map(\.1) == [1])
            try await connection.query(#"DELETE FROM "packVersionAsset""#, logger: logger)
            let left = try await connection.query(
                #"SELECT "assetCount" FROM "packVersionKind""#, logger: logger
            ).decode(Int64.self).reduce(into: [Int64]()) { $0.append($1) }
            #expect(left == [0], "a deleted membership row is counted off")
            let changes = try await connection.query(
                #"SELECT kind FROM "accessChange" ORDER BY seq"#, logger: logger
            ).decode(String.self).reduce(into: [String]()) { $0.append($1) }
            #expect(changes == ["pack", "version"])
            await #expect(throws: (any Error).self) {
                try await connection.query(#"INSERT INTO "group" (name, "createdAt") VALUES ('dRAGONS', now())"#,
                                           logger: logger)
            }
        }
    }
}

/// What two schemas must agree on: each table's columns (name, type family, NOT NULL), primary key, index names and
/// trigger names. Left out: SQLite's FTS5 tables and their triggers, whose twin is one trigram index.
struct Shape {
    var columns: [String: [String: String]] = [:]
    var primaryKeys: [String: [String]] = [:]
    var indexes: Set<String> = []
    var triggers: Set<String> = []

    init(sqlite db: Database) throws {
        let tables = try String.fetchAll(db, sql: """
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
            AND name NOT LIKE 'grdb_%' AND name NOT LIKE '%Search%'
            """)
        for table in tables {
            var columns: [String: String] = [:]
            var key: [(Int, String)] = []
            for row in try Row.fetchAll(db, sql: "PRAGMA table_info(\"\(table)\")") {
                let name: String = row["name"]
                let type = Self.family(sqlite: row["type"])
                columns[name] = type + ((row["notnull"] as Int) != 0 || (row["pk"] as Int) != 0 ? " not null" : "")
                if (row["pk"] as Int) > 0 { key.append((row["pk"], name)) }
            }
            self.columns[table] = columns
            primaryKeys[table] = key.sorted { $0.0 < $1.0 }.map(\.1)
        }
        indexes = Set(try String.fetchAll(db, sql: """
            SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'
            """)).union(["packVersionAssetSearch"])
        triggers = Set(try String.fetchAll(db, sql: """
            SELECT name FROM sqlite_master WHERE type = 'trigger' AND name NOT LIKE '%Search%'
            """))
    }

    init(postgres connection: PostgresConnection) async throws {
        let logger = PostgresFixture.logger
        let rows = try await connection.query("""
            SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
            """, logger: logger)
        for try await (table, column, type, nullable) in rows.decode((String, String, String, String).self) {
            columns[table, default: [:]][column] = Self.family(postgres: type) + (nullable == "NO" ? " not null" : "")
        }
        let keys = try await connection.query("""
            SELECT c.relname, a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
            CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
            WHERE i.indisprimary AND c.relname <> 'schema_migrations' ORDER BY c.relname, k.position
            """, logger: logger)
        for try await (table, column) in keys.decode((String, String).self) {
            primaryKeys[table, default: []].append(column)
        }
        // Unique constraints' own indexes (`…_key`) and primary keys are SQLite's autoindexes: not compared.
        let indexNames = try await connection.query("""
            SELECT indexname FROM pg_indexes WHERE schemaname = 'public'
            AND indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '%\\_key'
            """, logger: logger)
        for try await name in indexNames.decode(String.self) { indexes.insert(name) }
        // PostgreSQL's own notices to other replicas (`…_notify`) have no SQLite twin: one process needs none.
        let triggerNames = try await connection.query(
            #"SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname NOT LIKE '%\_notify'"#, logger: logger)
        for try await name in triggerNames.decode(String.self) { triggers.insert(name) }
    }

    /// SQLite's declared types and PostgreSQL's, as the mapping in `PostgresSchema` pairs them.
    static func family(sqlite type: String) -> String {
        switch type.uppercased() {
        case "INTEGER": "integer"
        case "BOOLEAN": "boolean"
        case "DATETIME": "time"
        default: "text"
        }
    }

    static func family(postgres type: String) -> String {
        switch type {
        case "bigint": "integer"
        case "boolean": "boolean"
        case "timestamp with time zone": "time"
        default: "text"
        }
    }
}
