import GRDB

extension SQLiteCatalog {
    /// The migrations, by stable name. Never edit a released migration: add a new one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-packs") { db in
            try db.create(table: "group") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name", .text).notNull().unique().collate(.nocase)
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "blob") { t in
                t.primaryKey("digest", .text)
                t.column("size", .integer).notNull()
                t.column("mediaType", .text).notNull()
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "pack") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name", .text).notNull().unique().collate(.nocase)
                t.column("groupId", .integer).notNull().indexed().references("group")
                t.column("isPublic", .boolean).notNull().defaults(to: false)
                t.column("currentVersionId", .integer)
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "packVersion") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("packId", .integer).notNull().references("pack", onDelete: .cascade)
                t.column("version", .text).notNull()
                t.column("manifestDigest", .text).notNull().indexed().references("blob")
                t.column("assetCount", .integer).notNull()
                t.column("totalBytes", .integer).notNull()
                t.column("importedAt", .datetime).notNull()
                t.uniqueKey(["packId", "version"])
            }
            try db.create(table: "asset") { t in
                t.primaryKey("digest", .text).references("blob")
                t.column("kind", .text).notNull().indexed()
                t.column("name", .text).notNull()
                t.column("footprintWidth", .integer).notNull()
                t.column("footprintHeight", .integer).notNull()
            }
            try db.create(table: "variant") { t in
                t.column("assetDigest", .text).notNull().references("asset", onDelete: .cascade)
                t.column("scale", .integer).notNull()
                t.column("blobDigest", .text).notNull().indexed().references("blob")
                t.column("width", .integer).notNull()
                t.column("height", .integer).notNull()
                t.column("isGenerated", .boolean).notNull().defaults(to: false)
                t.primaryKey(["assetDigest", "scale"])
            }
            try db.create(table: "packVersionAsset") { t in
                t.column("packVersionId", .integer).notNull().references("packVersion", onDelete: .cascade)
                t.column("assetDigest", .text).notNull().indexed().references("asset")
                t.primaryKey(["packVersionId", "assetDigest"])
            }
        }
        migrator.registerMigration("v2-access") { db in
            try db.alter(table: "group") { t in
                t.add(column: "quotaBytes", .integer)
            }
            try db.create(table: "token") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("groupId", .integer).notNull().indexed().references("group", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("secretHash", .text).notNull().unique()
                t.column("isAdmin", .boolean).notNull().defaults(to: false)
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "upload") { t in
                t.column("digest", .text).notNull().references("blob")
                t.column("groupId", .integer).notNull().indexed().references("group", onDelete: .cascade)
                t.column("createdAt", .datetime).notNull()
                t.primaryKey(["digest", "groupId"])
            }
        }
        migrator.registerMigration("v3-sessions") { db in
            try db.create(table: "session") { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull()
                t.column("groupId", .integer).notNull().indexed().references("group", onDelete: .cascade)
                t.column("host", .text).notNull()
                t.column("visibility", .text).notNull()
                t.column("code", .text).notNull().unique()
                t.column("mapDigest", .text).notNull().references("blob")
                t.column("baseSeq", .integer).notNull().defaults(to: 0)
                t.column("lastSeq", .integer).notNull().defaults(to: 0)
                t.column("createdAt", .datetime).notNull()
            }
            try db.create(table: "participant") { t in
                t.primaryKey("id", .text)
                t.column("sessionId", .text).notNull().indexed().references("session", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("tokenHash", .text).notNull().unique()
                t.column("joinedAt", .datetime).notNull()
            }
            try db.create(table: "sessionBlob") { t in
                t.column("sessionId", .text).notNull().references("session", onDelete: .cascade)
                t.column("digest", .text).notNull().indexed().references("blob")
                t.primaryKey(["sessionId", "digest"])
            }
            try db.create(table: "sessionEvent") { t in
                t.column("sessionId", .text).notNull().references("session", onDelete: .cascade)
                t.column("seq", .integer).notNull()
                t.column("body", .text).notNull()
                t.primaryKey(["sessionId", "seq"])
            }
            try db.create(table: "savedMap") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("groupId", .integer).notNull().references("group", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("digest", .text).notNull().indexed().references("blob")
                t.column("savedAt", .datetime).notNull()
                t.uniqueKey(["groupId", "name"])
            }
            try db.create(table: "savedMapBlob") { t in
                t.column("savedMapId", .integer).notNull().references("savedMap", onDelete: .cascade)
                t.column("digest", .text).notNull().indexed().references("blob")
                t.primaryKey(["savedMapId", "digest"])
            }
        }
        migrator.registerMigration("v4-member-space") { db in
            // A member is a group and the name on their tokens (Principal.tokenName): every device of one person
            // carries a token with the same name, so refs, private uploads and shares follow them.
            try db.create(table: "ref") { t in
                t.column("groupId", .integer).notNull().references("group", onDelete: .cascade)
                t.column("member", .text).notNull()
                t.column("name", .text).notNull()
                t.column("digest", .text).notNull().indexed().references("blob")
                t.column("updatedAt", .datetime).notNull()
                t.primaryKey(["groupId", "member", "name"])
            }
            try db.create(table: "privateUpload") { t in
                t.column("scope", .text).notNull()
                t.column("digest", .text).notNull().indexed().references("blob")
                t.column("groupId", .integer).notNull().indexed().references("group", onDelete: .cascade)
                t.column("uploader", .text).notNull()
                t.column("createdAt", .datetime).notNull()
                t.primaryKey(["scope", "digest"])
            }
            try db.create(table: "share") { t in
                t.primaryKey("id", .text)
                t.column("groupId", .integer).notNull().indexed().references("group", onDelete: .cascade)
                t.column("member", .text).notNull()
                t.column("digest", .text).notNull().indexed().references("blob")
                t.column("pictureDigest", .text).notNull().references("blob")
                t.column("name", .text)
                t.column("createdAt", .datetime).notNull()
            }
        }
        migrator.registerMigration("v5-renditions") { db in
            try db.create(table: "rendition") { t in
                t.column("assetDigest", .text).notNull().references("asset", onDelete: .cascade)
                t.column("role", .text).notNull()
                t.column("blobDigest", .text).notNull().indexed().references("blob")
                t.column("width", .integer).notNull()
                t.column("height", .integer).notNull()
                t.primaryKey(["assetDigest", "role"])
            }
        }
        migrator.registerMigration("v6-table-views") { db in
            // What participants are sent of an event, when not everyone is sent its body (the table's views).
            try db.alter(table: "sessionEvent") { t in
                t.add(column: "views", .text)
            }
        }
        migrator.registerMigration("v7-pack-documents") { db in
            try db.create(table: "packDocument") { t in
                t.column("packVersionId", .integer).notNull().references("packVersion", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("blobDigest", .text).notNull().indexed().references("blob")
                t.column("mediaType", .text).notNull()
                t.column("size", .integer).notNull()
                t.primaryKey(["packVersionId", "name"])
            }
        }
        migrator.registerMigration("v8-catalog-scale") { db in
            try Self.migrateCatalogScale(db)
        }
        migrator.registerMigration("v9-member-search") { db in
            try Self.migrateMemberSearch(db)
        }
        migrator.registerMigration("v10-group-pack-names") { db in
            try Self.migrateGroupPackNames(db)
        }
        migrator.registerMigration("v11-roles") { db in
            // A token's role; admins become operators.
            try db.alter(table: "token") { t in
                t.add(column: "role", .text).notNull().defaults(to: "member")
            }
            try db.execute(sql: "UPDATE token SET role = 'operator' WHERE isAdmin")
            try db.create(table: "invite") { t in
                t.primaryKey("codeHash", .text)
                t.column("groupId", .integer).notNull().indexed().references("group", onDelete: .cascade)
                t.column("role", .text).notNull()
                t.column("createdBy", .text).notNull()
                t.column("expiresAt", .datetime).notNull()
            }
        }
        migrator.registerMigration("v12-replica-access") { db in
            // What sessions reach and who takes part are logged too, so every server sharing the catalog knows them.
            try db.execute(sql: """
                CREATE TRIGGER accessChange_participantInsert AFTER INSERT ON participant BEGIN
                    INSERT INTO accessChange (kind, key, at) VALUES ('participant', new.tokenHash, CAST(strftime('%s', 'now') AS INTEGER));
                END;
                CREATE TRIGGER accessChange_participantDelete AFTER DELETE ON participant BEGIN
                    INSERT INTO accessChange (kind, key, at) VALUES ('participant', old.tokenHash, CAST(strftime('%s', 'now') AS INTEGER));
                END;
                CREATE TRIGGER accessChange_sessionDelete AFTER DELETE ON session BEGIN
                    INSERT INTO accessChange (kind, key, at) VALUES ('session', old.id, CAST(strftime('%s', 'now') AS INTEGER));
                END;
                CREATE TRIGGER accessChange_reachInsert AFTER INSERT ON sessionBlob BEGIN
                    INSERT INTO accessChange (kind, key, at)
                        VALUES ('reach', new.sessionId || ' ' || new.digest, CAST(strftime('%s', 'now') AS INTEGER));
                END;
                """)
        }
        migrator.registerMigration("v13-leases") { db in
            // Who holds each grab, leased by the replica that granted it (``GrabChange``); who has sockets where.
            try db.create(table: "grabLease") { t in
                t.column("sessionId", .text).notNull().references("session", onDelete: .cascade)
                t.column("entity", .text).notNull()
                t.column("participant", .text).notNull()
                t.column("replica", .text).notNull().indexed()
                t.column("expiresAt", .integer).notNull().indexed()
                t.primaryKey(["sessionId", "entity"])
            }
            try db.create(table: "presence") { t in
                t.column("sessionId", .text).notNull().references("session", onDelete: .cascade)
                t.column("participant", .text).notNull()
                t.column("replica", .text).notNull().indexed()
                t.column("name", .text).notNull()
                t.column("expiresAt", .integer).notNull().indexed()
                t.primaryKey(["sessionId", "participant", "replica"])
            }
        }
        migrator.registerMigration("v14-members") { db in
            // A member is an identity (`member`), their tokens devices; what names owned, member ids own.
            try Self.migrateMembers(db)
        }
        migrator.registerMigration("v15-dice") { db in
            // A session's dice seed, and its rolls: kept after the session ends, until its group is deleted, so the
            // rolls can be audited afterwards.
            try db.create(table: "diceSeal") { t in
                t.primaryKey("sessionId", .text)
                t.column("groupId", .integer).notNull().indexed().references("group", onDelete: .cascade)
                t.column("seed", .text).notNull()
                t.column("isRevealed", .boolean).notNull().defaults(to: false)
            }
            try db.create(table: "diceRoll") { t in
                t.column("sessionId", .text).notNull().references("diceSeal", onDelete: .cascade)
                t.column("seq", .integer).notNull()
                t.column("body", .text).notNull()
                t.primaryKey(["sessionId", "seq"])
            }
        }
        migrator.registerMigration("v17-pack-grid") { db in
            // The grid a pack version's art was made for: null when square, else `hex-flat` or `hex-pointy`.
            try db.alter(table: "packVersion") { t in t.add(column: "grid", .text) }
        }
        migrator.registerMigration("v18-jobs") { db in
            // The rendition queue: generated LODs, previews and thumbnails are made after the import commits, one job
            // per source picture and recipe, leased by workers (``JobSpec``).
            try db.create(table: "job") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("sourceDigest", .text).notNull().references("blob")
                t.column("recipe", .text).notNull()
                t.column("request", .text).notNull()
                t.column("expects", .text).notNull()
                t.column("state", .text).notNull()
                t.column("priority", .integer).notNull()
                t.column("batch", .integer).notNull()
                t.column("position", .integer).notNull()
                t.column("attempts", .integer).notNull()
                t.column("availableAt", .integer).notNull()
                t.column("worker", .text).indexed()
                t.column("leaseToken", .text)
                t.column("problem", .text)
                t.column("createdAt", .datetime).notNull()
                t.column("finishedAt", .datetime)
                t.uniqueKey(["sourceDigest", "recipe"])
            }
            // The queue's order: the next job is the first pending row whose lease is free.
            try db.execute(sql: "CREATE INDEX job_queue ON job (state, priority DESC, batch DESC, position, id)")
            try db.create(table: "jobAsset") { t in
                t.column("jobId", .integer).notNull().references("job", onDelete: .cascade)
                t.column("packVersionId", .integer).notNull().indexed().references("packVersion", onDelete: .cascade)
                t.column("assetDigest", .text).notNull().indexed().references("asset", onDelete: .cascade)
                t.primaryKey(["jobId", "packVersionId", "assetDigest"])
            }
            try db.create(table: "jobOutput") { t in
                t.column("jobId", .integer).notNull().references("job", onDelete: .cascade)
                t.column("role", .text).notNull()
                t.column("scale", .integer)
                t.column("blobDigest", .text).notNull().indexed().references("blob")
                t.column("width", .integer).notNull()
                t.column("height", .integer).notNull()
                t.primaryKey(["jobId", "role"])
            }
            // Per version: its assets with a job, and how many of those are done, failed, cancelled (pending: the rest).
            try db.create(table: "packVersionJobs") { t in
                t.primaryKey("packVersionId", .integer).references("packVersion", onDelete: .cascade)
                t.column("total", .integer).notNull()
                t.column("done", .integer).notNull()
                t.column("failed", .integer).notNull()
                t.column("cancelled", .integer).notNull()
            }
        }
        migrator.registerMigration("v20-dice") { db in
            // The player a participant is in the group (from their player key): their dice statistics add up across
            // the group's sessions.
            try db.alter(table: "participant") { t in t.add(column: "player", .text) }
        }
        return migrator
    }
}
