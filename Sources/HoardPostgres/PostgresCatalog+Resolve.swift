import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// What a session's map references resolve to, as `SQLiteCatalog`'s (HoardCatalog, `Catalog+Sessions.swift` and
/// `Catalog+Queries.swift`): each query takes all the digests at once as one `text[]` parameter.
extension PostgresCatalog {
    /// Resolves a map's references against the catalog. With `group`, each asset names the pack (and version) it
    /// came from: one of that group's packs, else a public one (another group's private pack is never named).
    public func resolve(_ references: Set<Digest>, group: Int64?) throws(CatalogError) -> ResolvedReferences {
        try read("cannot resolve a map's \(references.count) references") { tx in
            let texts = references.texts
            var assets: [Digest: (kind: String, name: String, footprint: Footprint?)] = [:]
            for (digest, kind, name, width, height) in try tx.rows(#"""
                SELECT digest, kind, name, "footprintWidth", "footprintHeight" FROM asset WHERE digest = ANY(\#(texts)::text[])
                """#, as: (Digest, String, String, Int, Int).self) {
                assets[digest] = (kind, name, Footprint(width: width, height: height))
            }
            let blobs = Dictionary(
                try Self.blobs(#"SELECT digest, size, "mediaType", "createdAt" FROM blob WHERE digest = ANY(\#(texts)::text[])"#, tx)
                    .map { ($0.digest, $0) }, uniquingKeysWith: { a, _ in a })
            return ResolvedReferences(
                references, assets: assets, blobs: blobs, variants: try Self.variants(of: Set(assets.keys), tx),
                renditions: try Self.renditions(of: Set(assets.keys), tx),
                packs: try group.map { try Self.packsHolding(Set(assets.keys), group: $0, tx) } ?? [:],
                pending: try Self.pendingRoles(of: Set(assets.keys), tx))
        }
    }

    /// For each asset among `digests`, the blobs that show it (the descriptor, its variants and renditions); other
    /// digests map to themselves.
    public func art(of digests: Set<Digest>) throws(CatalogError) -> [Digest: Set<Digest>] {
        try read("cannot read the art of \(digests.count) digests") { tx in
            let variants = try Self.variants(of: digests, tx)
            var result: [Digest: Set<Digest>] = [:]
            for digest in digests { result[digest] = Set([digest] + (variants[digest] ?? []).map(\.digest)) }
            for (asset, blob) in try tx.rows(#"""
                SELECT "assetDigest", "blobDigest" FROM rendition WHERE "assetDigest" = ANY(\#(digests.texts)::text[])
                """#, as: (Digest, Digest).self) {
                result[asset, default: []].insert(blob)
            }
            return result
        }
    }

    /// The variants of these assets, smallest scale first, with their blobs' sizes and media types.
    static func variants(of assets: Set<Digest>, _ tx: PostgresTransaction) throws -> [Digest: [AssetDescriptor.Variant]] {
        guard !assets.isEmpty else { return [:] }
        var result: [Digest: [AssetDescriptor.Variant]] = [:]
        for (asset, scale, blob, width, height, generated, size, mediaType) in try tx.rows(#"""
            SELECT v."assetDigest", v.scale, v."blobDigest", v.width, v.height, v."isGenerated", b.size, b."mediaType"
            FROM variant v JOIN blob b ON b.digest = v."blobDigest" WHERE v."assetDigest" = ANY(\#(assets.texts)::text[])
            ORDER BY v."assetDigest", v.scale
            """#, as: (Digest, Int, Digest, Int, Int, Bool, Int64, String).self) {
            guard let mediaType = MediaType(rawValue: mediaType) else { continue }
            result[asset, default: []].append(AssetDescriptor.Variant(
                scale: scale, digest: blob, width: width, height: height, size: size, mediaType: mediaType, generated: generated ? true : nil))
        }
        return result
    }

    /// The generated previews and thumbnails of these assets by role (`preview`, `thumbnail`), with their blobs' sizes
    /// and media types.
    static func renditions(of assets: Set<Digest>, _ tx: PostgresTransaction) throws -> [Digest: [String: AssetDescriptor.Rendition]] {
        guard !assets.isEmpty else { return [:] }
        var result: [Digest: [String: AssetDescriptor.Rendition]] = [:]
        for (asset, role, blob, width, height, size, mediaType) in try tx.rows(#"""
            SELECT r."assetDigest", r.role, r."blobDigest", r.width, r.height, b.size, b."mediaType"
            FROM rendition r JOIN blob b ON b.digest = r."blobDigest" WHERE r."assetDigest" = ANY(\#(assets.texts)::text[])
            """#, as: (Digest, String, Digest, Int, Int, Int64, String).self) {
            guard let mediaType = MediaType(rawValue: mediaType) else { continue }
            result[asset, default: [:]][role] = AssetDescriptor.Rendition(digest: blob, width: width, height: height, size: size, mediaType: mediaType)
        }
        return result
    }

    /// For each asset, a pack that holds it and the version: the group's own packs first, then public ones; current
    /// versions before older ones, then by name (ASCII case aside, as SQLite's `NOCASE` orders).
    static func packsHolding(
        _ assets: Set<Digest>, group: Int64, _ tx: PostgresTransaction
    ) throws -> [Digest: (name: String, version: String)] {
        guard !assets.isEmpty else { return [:] }
        var found: [Digest: (name: String, version: String)] = [:]
        for (digest, name, version) in try tx.rows(#"""
            SELECT pva."assetDigest", p.name, v.version FROM "packVersionAsset" pva
            JOIN "packVersion" v ON v.id = pva."packVersionId" JOIN pack p ON p.id = v."packId"
            WHERE pva."assetDigest" = ANY(\#(assets.texts)::text[]) AND (p."groupId" = \#(group) OR p."isPublic")
            ORDER BY p."groupId" = \#(group) DESC, COALESCE(p."currentVersionId" = v.id, false) DESC, lower(p.name COLLATE "C"), v.id DESC
            """#, as: (Digest, String, String).self) where found[digest] == nil {
            found[digest] = (name, version)
        }
        return found
    }
}
