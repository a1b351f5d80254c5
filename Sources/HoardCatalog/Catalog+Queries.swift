import Foundation
import GRDB
import HoardCore

/// One pack as listed by `hoard packs` and `GET /v1/packs`.
public struct PackSummary: Sendable, Hashable, Codable {
    /// Name.
    public var name: String
    /// Owning group.
    public var group: String
    /// Owning group's id: what access decisions compare (not on the wire; 0 when decoded).
    public var groupId: Int64 = 0
    /// Whether members of every group may see it.
    public var isPublic: Bool
    /// Current version.
    public var version: String?
    /// How many versions were imported.
    public var versionCount: Int
    /// The current version's manifest blob.
    public var manifestDigest: Digest?
    /// Assets in the current version.
    public var assetCount: Int
    /// Picture bytes in the current version.
    public var totalBytes: Int64
    /// When the current version was imported.
    public var importedAt: Date?
    /// How far the current version's generated pictures are (absent when it has none to make).
    public var renditions: RenditionProgress?

    /// A pack's summary (for every backend).
    public init(
        name: String, group: String, groupId: Int64 = 0, isPublic: Bool, version: String?, versionCount: Int, manifestDigest: Digest?,
        assetCount: Int, totalBytes: Int64, importedAt: Date?, renditions: RenditionProgress? = nil
    ) {
        self.name = name
        self.group = group
        self.groupId = groupId
        self.isPublic = isPublic
        self.version = version
        self.versionCount = versionCount
        self.manifestDigest = manifestDigest
        self.assetCount = assetCount
        self.totalBytes = totalBytes
        self.importedAt = importedAt
        self.renditions = renditions
    }

    enum CodingKeys: String, CodingKey {
        case name, group, isPublic, version, versionCount, manifestDigest, assetCount, totalBytes, importedAt, renditions
    }
}

extension SQLiteCatalog {
    /// Every pack with its current version, by name.
    public func packs() throws(CatalogError) -> [PackSummary] {
        try read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT p.name, g.name AS groupName, p.groupId, p.isPublic, v.version, v.manifestDigest, v.assetCount, v.totalBytes,
                       v.importedAt, (SELECT COUNT(*) FROM packVersion WHERE packId = p.id) AS versionCount,
                       j.total, j.done, j.failed, j.cancelled
                FROM pack p JOIN "group" g ON g.id = p.groupId LEFT JOIN packVersion v ON v.id = p.currentVersionId
                LEFT JOIN packVersionJobs j ON j.packVersionId = p.currentVersionId
                ORDER BY p.name
                """)
            return rows.map { row in
                PackSummary(
                    name: row["name"], group: row["groupName"], groupId: row["groupId"], isPublic: row["isPublic"], version: row["version"],
                    versionCount: row["versionCount"], manifestDigest: row["manifestDigest"], assetCount: row["assetCount"] ?? 0,
                    totalBytes: row["totalBytes"] ?? 0, importedAt: row["importedAt"],
                    renditions: (row["total"] as Int?).map {
                        RenditionProgress(total: $0, done: row["done"], failed: row["failed"], cancelled: row["cancelled"])
                    })
            }
        }
    }

    /// Assets of the current versions of packs, optionally of one pack and one kind, by pack, kind and name.
    public func assets(pack: String?, kind: AssetKind?) throws(CatalogError) -> [AssetListing] {
        try read { db in
            var sql = """
                SELECT a.digest, a.kind, a.name, a.footprintWidth, a.footprintHeight, p.name AS pack
                FROM pack p JOIN packVersionAsset pva ON pva.packVersionId = p.currentVersionId
                JOIN asset a ON a.digest = pva.assetDigest
                """
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let pack {
                conditions.append("p.name = ?")
                arguments += [pack]
            }
            if let kind {
                conditions.append("a.kind = ?")
                arguments += [kind.rawValue]
            }
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            sql += " ORDER BY p.name, a.kind, a.name, a.digest"
            let rows = try Row.fetchAll(db, sql: sql, arguments: arguments)
            let digests = Set(rows.compactMap { Digest.fromDatabaseValue($0["digest"]) })
            let variants = try Self.variants(of: digests, db)
            let renditions = try Self.renditions(of: digests, db)
            let pending = try Self.pendingRoles(of: digests, db)
            return rows.compactMap { row -> AssetListing? in
                guard let digest = Digest.fromDatabaseValue(row["digest"]),
                      let footprint = Footprint(width: row["footprintWidth"], height: row["footprintHeight"])
                else { return nil }
                return AssetListing(
                    digest: digest, kind: AssetKind(rawValue: row["kind"]), name: row["name"], pack: row["pack"],
                    footprint: footprint, variants: variants[digest] ?? [], thumbnail: renditions[digest]?["thumbnail"],
                    preview: renditions[digest]?["preview"], pending: pending[digest],
                    compatible: renditions[digest]?["compatible"])
            }
        }
    }

    /// The variants of these assets, smallest scale first, with their blobs' sizes and media types; a few queries
    /// per 500 assets rather than a scan of every variant.
    static func variants(of assets: Set<Digest>, _ db: Database) throws -> [Digest: [AssetDescriptor.Variant]] {
        var result: [Digest: [AssetDescriptor.Variant]] = [:]
        let sorted = assets.sorted()
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let chunk = Array(sorted[start..<min(start + 500, sorted.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let rows = try Row.fetchAll(db, sql: """
                SELECT v.assetDigest, v.scale, v.blobDigest, v.width, v.height, v.isGenerated, b.size, b.mediaType
                FROM variant v JOIN blob b ON b.digest = v.blobDigest WHERE v.assetDigest IN (\(marks)) ORDER BY v.assetDigest, v.scale
                """, arguments: StatementArguments(chunk))
            for row in rows {
                guard let asset = Digest.fromDatabaseValue(row["assetDigest"]), let blob = Digest.fromDatabaseValue(row["blobDigest"]),
                      let mediaType = MediaType(rawValue: row["mediaType"])
                else { continue }
                let generated: Bool = row["isGenerated"]
                result[asset, default: []].append(AssetDescriptor.Variant(
                    scale: row["scale"], digest: blob, width: row["width"], height: row["height"], size: row["size"],
                    mediaType: mediaType, generated: generated ? true : nil))
            }
        }
        return result
    }

    /// The generated renditions of these assets by role (`preview`, `thumbnail`, `compatible`), with their blobs' sizes
    /// and media types.
    static func renditions(of assets: Set<Digest>, _ db: Database) throws -> [Digest: [String: AssetDescriptor.Rendition]] {
        var result: [Digest: [String: AssetDescriptor.Rendition]] = [:]
        let sorted = assets.sorted()
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let chunk = Array(sorted[start..<min(start + 500, sorted.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let rows = try Row.fetchAll(db, sql: """
                SELECT r.assetDigest, r.role, r.blobDigest, r.width, r.height, b.size, b.mediaType
                FROM rendition r JOIN blob b ON b.digest = r.blobDigest WHERE r.assetDigest IN (\(marks))
                """, arguments: StatementArguments(chunk))
            for row in rows {
                guard let asset = Digest.fromDatabaseValue(row["assetDigest"]), let blob = Digest.fromDatabaseValue(row["blobDigest"]),
                      let mediaType = MediaType(rawValue: row["mediaType"])
                else { continue }
                result[asset, default: [:]][row["role"] as String] = AssetDescriptor.Rendition(
                    digest: blob, width: row["width"], height: row["height"], size: row["size"], mediaType: mediaType)
            }
        }
        return result
    }

    /// The blobs of the generated previews and thumbnails of `assets`.
    static func renditionDigests(of assets: Set<Digest>, _ db: Database) throws -> Set<Digest> {
        var result: Set<Digest> = []
        let sorted = assets.sorted()
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let chunk = Array(sorted[start..<min(start + 500, sorted.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            result.formUnion(try Digest.fetchAll(
                db, sql: "SELECT blobDigest FROM rendition WHERE assetDigest IN (\(marks))", arguments: StatementArguments(chunk)))
        }
        return result
    }

    /// Every blob row.
    public func blobs() throws(CatalogError) -> [BlobRecord] {
        try read { db in try BlobRecord.fetchAll(db) }
    }

    /// Digests that rows point at but that have no blob row (should never happen: the schema's foreign keys forbid it).
    public func danglingReferences() throws(CatalogError) -> [Digest] {
        try read { db in
            try Digest.fetchAll(db, sql: """
                SELECT manifestDigest FROM packVersion WHERE manifestDigest NOT IN (SELECT digest FROM blob)
                UNION SELECT digest FROM asset WHERE digest NOT IN (SELECT digest FROM blob)
                UNION SELECT blobDigest FROM variant WHERE blobDigest NOT IN (SELECT digest FROM blob)
                UNION SELECT blobDigest FROM rendition WHERE blobDigest NOT IN (SELECT digest FROM blob)
                UNION SELECT digest FROM upload WHERE digest NOT IN (SELECT digest FROM blob)
                UNION SELECT digest FROM sessionBlob WHERE digest NOT IN (SELECT digest FROM blob)
                UNION SELECT digest FROM savedMap WHERE digest NOT IN (SELECT digest FROM blob)
                UNION SELECT sourceDigest FROM job WHERE sourceDigest NOT IN (SELECT digest FROM blob)
                UNION SELECT blobDigest FROM jobOutput WHERE blobDigest NOT IN (SELECT digest FROM blob)
                """)
        }
    }

    /// Deletes assets no pack version holds and blob rows nothing references, in one transaction; returns the
    /// digests of the deleted blob rows, whose bytes the caller may then delete.
    public func collectGarbage() throws(CatalogError) -> [Digest] {
        try write { db in
            try db.execute(sql: """
                DELETE FROM asset WHERE digest NOT IN (SELECT assetDigest FROM packVersionAsset)
                AND digest NOT IN (SELECT digest FROM sessionBlob) AND digest NOT IN (SELECT digest FROM savedMapBlob)
                AND digest NOT IN (SELECT digest FROM ref) AND digest NOT IN (SELECT digest FROM share)
                """)
            // A job no asset needs any more (its packs deleted) goes, with what it made.
            try db.execute(sql: "DELETE FROM job WHERE id NOT IN (SELECT jobId FROM jobAsset)")
            let unreferenced = try Digest.fetchAll(db, sql: """
                SELECT digest FROM blob WHERE digest NOT IN (SELECT manifestDigest FROM packVersion)
                AND digest NOT IN (SELECT digest FROM asset) AND digest NOT IN (SELECT blobDigest FROM variant)
                AND digest NOT IN (SELECT digest FROM upload) AND digest NOT IN (SELECT digest FROM sessionBlob)
                AND digest NOT IN (SELECT mapDigest FROM session) AND digest NOT IN (SELECT digest FROM savedMap)
                AND digest NOT IN (SELECT digest FROM savedMapBlob) AND digest NOT IN (SELECT digest FROM privateUpload)
                AND digest NOT IN (SELECT digest FROM ref) AND digest NOT IN (SELECT digest FROM share)
                AND digest NOT IN (SELECT pictureDigest FROM share) AND digest NOT IN (SELECT blobDigest FROM rendition)
                AND digest NOT IN (SELECT blobDigest FROM packDocument) AND digest NOT IN (SELECT sourceDigest FROM job)
                AND digest NOT IN (SELECT blobDigest FROM jobOutput)
                """)
            for digest in unreferenced { try db.execute(sql: "DELETE FROM blob WHERE digest = ?", arguments: [digest]) }
            return unreferenced
        }
    }
}
