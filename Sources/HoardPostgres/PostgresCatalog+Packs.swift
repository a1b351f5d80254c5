import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

extension PostgresCatalog {
    /// What the catalog knows of a group's pack before an import: its versions, oldest first (`group` as for
    /// ``pack(named:group:_:)``); nil when there is no such pack.
    public func packState(named name: String, group: String?) throws(CatalogError) -> PackState? {
        try read("cannot read the pack '\(name)'") { tx in
            guard let pack = try Self.pack(named: name, group: group, tx) else { return nil }
            let owner = try tx.value(#"SELECT name FROM "group" WHERE id = \#(pack.groupId)"#, as: String.self)
            let versions = try tx.rows(
                #"SELECT id, version, "manifestDigest" FROM "packVersion" WHERE "packId" = \#(pack.id) ORDER BY id"#,
                as: (Int64, String, String).self)
            var manifests: [String: Digest] = [:]
            for (_, version, manifest) in versions where manifests[version] == nil { manifests[version] = Digest(manifest) }
            let current = versions.first { $0.0 == pack.currentVersionId }
            return PackState(
                name: pack.name, group: owner ?? "?", versions: versions.map(\.1), manifests: manifests,
                currentVersion: current?.1, currentManifest: current.flatMap { Digest($0.2) })
        }
    }

    /// Deletes a pack and all its versions (assets and blobs stay until garbage collection); false when absent.
    /// `group` names the owner; nil finds the pack in whichever group has one of that name.
    @discardableResult
    public func deletePack(named name: String, group: String?) throws(CatalogError) -> Bool {
        try write("cannot delete the pack '\(name)'") { tx in
            guard let pack = try Self.pack(named: name, group: group, tx) else { return false }
            return try tx.execute("DELETE FROM pack WHERE id = \(pack.id)") > 0
        }
    }

    /// Makes a pack public or private; false when absent. `group` as for ``deletePack(named:group:)``.
    @discardableResult
    public func setPublic(_ isPublic: Bool, pack name: String, group: String?) throws(CatalogError) -> Bool {
        try write("cannot publish or unpublish the pack '\(name)'") { tx in
            guard let pack = try Self.pack(named: name, group: group, tx) else { return false }
            try tx.execute(#"UPDATE pack SET "isPublic" = \#(isPublic) WHERE id = \#(pack.id)"#)
            return true
        }
    }

    /// Every pack with its current version, by name ignoring ASCII case (``packOrder``).
    public func packs() throws(CatalogError) -> [PackSummary] {
        try read("cannot list the packs") { tx in
            try tx.rows(#"""
                SELECT p.name, g.name, p."groupId", p."isPublic", v.version, v."manifestDigest", v."assetCount", v."totalBytes",
                       v."importedAt", (SELECT count(*) FROM "packVersion" WHERE "packId" = p.id), j.total, j.done, j.failed, j.cancelled
                FROM pack p JOIN "group" g ON g.id = p."groupId" LEFT JOIN "packVersion" v ON v.id = p."currentVersionId"
                LEFT JOIN "packVersionJobs" j ON j."packVersionId" = p."currentVersionId"
                ORDER BY \#(unescaped: Self.packOrder), p.id
                """#, as: (String, String, Int64, Bool, String?, String?, Int?, Int64?, Date?, Int, Int?, Int?, Int?, Int?).self
            ).map { name, group, groupId, isPublic, version, manifest, assetCount, totalBytes, importedAt, versionCount, total, done, failed, cancelled in
                PackSummary(
                    name: name, group: group, groupId: groupId, isPublic: isPublic, version: version, versionCount: versionCount,
                    manifestDigest: manifest.flatMap(Digest.init), assetCount: assetCount ?? 0, totalBytes: totalBytes ?? 0,
                    importedAt: importedAt,
                    renditions: total.map { RenditionProgress(total: $0, done: done ?? 0, failed: failed ?? 0, cancelled: cancelled ?? 0) })
            }
        }
    }

    /// The licence, readme and credits files of a pack's current version, by name; empty when it has none or the pack
    /// does not exist. `group` as for ``deletePack(named:group:)``.
    public func documents(ofPack name: String, group: String?) throws(CatalogError) -> [PackDocument] {
        try read("cannot read the documents of the pack '\(name)'") { tx in
            guard let version = try Self.pack(named: name, group: group, tx)?.currentVersionId else { return [] }
            return try tx.rows(#"""
                SELECT name, "blobDigest", "mediaType", size FROM "packDocument" WHERE "packVersionId" = \#(version)
                ORDER BY name COLLATE "C"
                """#, as: (String, String, String, Int64).self
            ).compactMap { name, digest, mediaType, size in
                Digest(digest).map { PackDocument(name: name, digest: $0, mediaType: mediaType, size: size) }
            }
        }
    }

    /// The listing order of packs: SQLite's `NOCASE` (ASCII letters folded, then bytes compared), where the `nocase`
    /// column's own ICU order would differ for punctuation, digits and accents. `p` is the pack.
    static let packOrder = #"lower(p.name COLLATE "C")"#
}
