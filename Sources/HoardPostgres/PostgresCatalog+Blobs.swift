import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// Blob rows, uploads and garbage, as `SQLiteCatalog`'s (HoardCatalog, `Catalog+Queries.swift`).
extension PostgresCatalog {
    /// Records that a group uploaded a blob (the blob row is created if new). Idempotent.
    public func recordUpload(_ blob: BlobRecord, groupId: Int64) throws(CatalogError) {
        try write("cannot record an upload of blob \(blob.digest)") { tx in
            try Self.insert(blob, tx)
            try tx.execute(#"""
                INSERT INTO upload (digest, "groupId", "createdAt") VALUES (\#(blob.digest), \#(groupId), \#(Date())) ON CONFLICT DO NOTHING
                """#)
        }
    }

    /// The blob row of a digest, or nil.
    public func blob(_ digest: Digest) throws(CatalogError) -> BlobRecord? {
        try read("cannot read blob \(digest)") { tx in try Self.blob(digest, tx) }
    }

    /// Every blob row.
    public func blobs() throws(CatalogError) -> [BlobRecord] {
        try read("cannot list the blobs") { tx in try Self.blobs(#"SELECT digest, size, "mediaType", "createdAt" FROM blob"#, tx) }
    }

    /// Digests that rows point at but that have no blob row (should never happen: the schema's foreign keys forbid it).
    public func danglingReferences() throws(CatalogError) -> [Digest] {
        try read("cannot look for dangling references") { tx in
            try tx.values(#"""
                SELECT "manifestDigest" FROM "packVersion" WHERE "manifestDigest" NOT IN (SELECT digest FROM blob)
                UNION SELECT digest FROM asset WHERE digest NOT IN (SELECT digest FROM blob)
                UNION SELECT "blobDigest" FROM variant WHERE "blobDigest" NOT IN (SELECT digest FROM blob)
                UNION SELECT "blobDigest" FROM rendition WHERE "blobDigest" NOT IN (SELECT digest FROM blob)
                UNION SELECT digest FROM upload WHERE digest NOT IN (SELECT digest FROM blob)
                UNION SELECT digest FROM "sessionBlob" WHERE digest NOT IN (SELECT digest FROM blob)
                UNION SELECT digest FROM "savedMap" WHERE digest NOT IN (SELECT digest FROM blob)
                UNION SELECT "sourceDigest" FROM job WHERE "sourceDigest" NOT IN (SELECT digest FROM blob)
                UNION SELECT "blobDigest" FROM "jobOutput" WHERE "blobDigest" NOT IN (SELECT digest FROM blob)
                """#, as: Digest.self)
        }
    }

    /// Deletes assets no pack version holds and blob rows nothing references, in one transaction; returns the
    /// digests of the deleted blob rows, whose bytes the caller may then delete. A replica that references one of
    /// them meanwhile makes one of the two transactions fail (the foreign keys), never both commit.
    public func collectGarbage() throws(CatalogError) -> [Digest] {
        try write("cannot collect garbage") { tx in
            try tx.execute(#"""
                DELETE FROM asset WHERE digest NOT IN (SELECT "assetDigest" FROM "packVersionAsset")
                AND digest NOT IN (SELECT digest FROM "sessionBlob") AND digest NOT IN (SELECT digest FROM "savedMapBlob")
                AND digest NOT IN (SELECT digest FROM ref) AND digest NOT IN (SELECT digest FROM share)
                """#)
            // A job no asset needs any more (its packs deleted) goes, with what it made.
            try tx.execute(#"DELETE FROM job WHERE id NOT IN (SELECT "jobId" FROM "jobAsset")"#)
            return try tx.values(#"""
                WITH gone AS (
                    DELETE FROM blob WHERE digest NOT IN (SELECT "manifestDigest" FROM "packVersion")
                    AND digest NOT IN (SELECT digest FROM asset) AND digest NOT IN (SELECT "blobDigest" FROM variant)
                    AND digest NOT IN (SELECT digest FROM upload) AND digest NOT IN (SELECT digest FROM "sessionBlob")
                    AND digest NOT IN (SELECT "mapDigest" FROM session) AND digest NOT IN (SELECT digest FROM "savedMap")
                    AND digest NOT IN (SELECT digest FROM "savedMapBlob") AND digest NOT IN (SELECT digest FROM "privateUpload")
                    AND digest NOT IN (SELECT digest FROM ref) AND digest NOT IN (SELECT digest FROM share)
                    AND digest NOT IN (SELECT "pictureDigest" FROM share) AND digest NOT IN (SELECT "blobDigest" FROM rendition)
                    AND digest NOT IN (SELECT "blobDigest" FROM "packDocument") AND digest NOT IN (SELECT "sourceDigest" FROM job)
                    AND digest NOT IN (SELECT "blobDigest" FROM "jobOutput")
                    RETURNING digest)
                SELECT digest FROM gone ORDER BY digest COLLATE "C"
                """#, as: Digest.self)
        }
    }

    // MARK: Helpers

    /// Inserts a blob row unless one of its digest exists (SQLite's `INSERT OR IGNORE`).
    static func insert(_ blob: BlobRecord, _ tx: PostgresTransaction) throws {
        try tx.execute(#"""
            INSERT INTO blob (digest, size, "mediaType", "createdAt") VALUES (\#(blob.digest), \#(blob.size), \#(blob.mediaType), \#(blob.createdAt))
            ON CONFLICT DO NOTHING
            """#)
    }

    /// The blob row of a digest, or nil.
    static func blob(_ digest: Digest, _ tx: PostgresTransaction) throws -> BlobRecord? {
        try blobs(#"SELECT digest, size, "mediaType", "createdAt" FROM blob WHERE digest = \#(digest)"#, tx).first
    }

    /// The blob rows a query of `digest, size, "mediaType", "createdAt"` gives.
    static func blobs(_ query: PostgresQuery, _ tx: PostgresTransaction) throws -> [BlobRecord] {
        try tx.rows(query, as: (Digest, Int64, String, Date).self).map { BlobRecord(digest: $0.0, size: $0.1, mediaType: $0.2, createdAt: $0.3) }
    }
}
