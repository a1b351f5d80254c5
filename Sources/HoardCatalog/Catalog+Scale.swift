import GRDB

extension SQLiteCatalog {
    /// Migration `v8-catalog-scale`: what listing, search and the access index need to stay fast at a million
    /// assets (DESIGN.md, "Catalog schema"). Released migrations are never edited: change this one only
    /// until it ships.
    static func migrateCatalogScale(_ db: Database) throws {
        // Listing order (kind, name) copied onto each version's membership row, so one index range gives a pack's
        // page in order. Asset rows never change (an asset is its descriptor), so the copies cannot go stale.
        try db.execute(sql: """
            ALTER TABLE packVersionAsset ADD COLUMN kind TEXT NOT NULL DEFAULT '';
            ALTER TABLE packVersionAsset ADD COLUMN name TEXT NOT NULL DEFAULT '';
            UPDATE packVersionAsset SET
                kind = (SELECT kind FROM asset WHERE digest = assetDigest),
                name = (SELECT name FROM asset WHERE digest = assetDigest);
            CREATE INDEX packVersionAsset_listing ON packVersionAsset (packVersionId, kind, name, assetDigest);
            """)
        // Assets per (version, kind): page totals and offsets without counting rows.
        try db.execute(sql: """
            CREATE TABLE packVersionKind (
                packVersionId INTEGER NOT NULL REFERENCES packVersion(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                assetCount INTEGER NOT NULL,
                PRIMARY KEY (packVersionId, kind)
            );
            INSERT INTO packVersionKind (packVersionId, kind, assetCount)
                SELECT packVersionId, kind, COUNT(*) FROM packVersionAsset GROUP BY packVersionId, kind;
            CREATE TRIGGER packVersionKind_insert AFTER INSERT ON packVersionAsset BEGIN
                INSERT INTO packVersionKind (packVersionId, kind, assetCount) VALUES (new.packVersionId, new.kind, 1)
                    ON CONFLICT (packVersionId, kind) DO UPDATE SET assetCount = assetCount + 1;
            END;
            CREATE TRIGGER packVersionKind_delete AFTER DELETE ON packVersionAsset BEGIN
                UPDATE packVersionKind SET assetCount = assetCount - 1
                    WHERE packVersionId = old.packVersionId AND kind = old.kind;
            END;
            """)
        // Name (and folder path: names are `folder/…/stem`) search: FTS5 trigrams match any substring of three
        // characters or more, ignoring case. External content: the text stays in `asset` alone.
        try db.execute(sql: """
            CREATE VIRTUAL TABLE assetSearch USING fts5(
                name, content = 'asset', content_rowid = 'rowid', tokenize = 'trigram case_sensitive 0');
            INSERT INTO assetSearch (assetSearch) VALUES ('rebuild');
            CREATE TRIGGER assetSearch_insert AFTER INSERT ON asset BEGIN
                INSERT INTO assetSearch (rowid, name) VALUES (new.rowid, new.name);
            END;
            CREATE TRIGGER assetSearch_delete AFTER DELETE ON asset BEGIN
                INSERT INTO assetSearch (assetSearch, rowid, name) VALUES ('delete', old.rowid, old.name);
            END;
            """)
        // The access change log: every write that changes who may read what appends a row in its own transaction,
        // whichever process writes, so a server applies other processes' changes in commit order.
        try db.execute(sql: """
            CREATE TABLE accessChange (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL,
                key TEXT NOT NULL,
                at INTEGER NOT NULL
            )
            """)
        let logged: [(trigger: String, event: String, table: String, kind: AccessChange.Kind, key: String)] = [
            ("packInsert", "INSERT", "pack", .pack, "new.id"),
            ("packUpdate", "UPDATE OF isPublic, groupId", "pack", .pack, "new.id"),
            ("packDelete", "DELETE", "pack", .pack, "old.id"),
            ("versionInsert", "INSERT", "packVersion", .version, "new.id"),
            ("uploadInsert", "INSERT", "upload", .blob, "new.digest"),
            ("uploadDelete", "DELETE", "upload", .blob, "old.digest"),
            ("blobDelete", "DELETE", "blob", .blob, "old.digest"),
            ("tokenInsert", "INSERT", "token", .token, "new.secretHash"),
            ("tokenDelete", "DELETE", "token", .token, "old.secretHash"),
            ("groupRename", "UPDATE OF name", "\"group\"", .reset, "''"),
        ]
        for change in logged {
            try db.execute(sql: """
                CREATE TRIGGER accessChange_\(change.trigger) AFTER \(change.event) ON \(change.table) BEGIN
                    INSERT INTO accessChange (kind, key, at)
                        VALUES ('\(change.kind.rawValue)', \(change.key), CAST(strftime('%s', 'now') AS INTEGER));
                END
                """)
        }
    }

    /// Migration `v9-member-search`: the search index moves from `asset` to `packVersionAsset`, whose rows carry
    /// everything a search sorts and filters by (version, kind, name, digest). A match is then one lookup by rowid in
    /// insertion order, where it was an asset lookup and a random search of `packVersionAsset` by digest: 28 ms → 9 ms
    /// for 5,000 matches at 1,000,000 assets. Filling the index takes about 40 s at 1,000,000 memberships. The SQL is
    /// written out like `v8`'s rather than shared with it: a released migration's statements never change.
    ///
    /// The index's rows are `packVersionAsset`'s rowids, and that table has no `INTEGER PRIMARY KEY`: a `VACUUM` (which
    /// may renumber rowids) MUST be followed by `INSERT INTO packVersionAssetSearch(packVersionAssetSearch)
    /// VALUES('rebuild')`. Hoard never vacuums.
    static func migrateMemberSearch(_ db: Database) throws {
        try db.execute(sql: """
            DROP TRIGGER assetSearch_insert;
            DROP TRIGGER assetSearch_delete;
            DROP TABLE assetSearch;
            CREATE VIRTUAL TABLE packVersionAssetSearch USING fts5(
                name, content = 'packVersionAsset', content_rowid = 'rowid', tokenize = 'trigram case_sensitive 0');
            INSERT INTO packVersionAssetSearch (packVersionAssetSearch) VALUES ('rebuild');
            CREATE TRIGGER packVersionAssetSearch_insert AFTER INSERT ON packVersionAsset BEGIN
                INSERT INTO packVersionAssetSearch (rowid, name) VALUES (new.rowid, new.name);
            END;
            CREATE TRIGGER packVersionAssetSearch_delete AFTER DELETE ON packVersionAsset BEGIN
                INSERT INTO packVersionAssetSearch (packVersionAssetSearch, rowid, name) VALUES ('delete', old.rowid, old.name);
            END;
            """)
    }

    /// Migration `v10-group-pack-names`: a pack's name is unique within its group, not across groups (two groups that
    /// bought the same pack both import it). SQLite cannot drop a column's UNIQUE, so the table is rebuilt (foreign
    /// keys are off during migrations; the rows keep their ids, so nothing that references a pack changes) and its
    /// access-log triggers made again as `v8` made them.
    static func migrateGroupPackNames(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE pack_new (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL COLLATE NOCASE,
                groupId INTEGER NOT NULL REFERENCES "group"(id),
                isPublic BOOLEAN NOT NULL DEFAULT 0,
                currentVersionId INTEGER,
                createdAt DATETIME NOT NULL
            );
            INSERT INTO pack_new (id, name, groupId, isPublic, currentVersionId, createdAt)
                SELECT id, name, groupId, isPublic, currentVersionId, createdAt FROM pack;
            DROP TABLE pack;
            ALTER TABLE pack_new RENAME TO pack;
            CREATE UNIQUE INDEX pack_groupName ON pack (groupId, name);
            CREATE INDEX pack_name ON pack (name);
            CREATE TRIGGER accessChange_packInsert AFTER INSERT ON pack BEGIN
                INSERT INTO accessChange (kind, key, at) VALUES ('pack', new.id, CAST(strftime('%s', 'now') AS INTEGER));
            END;
            CREATE TRIGGER accessChange_packUpdate AFTER UPDATE OF isPublic, groupId ON pack BEGIN
                INSERT INTO accessChange (kind, key, at) VALUES ('pack', new.id, CAST(strftime('%s', 'now') AS INTEGER));
            END;
            CREATE TRIGGER accessChange_packDelete AFTER DELETE ON pack BEGIN
                INSERT INTO accessChange (kind, key, at) VALUES ('pack', old.id, CAST(strftime('%s', 'now') AS INTEGER));
            END;
            """)
    }
}
