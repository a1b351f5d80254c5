import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// Copies an embedded catalog (SQLite) into a new PostgreSQL catalog, verified: `hoard migrate-catalog --to URL`.
///
/// The order, each step refusing with nothing copied:
/// 1. the target holds no rows (checked before its schema is migrated, and again in the copy's transaction);
/// 2. the source's migrations are exactly those this Hoard knows (``SQLiteCatalog`` brings an older file up to date
///    when it opens it), and the target's all of ``PostgresSchema/migrations`` (their twins and PostgreSQL's own);
/// 3. in one transaction, every target table locked against writers (`EXCLUSIVE`): each table's rows in foreign-key
///    order (read from pg_constraint), in batches of `unnest`ed arrays, converted by the target column's type
///    (``ColumnType``). SQLite's own tables, GRDB's migrations and the full-text indexes are not copied (PostgreSQL
///    keeps its own indexes), nor are the tables the target's triggers fill (``triggerFilledTables``);
/// 4. every identity sequence is set past the largest id copied, and past SQLite's AUTOINCREMENT high-water mark
///    (ids of deleted rows are not given again);
/// 5. every copied table is compared: its row count and a SHA-256 of its rows in key order, the source's computed
///    from SQLite's values, the target's from what PostgreSQL stored; the counts the triggers kept are compared with
///    the source's;
/// 6. COMMIT. Any difference rolls the whole copy back, naming the table.
public struct CatalogCopy: Sendable {
    /// The database the catalog is copied into: new, or at least without rows.
    public let target: PostgresCatalogDatabase
    /// Rows per `INSERT` (and per fetch of the verification).
    public var batchSize = 10_000

    /// A copy into `target`.
    public init(to target: PostgresCatalogDatabase) {
        self.target = target
    }

    /// Copies `source` into the target and verifies it, reporting each table's progress; returns what was copied.
    public func run(from source: SQLiteCatalog, progress: (CatalogCopyProgress) -> Void = { _ in }) throws(CatalogError) -> CatalogCopyReport {
        let started = ContinuousClock.now
        let pool = PostgresPool(target, size: 1)
        defer { pool.close() }
        let what = "cannot copy the catalog into \(target.displayURL)"
        try pool.transaction(what, readOnly: true) { tx in try refuseRows(tx, Self.targetTables(tx).keys) }
        do {
            try pool.migrate()
        } catch {
            throw CatalogError(error.code == .database ? .database : .unavailable, error.message, cause: error.cause)
        }
        var report = try source.export { (export: CatalogExport) throws -> CatalogCopyReport in
            try Self.checkMigrations(of: export)
            return try pool.transaction(what, readOnly: false) { tx in try copy(export, into: tx, progress) }
        }
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }

    /// Refuses a source whose migrations are not exactly this Hoard's (and those of the PostgreSQL schema).
    static func checkMigrations(of export: CatalogExport) throws(CatalogError) {
        let known = SQLiteCatalog.knownMigrations
        // Migrations named `pg…` are PostgreSQL's own, with no SQLite twin (PostgresSchema).
        guard known == PostgresSchema.migrations.map(\.name).filter({ !$0.hasPrefix("pg") }) else {
            throw CatalogError(.database, "this Hoard's SQLite and PostgreSQL schemas have different migrations; nothing can be copied")
        }
        if let unknown = export.migrations.first(where: { !known.contains($0) }) {
            throw CatalogError(.invalid, "the SQLite catalog has migration '\(unknown)', which this Hoard does not know: upgrade Hoard")
        }
        guard export.migrations.sorted() == known.sorted() else {
            let missing = known.filter { !export.migrations.contains($0) }.joined(separator: ", ")
            throw CatalogError(.invalid, "the SQLite catalog lacks the migrations \(missing): open it with this Hoard first (any command does)")
        }
    }

    /// Refuses a target any of whose tables hold rows.
    func refuseRows(_ tx: PostgresTransaction, _ tables: some Sequence<String>) throws {
        let full = try Self.tablesWithRows(tx, tables)
        guard full.isEmpty else {
            throw CatalogError(.conflict, "the catalog at \(target.displayURL) is not empty (rows in \(full.joined(separator: ", "))); "
                + "migrate into a new database (createdb NAME)")
        }
    }

    /// The copy, in the target's transaction: steps 3 to 5 of the type's description.
    private func copy(_ export: CatalogExport, into tx: PostgresTransaction, _ progress: (CatalogCopyProgress) -> Void) throws -> CatalogCopyReport {
        try tx.query("SET LOCAL TimeZone = 'UTC'")
        let tables = try Self.targetTables(tx)
        try tx.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(tables.keys.sorted().map(Self.quoted).joined(separator: ", ")) IN EXCLUSIVE MODE"))
        try refuseRows(tx, tables.keys)
        let applied = try tx.values("SELECT name FROM schema_migrations", as: String.self)
        guard applied.sorted() == PostgresSchema.migrations.map(\.name).sorted() else {
            throw CatalogError(.database, "the catalog at \(target.displayURL) has other migrations than this Hoard's; upgrade Hoard")
        }
        let sources = try Self.pairTables(export.tables, tables)
        let filled = Set(Self.triggerFilledTables.map(\.table))
        var copied: [(table: TargetTable, rows: Int, digest: Digest)] = []
        for name in try Self.foreignKeyOrder(tables) where sources.contains(name) && !filled.contains(name) {
            let table = tables[name]!
            let (rows, digest) = try copyRows(of: table, export, tx, progress)
            copied.append((table, rows, digest))
            progress(.copied(table: name, rows: rows))
        }
        for (table, _, _) in copied {
            for column in table.identities {
                let highest = export.sequences[table.name] ?? 0
                try tx.query("""
                    SELECT setval(pg_get_serial_sequence(\(table.quoted), \(column)),
                        GREATEST((SELECT max(\(unescaped: Self.quoted(column))) FROM \(unescaped: table.quoted)), \(highest)) + 1, false)
                    """)
            }
        }
        var report = CatalogCopyReport(target: target.displayURL, tables: [], rows: 0, seconds: 0)
        for (table, rows, digest) in copied {
            let sourceRows = try export.count(of: table.name)
            let stored = try storedDigest(of: table, where: "", tx)
            try Self.compare(table.name, source: (sourceRows, digest), copied: rows, target: stored)
            report.tables.append(.init(name: table.name, rows: rows, sha256: digest.description, filledByTriggers: false))
            progress(.verified(table: table.name, rows: rows))
        }
        for (name, count) in Self.triggerFilledTables where sources.contains(name) {
            guard let count, let table = tables[name] else { continue }
            let counted = table.columns.firstIndex { $0.name == count } ?? 0
            let kept = try sourceDigest(of: table, export) { row in row[counted] != .integer(0) }
            let stored = try storedDigest(of: table, where: "WHERE \(Self.quoted(count)) <> 0", tx)
            try Self.compare(name, source: kept, copied: kept.rows, target: stored)
            report.tables.append(.init(name: name, rows: stored.rows, sha256: stored.digest.description, filledByTriggers: true))
            progress(.verified(table: name, rows: stored.rows))
        }
        report.rows = report.tables.filter { !$0.filledByTriggers }.map(\.rows).reduce(0, +)
        return report
    }

    /// The names of the tables both sides have, after checking that each has the same columns on both, and that no
    /// table of either side lacks a twin (it would be lost, or left empty).
    static func pairTables(_ source: [StoredTable], _ target: [String: TargetTable]) throws(CatalogError) -> Set<String> {
        for table in source {
            guard let twin = target[table.name] else {
                throw CatalogError(.database, "the SQLite catalog's table \(table.name) has no twin in the PostgreSQL catalog; upgrade Hoard")
            }
            guard Set(twin.columns.map(\.name)) == Set(table.columns) else {
                throw CatalogError(.database, "the table \(table.name) has other columns in SQLite (\(table.columns.joined(separator: ", "))) "
                    + "than in PostgreSQL (\(twin.columns.map(\.name).joined(separator: ", ")))")
            }
        }
        let names = Set(source.map(\.name))
        if let lonely = target.keys.sorted().first(where: { $0 != "schema_migrations" && !names.contains($0) }) {
            throw CatalogError(.database, "the PostgreSQL catalog's table \(lonely) has no twin in the SQLite catalog; nothing would fill it")
        }
        return names
    }

    /// Inserts every source row of `table` in batches; returns how many and the SHA-256 of their normal forms.
    private func copyRows(
        of table: TargetTable, _ export: CatalogExport, _ tx: PostgresTransaction, _ progress: (CatalogCopyProgress) -> Void
    ) throws -> (rows: Int, digest: Digest) {
        let types = try table.columnTypes()
        let names = table.columns.map(\.name)
        let keys = table.key.compactMap { names.firstIndex(of: $0) }
        let total = try export.count(of: table.name)
        // INSERT INTO t (a, b) SELECT c0::bigint, c1::timestamptz FROM unnest($1::text[], $2::text[]) AS u(c0, c1)
        let casts: [String] = types.enumerated().map { index, type in "c\(index)::\(type.sqlType)" }
        let arrays: [String] = types.indices.map { index in "$\(index + 1)::text[]" }
        let aliases: [String] = types.indices.map { index in "c\(index)" }
        let insert = "INSERT INTO \(table.quoted) (\(names.map(Self.quoted).joined(separator: ", "))) SELECT \(casts.joined(separator: ", "))"
            + " FROM unnest(\(arrays.joined(separator: ", "))) AS u(\(aliases.joined(separator: ", ")))"
        var hasher = RowHasher()
        try export.rows(of: table.name, columns: names, orderedBy: table.key, batchSize: batchSize) { batch in
            var columns = names.map { _ in NullableTextArray(elements: []) }
            for row in batch {
                for (index, value) in row.enumerated() {
                    let converted = try types[index].convert(
                        value, "\(table.name).\(names[index]) of the row (\(keys.map { row[$0].shown }.joined(separator: ", ")))")
                    columns[index].elements.append(converted?.text)
                    hasher.add(converted?.normal)
                }
                hasher.endRow()
            }
            var binds = PostgresBindings(capacity: columns.count)
            for column in columns { try binds.append(column) }
            try tx.query(PostgresQuery(unsafeSQL: insert, binds: binds))
            progress(.copying(table: table.name, rows: hasher.rows, of: total))
        }
        return (hasher.rows, hasher.finalize())
    }

    /// The SHA-256 of the source's rows of `table` that `keep` keeps, in key order, with their count.
    private func sourceDigest(
        of table: TargetTable, _ export: CatalogExport, keeping keep: ([StoredValue]) -> Bool
    ) throws -> (rows: Int, digest: Digest) {
        let types = try table.columnTypes()
        var hasher = RowHasher()
        try export.rows(of: table.name, columns: table.columns.map(\.name), orderedBy: table.key, batchSize: batchSize) { batch in
            for row in batch where keep(row) {
                for (index, value) in row.enumerated() { hasher.add(try types[index].convert(value, "\(table.name)")?.normal) }
                hasher.endRow()
            }
        }
        return (hasher.rows, hasher.finalize())
    }

    /// The SHA-256 of the normal forms of what PostgreSQL stored in `table` (rows `condition` selects), in key order,
    /// read through a cursor in batches, with the count.
    private func storedDigest(of table: TargetTable, where condition: String, _ tx: PostgresTransaction) throws -> (rows: Int, digest: Digest) {
        let normals = zip(try table.columnTypes(), table.columns).map { $0.normalSQL($1.name) }
        try tx.query(PostgresQuery(unsafeSQL: """
            DECLARE hoard_copy_check NO SCROLL CURSOR FOR SELECT \(RowHasher.encodingSQL(normals)) FROM \(table.quoted) \(condition)
                ORDER BY \(table.keyOrder)
            """))
        var hasher = RowHasher()
        while true {
            let rows = try tx.query(PostgresQuery(unsafeSQL: "FETCH FORWARD \(batchSize) FROM hoard_copy_check")).rows
            for row in rows {
                guard let encoded = row.first?.bytes else { throw CatalogError(.database, "PostgreSQL gave no row encoding for \(table.name)") }
                hasher.add(encodedRow: encoded)
            }
            if rows.count < batchSize { break }
        }
        try tx.query("CLOSE hoard_copy_check")
        return (hasher.rows, hasher.finalize())
    }

    /// Throws, naming the table, unless the source's count, the rows copied and the target's count agree, and the
    /// source's and the target's SHA-256 too.
    static func compare(
        _ table: String, source: (rows: Int, digest: Digest), copied: Int, target: (rows: Int, digest: Digest)
    ) throws(CatalogError) {
        guard source.rows == copied, copied == target.rows else {
            throw CatalogError(.database, "the copy of \(table) does not match the SQLite catalog: \(source.rows) rows there, \(copied) read, "
                + "\(target.rows) in PostgreSQL; nothing was written")
        }
        guard source.digest == target.digest else {
            throw CatalogError(.database, "the copy of \(table) does not match the SQLite catalog: the same \(copied) rows, but their values "
                + "differ (SHA-256 \(source.digest) there, \(target.digest) in PostgreSQL); nothing was written")
        }
    }
}

/// Where a ``CatalogCopy`` is.
public enum CatalogCopyProgress: Sendable {
    /// `rows` of a table's `total` are copied so far.
    case copying(table: String, rows: Int, of: Int)
    /// A table's rows are all copied.
    case copied(table: String, rows: Int)
    /// A table matches the source.
    case verified(table: String, rows: Int)
}

/// What a ``CatalogCopy`` copied (`hoard migrate-catalog --json`).
public struct CatalogCopyReport: Codable, Sendable {
    /// One table's copy.
    public struct Table: Codable, Sendable {
        /// The table's name.
        public var name: String
        /// Rows copied (for a table the triggers filled: the rows they made, zero counts aside).
        public var rows: Int
        /// The SHA-256 of its rows in key order, each value in a normal form both databases give alike.
        public var sha256: String
        /// Whether PostgreSQL's triggers filled it as the other tables were copied.
        public var filledByTriggers: Bool
    }

    /// The target, without its password.
    public var target: String
    /// The tables compared, copied ones in the order they were copied.
    public var tables: [Table]
    /// The rows copied, in all tables.
    public var rows: Int
    /// How long the whole copy took.
    public var seconds: Double
}
