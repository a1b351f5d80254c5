import Foundation
import HoardCatalog
import HoardTestSupport
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
        try TestPostgres.newDatabase()
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
