import HoardCatalog
import PostgresNIO

extension CatalogCopy {
    /// The tables the schema's triggers fill from other tables' rows (PostgresSchema+Scale.swift), which a copy leaves
    /// to the triggers. `count` names a count column: the copy compares the rows the triggers made with the source's,
    /// leaving out rows whose count is 0 (SQLite keeps them after deletes, the triggers make none). A log (nil) records
    /// the copy itself and is not compared.
    static let triggerFilledTables: [(table: String, count: String?)] = [
        ("packVersionKind", "assetCount"),
        ("accessChange", nil),
    ]

    /// A table of the target database as PostgreSQL describes it (information_schema, pg_constraint).
    struct TargetTable {
        let name: String
        /// Columns in their order of definition, each with its data type (`bigint`, `timestamp with time zone`, …).
        var columns: [(name: String, type: String)] = []
        /// The primary key's columns, in key order.
        var key: [String] = []
        /// The columns that are identities (their sequence is set past the copied ids).
        var identities: [String] = []
        /// The tables its foreign keys point at (itself excluded).
        var parents: Set<String> = []

        /// Each column's ``ColumnType``; throws for a type a copy cannot convert.
        func columnTypes() throws(CatalogError) -> [ColumnType] {
            var types: [ColumnType] = []
            for column in columns { types.append(try ColumnType(column.type, column: "\(name).\(column.name)")) }
            return types
        }

        /// The table's name as SQL writes it.
        var quoted: String { CatalogCopy.quoted(name) }

        /// The `ORDER BY` of its primary key in byte order (SQLite's `BINARY`): text compares as `COLLATE "C"`.
        var keyOrder: String {
            key.map { column in
                let type = columns.first { $0.name == column }?.type ?? ""
                return CatalogCopy.quoted(column) + (type == "text" || type == "character varying" ? #" COLLATE "C""# : "")
            }.joined(separator: ", ")
        }
    }

    /// Every base table of the target's schema, with its columns, key, identities and foreign keys.
    static func targetTables(_ tx: PostgresTransaction) throws -> [String: TargetTable] {
        var tables: [String: TargetTable] = [:]
        for name in try tx.values("""
            SELECT table_name::text FROM information_schema.tables
                WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
            """, as: String.self) {
            tables[name] = TargetTable(name: name)
        }
        for (table, column, type, identity) in try tx.rows("""
            SELECT table_name::text, column_name::text, data_type::text, is_identity::text FROM information_schema.columns
                WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
            """, as: (String, String, String, String).self) {
            tables[table]?.columns.append((column, type))
            if identity == "YES" { tables[table]?.identities.append(column) }
        }
        for (table, column) in try tx.rows("""
            SELECT k.table_name::text, k.column_name::text FROM information_schema.table_constraints c
                JOIN information_schema.key_column_usage k ON k.constraint_schema = c.constraint_schema
                    AND k.constraint_name = c.constraint_name AND k.table_name = c.table_name
                WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = current_schema()
                ORDER BY k.table_name, k.ordinal_position
            """, as: (String, String).self) {
            tables[table]?.key.append(column)
        }
        for (child, parent) in try tx.rows("""
            SELECT child.relname::text, parent.relname::text FROM pg_constraint c
                JOIN pg_class child ON child.oid = c.conrelid
                JOIN pg_class parent ON parent.oid = c.confrelid
                WHERE c.contype = 'f' AND child.relnamespace = current_schema()::text::regnamespace
            """, as: (String, String).self) where child != parent {
            tables[child]?.parents.insert(parent)
        }
        return tables
    }

    /// The tables in an order where each comes after every table its foreign keys point at (ties by name, so the
    /// order is the same on every run); a cycle of foreign keys is an error.
    static func foreignKeyOrder(_ tables: [String: TargetTable]) throws(CatalogError) -> [String] {
        var order: [String] = []
        var placed: Set<String> = []
        var waiting = Set(tables.keys)
        while !waiting.isEmpty {
            let ready = waiting.filter { table in
                tables[table]?.parents.allSatisfy { parent in placed.contains(parent) || tables[parent] == nil } ?? true
            }
            guard !ready.isEmpty else {
                throw CatalogError(.database, "the target's foreign keys form a cycle among \(waiting.sorted().joined(separator: ", ")); "
                    + "a copy cannot order them")
            }
            for table in ready.sorted() {
                order.append(table)
                placed.insert(table)
            }
            waiting.subtract(ready)
        }
        return order
    }

    /// The target's tables that hold rows (all its base tables but `schema_migrations`), by name.
    static func tablesWithRows(_ tx: PostgresTransaction, _ tables: some Sequence<String>) throws -> [String] {
        try tables.filter { $0 != "schema_migrations" }.sorted().filter { table in
            try tx.value(PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \(quoted(table)))"), as: Bool.self) ?? false
        }
    }

    /// An identifier as SQL writes it: double-quoted, inner quotes doubled.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
