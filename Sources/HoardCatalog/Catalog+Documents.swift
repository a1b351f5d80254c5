import GRDB
import HoardCore

extension Catalog {
    /// The licence, readme and credits files of a pack's current version, by name; empty when it has none or the pack
    /// does not exist.
    public func documents(ofPack name: String) throws(CatalogError) -> [PackDocument] {
        try read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT d.name, d.blobDigest, d.mediaType, d.size FROM packDocument d
                JOIN pack p ON p.currentVersionId = d.packVersionId WHERE p.name = ? ORDER BY d.name
                """, arguments: [name])
            return rows.compactMap { row in
                guard let digest = Digest(row["blobDigest"] as String) else { return nil }
                return PackDocument(name: row["name"], digest: digest, mediaType: row["mediaType"], size: row["size"])
            }
        }
    }
}
