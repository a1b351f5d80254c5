import Foundation
import GRDB

/// A value of a catalog row as SQLite stores it (its storage class), for a copy into another database.
public enum StoredValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bytes([UInt8])
}

/// A table of the catalog as a copy reads it: its name and its columns, in the order of their definition.
public struct StoredTable: Sendable, Hashable {
    /// The table's name, as SQLite spells it (`packVersion`).
    public let name: String
    /// Its columns' names.
    public let columns: [String]
}

/// The whole SQLite catalog in one read transaction, for copying it elsewhere (``SQLiteCatalog/export(_:)``): every
/// read through it sees the same committed state. It is valid only inside the closure it was given to.
public struct CatalogExport {
    let db: Database
    /// The migrations the catalog has: those this Hoard knows in their order, then any others (a newer Hoard's) by name.
    public let migrations: [String]
    /// Its tables: all but SQLite's own, GRDB's `grdb_migrations`, and full-text indexes with their shadow tables
    /// (what a copy carries; the other database builds its own indexes).
    public let tables: [StoredTable]
    /// The largest id each AUTOINCREMENT table ever gave (`sqlite_sequence`), deleted rows' included.
    public let sequences: [String: Int64]

    /// How many rows `table` holds.
    public func count(of table: String) throws(CatalogError) -> Int {
        try reading(table) { try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.quotedDatabaseIdentifier)") ?? 0 }
    }

    /// Every row of `table`, `columns` in that order, sorted by `key` (byte order for text, as `COLLATE BINARY`),
    /// handed to `body` in batches of at most `batchSize`. An error `body` throws stops the reading and is rethrown.
    public func rows(
        of table: String, columns: [String], orderedBy key: [String], batchSize: Int,
        _ body: ([[StoredValue]]) throws -> Void
    ) throws {
        let list = columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let order = key.map { "\($0.quotedDatabaseIdentifier) COLLATE BINARY" }.joined(separator: ", ")
        let sql = "SELECT \(list) FROM \(table.quotedDatabaseIdentifier)" + (order.isEmpty ? "" : " ORDER BY \(order)")
        let cursor = try reading(table) { try Row.fetchCursor(db, sql: sql) }
        var batch: [[StoredValue]] = []
        batch.reserveCapacity(batchSize)
        while let row = try reading(table, { try cursor.next() }) {
            batch.append(row.databaseValues.map(StoredValue.init))
            if batch.count == batchSize {
                try body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try body(batch) }
    }

    private func reading<T>(_ table: String, _ body: () throws -> T) throws(CatalogError) -> T {
        do {
            return try body()
        } catch {
            throw CatalogError(.database, "cannot read the table \(table) of the SQLite catalog", causedBy: error)
        }
    }
}

extension StoredValue {
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let integer): self = .integer(integer)
        case .double(let real): self = .real(real)
        case .string(let text): self = .text(text)
        case .blob(let data): self = .bytes(Array(data))
        }
    }
}

extension SQLiteCatalog {
    /// The migrations this Hoard knows, in order: what ``init(path:)`` brings a catalog to.
    public static var knownMigrations: [String] { migrator.migrations }

    /// Runs `body` with the whole catalog in one read transaction (``CatalogExport``); a ``CatalogError`` `body`
    /// throws passes through, any other error becomes one.
    public func export<T>(_ body: (CatalogExport) throws -> T) throws(CatalogError) -> T {
        try read { db in
            // GRDB's `appliedMigrations` lists known migrations only; a newer Hoard's must show too.
            let applied = try Self.migrator.appliedIdentifiers(db)
            let known = Self.migrator.migrations
            let migrations = known.filter(applied.contains) + applied.subtracting(known).sorted()
            let virtual = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'
                """)
            let names = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                    AND name <> 'grdb_migrations' ORDER BY name
                """)
            // FTS5 keeps its index in shadow tables named after the virtual table: `<name>_data`, `<name>_idx`, ….
            let copied = names.filter { name in !virtual.contains { name == $0 || name.hasPrefix($0 + "_") } }
            let tables = try copied.map { name in
                StoredTable(name: name, columns: try db.columns(in: name).map(\.name))
            }
            var sequences: [String: Int64] = [:]
            if try db.tableExists("sqlite_sequence") {
                for row in try Row.fetchAll(db, sql: "SELECT name, seq FROM sqlite_sequence") {
                    sequences[row["name"]] = row["seq"]
                }
            }
            return try body(CatalogExport(db: db, migrations: migrations, tables: tables, sequences: sequences))
        }
    }
}
