import Foundation
import GRDB
import HoardCatalog
import Testing

@testable import HoardPostgres

/// The parts of ``CatalogCopy`` that need no database: reading GRDB's times, ordering tables by their foreign keys.
/// The copy itself runs in hoardTests (`hoard migrate-catalog`).
@Suite struct CatalogCopyTests {
    @Test func timesAsGRDBWritesThemBecomeUnixMilliseconds() throws {
        #expect(CatalogCopy.unixMilliseconds("1970-01-01 00:00:00.000") == 0)
        #expect(CatalogCopy.unixMilliseconds("1969-12-31 23:59:59.999") == -1)
        #expect(CatalogCopy.unixMilliseconds("2000-03-01 00:00:00.000") == 951_868_800_000)
        #expect(CatalogCopy.unixMilliseconds("2026-11-26T06:10:00.1234Z") == 1_795_673_400_123)
        #expect(CatalogCopy.unixMilliseconds("2026-11-26 06:10:00.5") == 1_795_673_400_500)
        #expect(CatalogCopy.unixMilliseconds("2026-11-26 06:10") == 1_795_673_400_000)
        #expect(CatalogCopy.unixMilliseconds("2026-11-26") == 1_795_651_200_000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(formatter.date(from: "2026-11-26T06:10:00.123Z"))
        #expect(CatalogCopy.unixMilliseconds("2026-11-26 06:10:00.123") == Int64((date.timeIntervalSince1970 * 1000).rounded()))
        for text in ["yesterday", "2026-13-01 00:00:00", "2026-11-26 06:10:00.", "2026-11-26 06:10:00+02:00", "2026-11-26 25:00", ""] {
            #expect(CatalogCopy.unixMilliseconds(text) == nil, "\(text)")
        }
    }

    @Test func aCatalogANewerHoardMigratedIsRefused() throws {
        let path = NSTemporaryDirectory() + "hoard-newer-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        _ = try SQLiteCatalog(path: path)
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-future')") }
        try queue.close()
        let catalog = try SQLiteCatalog(path: path)
        let error = #expect(throws: CatalogError.self) { try catalog.export { try CatalogCopy.checkMigrations(of: $0) } }
        #expect(error?.message.contains("'v99-future', which this Hoard does not know: upgrade Hoard") == true, "\(String(describing: error))")
        #expect(throws: Never.self) { try SQLiteCatalog.inMemory().export { try CatalogCopy.checkMigrations(of: $0) } }
    }

    @Test func tablesComeAfterTheTablesTheirForeignKeysNameAndACycleIsRefused() throws {
        func table(_ name: String, _ parents: Set<String>) -> CatalogCopy.TargetTable {
            var table = CatalogCopy.TargetTable(name: name)
            table.parents = parents
            return table
        }
        let tables = ["variant": table("variant", ["asset", "blob"]), "asset": table("asset", ["blob"]), "blob": table("blob", []),
                      "group": table("group", [])]
        #expect(try CatalogCopy.foreignKeyOrder(tables) == ["blob", "group", "asset", "variant"])
        let cycle = ["a": table("a", ["b"]), "b": table("b", ["a"]), "c": table("c", [])]
        let error = #expect(throws: CatalogError.self) { try CatalogCopy.foreignKeyOrder(cycle) }
        #expect(error?.message.contains("cycle among a, b") == true)
    }
}
