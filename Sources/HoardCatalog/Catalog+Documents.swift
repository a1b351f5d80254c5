import GRDB
import HoardCore

extension SQLiteCatalog {
    /// The licence, readme and credits files of a pack's current version, by name; empty when it has none or the pack
    /// does not exist.
    /// `group` as for ``packRecord(named:group:_:)``.
    public func documents(ofPack name: String, group: String?) throws(CatalogError) -> [PackDocument] {
        try read { db in
            guard let version = try Self.packRecord(named: name, group: group, db)?.currentVersionId else { return [] }
            let rows = try Row.fetchAll(db, sql: """
                SELECT name, blobDigest, mediaType, size FROM packDocument WHERE packVersionId = ? ORDER BY name
                """, arguments: [version])
            return rows.compactMap { row in
                guard let digest = Digest(row["blobDigest"] as String) else { return nil }
                return PackDocument(name: row["name"], digest: digest, mediaType: row["mediaType"], size: row["size"])
            }
        }
    }
}
