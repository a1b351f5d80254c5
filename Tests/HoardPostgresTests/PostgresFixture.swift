import Foundation
import HoardPostgres
import HoardTestSupport
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL the tests run against: `HOARD_TEST_POSTGRES`, the URL scripts/test.sh exports after
/// `tools/postgres.sh start`. Without it the tests fail: they never skip.
enum PostgresFixture {
    static let logger = Logger(label: "hoard.postgres.tests")

    /// The server's URL, or a failure that says how to start one.
    static func serverURL() throws -> String {
        try #require(
            ProcessInfo.processInfo.environment["HOARD_TEST_POSTGRES"],
            "HOARD_TEST_POSTGRES is not set: run `export HOARD_TEST_POSTGRES=$(tools/postgres.sh start)` first")
    }

    /// A new, empty database on the test server, its own per test.
    static func emptyDatabase() async throws -> PostgresCatalogDatabase {
        try PostgresCatalogDatabase(url: TestPostgres.newDatabase(), logger: logger)
    }

    /// A new database with the catalog's schema.
    static func migratedDatabase() async throws -> PostgresCatalogDatabase {
        let database = try await emptyDatabase()
        _ = try await withConnection(database) { connection in
            try PostgresSchema.migrate(connection, logger: logger)
        }
        return database
    }

    /// Runs `body` on a new connection to `database` and closes it after.
    static func withConnection<T>(
        _ database: PostgresCatalogDatabase, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let connection = try await database.connect()
        do {
            let value = try await body(connection)
            try? await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The URL of another database on the same server, or of another user or port.
    static func url(
        of database: PostgresCatalogDatabase, user: String? = nil, port: Int? = nil, database name: String? = nil
    ) -> String {
        let configuration = database.configuration
        return "postgres://\(user ?? configuration.username)@\(configuration.host ?? "127.0.0.1"):"
            + "\(port ?? configuration.port ?? 5432)/\(name ?? configuration.database ?? "")"
    }

    /// Makes a group, a map blob and a session to append events to; returns the session's id.
    static func makeSession(_ connection: PostgresConnection) async throws -> String {
        let id = UUID().uuidString
        let digest = "sha256:" + String(repeating: "0", count: 64)
        try await connection.query("""
            WITH g AS (INSERT INTO "group" (name, "createdAt") VALUES (\(id), now()) RETURNING id),
            b AS (INSERT INTO blob (digest, size, "mediaType", "createdAt")
                  VALUES (\(digest), 2, 'application/json', now()) ON CONFLICT DO NOTHING)
            INSERT INTO session (id, name, "groupId", host, visibility, code, "mapDigest", "createdAt")
            SELECT \(id), 'table', g.id, 'gm', 'group', \(id), \(digest), now() FROM g
            """, logger: logger)
        return id
    }

    /// The first `count` events a listener delivers, failing after a minute rather than hanging.
    static func collect(_ count: Int, from events: AsyncStream<SessionEvent>) async throws -> [SessionEvent] {
        let collected = try await withThrowingTaskGroup(of: [SessionEvent]?.self) { group in
            group.addTask {
                var collected: [SessionEvent] = []
                for await event in events {
                    collected.append(event)
                    if collected.count == count { break }
                }
                return collected
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        return try #require(collected, "the listener did not deliver \(count) events within a minute")
    }
}
