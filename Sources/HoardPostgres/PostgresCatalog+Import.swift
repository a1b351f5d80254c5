import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

extension PostgresCatalog {
    /// Records an import in one transaction, as ``SQLiteCatalog/record(_:committingAfter:)`` does: `conflict` when this
    /// version was imported with other content, `alreadyRecorded` when it was imported with this manifest, and
    /// `barrier` run inside the transaction once every row is written, just before the commit (when it throws,
    /// nothing is recorded).
    ///
    /// Each table gets one statement whatever the import's size: its rows go as one array a column, expanded by
    /// `unnest`. The pack's row is locked first, so two imports of one pack take turns (SQLite's one writer).
    public func record(_ commit: ImportCommit, committingAfter barrier: () throws -> Void) throws(CatalogError) -> RecordOutcome {
        try write("cannot record version \(commit.version) of '\(commit.pack)'") { tx in
            let now = Date()
            guard let groupId = try Self.ensureGroup(named: commit.group, tx).id else { throw CatalogError(.database, "a group row has no id") }
            // A new name that is one of the group's names under NameRule ("émoi" beside "Émoi") is refused, as on SQLite.
            let key = NameRule.key(commit.pack)
            let groupName = commit.group
            for name in try tx.values(#"SELECT name FROM pack WHERE "groupId" = \#(groupId)"#, as: String.self)
            where NameRule.key(name) == key && !Self.isSameName(name, commit.pack) {
                throw CatalogError(.conflict, Self.alikePack(name, commit.pack, group: groupName))
            }
            let packId = try Self.lockedPack(named: commit.pack, groupId: groupId, now: now, tx)
            if case let (oldId, old)? = try tx.row(
                #"SELECT id, "manifestDigest" FROM "packVersion" WHERE "packId" = \#(packId) AND version = \#(commit.version)"#,
                as: (Int64, String).self) {
                if old == commit.manifestDigest.description {
                    let linked = Set(try tx.rows(#"""
                        SELECT j."sourceDigest", j.recipe FROM "jobAsset" ja JOIN job j ON j.id = ja."jobId"
                        WHERE ja."packVersionId" = \#(oldId)
                        """#, as: (String, String).self).map { JobKey(source: $0.0, recipe: $0.1) })
                    try Self.queue(JobKey.missing(from: commit.jobs, linked: linked), version: oldId, now: now, tx)
                    return .alreadyRecorded
                }
                throw CatalogError(
                    .conflict, "version \(commit.version) of '\(commit.pack)' was already imported with other content; "
                        + "raise the version in pack.json")
            }
            try Self.insertBlobs(commit.blobs, tx)
            try Self.insertAssets(commit.assets, tx)
            let versionId = try tx.value(#"""
                INSERT INTO "packVersion" ("packId", version, "manifestDigest", "assetCount", "totalBytes", "importedAt", grid)
                VALUES (\#(packId), \#(commit.version), \#(commit.manifestDigest.description), \#(Int64(commit.assets.count)),
                        \#(commit.totalBytes), \#(now), \#(commit.grid.isHex ? commit.grid.description : nil))
                RETURNING id
                """#, as: Int64.self) ?? 0
            // kind and name are the asset's, copied for the listing index (migration v8-catalog-scale).
            let members = Self.firstOfEach(commit.assets, by: \.digest)
            try tx.execute(#"""
                INSERT INTO "packVersionAsset" ("packVersionId", "assetDigest", kind, name)
                SELECT \#(versionId), * FROM unnest(
                    \#(members.map(\.digest.description))::text[], \#(members.map(\.descriptor.kind.rawValue))::text[],
                    \#(members.map(\.descriptor.name))::text[])
                ON CONFLICT DO NOTHING
                """#)
            if !commit.documents.isEmpty {
                let documents = commit.documents
                try tx.execute(#"""
                    INSERT INTO "packDocument" ("packVersionId", name, "blobDigest", "mediaType", size)
                    SELECT \#(versionId), * FROM unnest(
                        \#(documents.map(\.name))::text[], \#(documents.map(\.digest.description))::text[],
                        \#(documents.map(\.mediaType))::text[], \#(documents.map(\.size))::bigint[])
                    """#)
            }
            try Self.queue(commit.jobs, version: versionId, now: now, tx)
            // SQLite's record rewrites every column of the pack's row, which logs a `pack` access change: so does this.
            try tx.execute(#"""
                UPDATE pack SET "currentVersionId" = \#(versionId), "isPublic" = "isPublic", "groupId" = "groupId"
                WHERE id = \#(packId)
                """#)
            do {
                try barrier()
            } catch let error as CatalogError {
                throw error
            } catch {
                throw CatalogError(.database, "version \(commit.version) of '\(commit.pack)' was not recorded: the import stopped "
                    + "before its commit", causedBy: error)
            }
            return .recorded
        }
    }

    /// The id of a group's pack, its row locked until the commit (imports of one pack take turns), inserted (private,
    /// no version yet) when there is none. When another import inserts it meanwhile, this waits for that import's
    /// commit and then locks the row it made.
    static func lockedPack(named name: String, groupId: Int64, now: Date, _ tx: PostgresTransaction) throws -> Int64 {
        let existing: PostgresQuery = #"SELECT id FROM pack WHERE name = \#(name) AND "groupId" = \#(groupId) FOR UPDATE"#
        if let id = try tx.value(existing, as: Int64.self) { return id }
        if let id = try tx.value(#"""
            INSERT INTO pack (name, "groupId", "isPublic", "createdAt") VALUES (\#(name), \#(groupId), false, \#(now))
            ON CONFLICT DO NOTHING RETURNING id
            """#, as: Int64.self) {
            return id
        }
        guard let id = try tx.value(existing, as: Int64.self) else {
            throw CatalogError(.database, "the pack '\(name)' was deleted while it was imported; import it again")
        }
        return id
    }

    /// Inserts the blob rows an import references, keeping rows that exist. Rows go in digest order, so concurrent
    /// imports that share blobs wait for each other rather than deadlock.
    static func insertBlobs(_ blobs: [BlobRecord], _ tx: PostgresTransaction) throws {
        let blobs = firstOfEach(blobs, by: \.digest).sorted { $0.digest < $1.digest }
        try tx.execute(#"""
            INSERT INTO blob (digest, size, "mediaType", "createdAt")
            SELECT * FROM unnest(
                \#(blobs.map(\.digest.description))::text[], \#(blobs.map(\.size))::bigint[], \#(blobs.map(\.mediaType))::text[],
                \#(blobs.map(\.createdAt))::timestamptz[])
            ON CONFLICT DO NOTHING
            """#)
    }

    /// Inserts the asset, variant and rendition rows of an import's assets, keeping rows that exist (an asset is
    /// its descriptor: an existing row is the same), in digest order as ``insertBlobs(_:_:)``.
    static func insertAssets(_ assets: [(descriptor: AssetDescriptor, digest: Digest)], _ tx: PostgresTransaction) throws {
        let assets = firstOfEach(assets, by: \.digest).sorted { $0.digest < $1.digest }
        try tx.execute(#"""
            INSERT INTO asset (digest, kind, name, "footprintWidth", "footprintHeight")
            SELECT * FROM unnest(
                \#(assets.map(\.digest.description))::text[], \#(assets.map(\.descriptor.kind.rawValue))::text[],
                \#(assets.map(\.descriptor.name))::text[], \#(assets.map { Int64($0.descriptor.footprint.width) })::bigint[],
                \#(assets.map { Int64($0.descriptor.footprint.height) })::bigint[])
            ON CONFLICT DO NOTHING
            """#)
        let variants = assets.flatMap { asset in asset.descriptor.variants.map { (asset: asset.digest, variant: $0) } }
        try tx.execute(#"""
            INSERT INTO variant ("assetDigest", scale, "blobDigest", width, height, "isGenerated")
            SELECT * FROM unnest(
                \#(variants.map(\.asset.description))::text[], \#(variants.map { Int64($0.variant.scale) })::bigint[],
                \#(variants.map(\.variant.digest.description))::text[], \#(variants.map { Int64($0.variant.width) })::bigint[],
                \#(variants.map { Int64($0.variant.height) })::bigint[], \#(variants.map { $0.variant.generated ?? false })::boolean[])
            ON CONFLICT DO NOTHING
            """#)
        let renditions = assets.flatMap { asset in
            [("preview", asset.descriptor.preview), ("thumbnail", asset.descriptor.thumbnail)].compactMap { role, rendition in
                rendition.map { (asset: asset.digest, role: role, rendition: $0) }
            }
        }
        guard !renditions.isEmpty else { return }
        try tx.execute(#"""
            INSERT INTO rendition ("assetDigest", role, "blobDigest", width, height)
            SELECT * FROM unnest(
                \#(renditions.map(\.asset.description))::text[], \#(renditions.map(\.role))::text[],
                \#(renditions.map(\.rendition.digest.description))::text[], \#(renditions.map { Int64($0.rendition.width) })::bigint[],
                \#(renditions.map { Int64($0.rendition.height) })::bigint[])
            ON CONFLICT DO NOTHING
            """#)
    }

    /// The first element of each key, in order: what SQLite's `INSERT OR IGNORE` row by row keeps.
    static func firstOfEach<Element, Key: Hashable>(_ elements: [Element], by key: (Element) -> Key) -> [Element] {
        var seen: Set<Key> = []
        return elements.filter { seen.insert(key($0)).inserted }
    }
}
