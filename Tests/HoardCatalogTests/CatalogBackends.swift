import Foundation
import HoardCatalog
import HoardPostgres
import HoardTestSupport
import Testing

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
        case .postgres: return try PostgresCatalog(url: TestPostgres.newDatabase())
        }
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

/// PostgreSQL going away: a pooled connection that broke while idle is replaced unseen; a server that refuses
/// connections is `unavailable` (the API's 503) with a message that says so; once it is back, calls work again.
@Test func aCatalogWhosePostgreSQLGoesAwayIsUnavailableThenRecovers() throws {
    let url = try TestPostgres.newDatabase()
    let name = String(url.split(separator: "/").last ?? "")
    let catalog = try PostgresCatalog(url: url)
    defer { catalog.close() }
    try catalog.ensureGroup(named: "dragons")
    let terminate = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()"
    try TestPostgres.execute(terminate)
    #expect(try catalog.groups().map(\.name) == ["dragons"], "the broken idle connection was replaced")
    try TestPostgres.execute("ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS false", terminate)
    let error = #expect(throws: CatalogError.self) { try catalog.groups() }
    #expect(error?.code == .unavailable)
    #expect(error?.message.contains("PostgreSQL") == true, "\(String(describing: error))")
    try TestPostgres.execute("ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS true")
    #expect(try catalog.groups().map(\.name) == ["dragons"])
}

/// One garbage collection at a time across replicas: on PostgreSQL a second taker is told another collects, and the
/// lock is free again once released; SQLite leaves it to the data directory's file lock.
@Test(arguments: CatalogBackendKind.allCases)
func theCollectionLockIsHeldByOneAtATime(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    guard kind == .postgres else {
        #expect(try catalog.collectionLock() == nil)
        return
    }
    let held = try #require(try catalog.collectionLock())
    let error = #expect(throws: CatalogError.self) { try catalog.collectionLock() }
    #expect(error?.code == .conflict)
    held.release()
    let again = try #require(try catalog.collectionLock(), "free again once released")
    again.release()
}
