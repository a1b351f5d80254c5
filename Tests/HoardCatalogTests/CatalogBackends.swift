import Foundation
import HoardCatalog
import Logging
import PostgresNIO
import Testing

@testable import HoardPostgres

/// The backends the catalog's conformance tests run on: each test that takes a ``CatalogBackendKind`` runs once per
/// backend, on a new, empty catalog.
enum CatalogBackendKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// ``SQLiteCatalog`` in memory.
    case sqlite
    /// ``PostgresCatalog`` on a new database of `HOARD_TEST_POSTGRES`'s server (scripts/test.sh starts one with
    /// tools/postgres.sh). Without it these cases fail: they never skip.
    case postgres

    var testDescription: String { rawValue }

    /// A new, empty catalog of this backend.
    func makeCatalog() throws -> Catalog {
        switch self {
        case .sqlite: return try SQLiteCatalog.inMemory()
        case .postgres: return try PostgresCatalog(url: Self.newPostgresDatabase())
        }
    }

    /// Creates a database on the test server and gives its URL.
    static func newPostgresDatabase() throws -> String {
        let url = try #require(
            ProcessInfo.processInfo.environment["HOARD_TEST_POSTGRES"],
            "HOARD_TEST_POSTGRES is not set: run `export HOARD_TEST_POSTGRES=$(tools/postgres.sh start)` first")
        let server = try PostgresCatalogDatabase(url: url)
        let name = "hoard_catalog_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let connection = try PostgresConnection.connect(
            on: PostgresPool.loops.any(), configuration: server.configuration, id: 0, logger: server.logger
        ).wait()
        defer { _ = try? (connection.close() as EventLoopFuture<Void>).wait() }
        _ = try connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: server.logger).wait()
        let configuration = server.configuration
        return "postgres://\(configuration.username)@\(configuration.host ?? "127.0.0.1"):\(configuration.port ?? 5432)/\(name)"
    }
}

/// A backup is a copy of the catalog file: PostgreSQL has none and says what to use instead.
@Test(arguments: CatalogBackendKind.allCases)
func aBackupIsAFileCopyOrSaysWhatToUse(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    let path = NSTemporaryDirectory() + "hoard-backup-" + UUID().uuidString + ".sqlite"
    defer { try? FileManager.default.removeItem(atPath: path) }
    switch kind {
    case .sqlite:
        try catalog.backup(to: path)
        #expect(FileManager.default.fileExists(atPath: path))
    case .postgres:
        let error = #expect(throws: CatalogError.self) { try catalog.backup(to: path) }
        #expect(error?.code == .invalid)
        #expect(error?.message.contains("pg_dump") == true)
    }
}
