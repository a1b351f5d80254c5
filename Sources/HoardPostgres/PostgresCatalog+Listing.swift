import Foundation
import HoardCatalog
import HoardCore
import PostgresNIO

/// The asset listing on PostgreSQL, query for query as SQLite's (`Catalog+Listing.swift`), with the same results,
/// order, cursors and totals.
///
/// Order: packs by ``PostgresCatalog/packOrder`` (SQLite's `NOCASE`), then kind, name and digest in the columns'
/// collation, which is the database's: SQLite's byte order when the database's collation is `C` (as
/// `tools/postgres.sh` creates it; `createdb --locale=C` or `--lc-collate=C` elsewhere). Another collation changes
/// the order of names, never which assets a page holds: every page, cursor and comparison uses the same one, and
/// the listing index (`packVersionAsset_listing`) keeps its order.
extension PostgresCatalog {
    /// Assets of the current versions of packs, optionally of one pack (its name, ignoring case) and one kind, by pack,
    /// kind, name and digest, with their variants.
    public func assets(pack: String?, kind: AssetKind?) throws(CatalogError) -> [AssetListing] {
        try read("cannot list the assets") { tx in
            var statement = PostgresQuery(unsafeSQL: "")
            var conditions = ["true"]
            if let pack { conditions.append("p.name = \(statement.bind(pack))") }
            if let kind { conditions.append("a.kind = \(statement.bind(kind.rawValue))") }
            statement.sql = #"""
                SELECT a.digest, a.kind, a.name, a."footprintWidth", a."footprintHeight", p.name
                FROM pack p JOIN "packVersionAsset" pva ON pva."packVersionId" = p."currentVersionId"
                JOIN asset a ON a.digest = pva."assetDigest"
                WHERE \#(conditions.joined(separator: " AND "))
                ORDER BY \#(Self.packOrder), a.kind, a.name, a.digest
                """#
            let rows = try tx.rows(statement, as: (String, String, String, Int, Int, String).self)
            let digests = Set(rows.compactMap { Digest($0.0) })
            let variants = try Self.variants(of: digests, tx)
            let renditions = try Self.renditions(of: digests, tx)
            let pending = try Self.pendingRoles(of: digests, tx)
            return rows.compactMap { digest, kind, name, width, height, pack -> AssetListing? in
                guard let digest = Digest(digest), let footprint = Footprint(width: width, height: height) else { return nil }
                return AssetListing(
                    digest: digest, kind: AssetKind(rawValue: kind), name: name, pack: pack, footprint: footprint,
                    variants: variants[digest] ?? [], thumbnail: renditions[digest]?["thumbnail"], preview: renditions[digest]?["preview"],
                    pending: pending[digest], compatible: renditions[digest]?["compatible"])
            }
        }
    }

    /// One page of the assets of the current versions of visible packs, by pack (``packOrder``), kind, name and
    /// digest. Every step is an indexed query, as SQLite's: packs are read whole (there are few), each pack's assets
    /// come in order from `packVersionAsset_listing`, totals from `packVersionKind`, search from the trigram index
    /// `packVersionAssetSearch` (`ILIKE`; a text of one or two characters filters the visible packs' rows instead),
    /// and variants only for the page.
    public func assetPage(_ query: AssetQuery) throws(CatalogError) -> AssetPage {
        try read("cannot list the assets") { tx in
            let packs = try Self.listedPacks(query, tx)
            let rows: [ListedRow]
            let total: Int
            let hasMore: Bool
            if !(query.text ?? "").isEmpty || query.footprint != nil {
                (rows, total, hasMore) = try Self.searchRows(query, packs: packs, tx)
            } else {
                (rows, total, hasMore) = try Self.browseRows(query, packs: packs, tx)
            }
            let digests = Set(rows.map(\.digest))
            return AssetPage(
                rows: rows, total: total, hasMore: hasMore, variants: try Self.variants(of: digests, tx),
                renditions: try Self.renditions(of: digests, tx), pending: try Self.pendingRoles(of: digests, tx))
        }
    }

    /// The query's matches counted by kind (its kind ignored) and by footprint (its footprint ignored).
    public func assetFacets(_ query: AssetQuery) throws(CatalogError) -> AssetFacets {
        try read("cannot count the assets") { tx in
            var facets = AssetFacets(kind: [:], footprint: [:])
            var unfiltered = query
            unfiltered.kind = nil
            let packs = try Self.listedPacks(unfiltered, tx)
            var byKind = PostgresQuery(unsafeSQL: "")
            guard var kindConditions = Self.matchConditions(unfiltered, packs: packs, &byKind) else { return facets }
            if let footprint = query.footprint { kindConditions.append(Self.footprintCondition(footprint, &byKind)) }
            byKind.sql = #"""
                SELECT pva.kind, count(*) FROM "packVersionAsset" pva WHERE \#(kindConditions.joined(separator: " AND "))
                GROUP BY pva.kind
                """#
            for (kind, count) in try tx.rows(byKind, as: (String, Int).self) { facets.kind[kind] = count }
            var byFootprint = PostgresQuery(unsafeSQL: "")
            var footprintConditions = Self.matchConditions(unfiltered, packs: packs, &byFootprint) ?? []
            if let kind = query.kind { footprintConditions.append("pva.kind = \(byFootprint.bind(kind.rawValue))") }
            byFootprint.sql = #"""
                SELECT a."footprintWidth", a."footprintHeight", count(*)
                FROM "packVersionAsset" pva JOIN asset a ON a.digest = pva."assetDigest"
                WHERE \#(footprintConditions.joined(separator: " AND "))
                GROUP BY a."footprintWidth", a."footprintHeight"
                """#
            for (width, height, count) in try tx.rows(byFootprint, as: (Int, Int, Int).self) {
                facets.footprint["\(width)x\(height)"] = count
            }
            return facets
        }
    }

    /// The visible packs with a current version, in listing order, with their counts from `packVersionKind`.
    static func listedPacks(_ query: AssetQuery, _ tx: PostgresTransaction) throws -> [ListedPack] {
        var statement = PostgresQuery(unsafeSQL: "")
        let cursorPack = statement.bind(query.after?.pack ?? "")
        var counted = #""packVersionId" = p."currentVersionId""#
        if let kind = query.kind { counted += " AND kind = \(statement.bind(kind.rawValue))" }
        var conditions = [#"p."currentVersionId" IS NOT NULL"#]
        switch query.visibility {
        case .all: break
        case .publicAnd(let groupId?): conditions.append(#"(p."isPublic" OR p."groupId" = \#(statement.bind(groupId)))"#)
        case .publicAnd(nil): conditions.append(#"p."isPublic""#)
        }
        if let pack = query.pack { conditions.append("p.name = \(statement.bind(pack))") }
        if let grid = query.gridCondition { conditions.append(grid) }
        statement.sql = #"""
            SELECT p.name, p."currentVersionId", \#(packOrder) >= lower(\#(cursorPack) COLLATE "C"),
                   \#(packOrder) = lower(\#(cursorPack) COLLATE "C"),
                   (SELECT COALESCE(sum("assetCount"), 0)::bigint FROM "packVersionKind" WHERE \#(counted)), \#(AssetQuery.gridColumn)
            FROM pack p WHERE \#(conditions.joined(separator: " AND ")) ORDER BY \#(packOrder), p.id
            """#
        return try tx.rows(statement, as: (String, Int64, Bool, Bool, Int, String?).self).map {
            name, version, atOrAfter, isCursorPack, count, grid in
            ListedPack(
                name: name, versionId: version, count: count, isAtOrAfterCursor: query.after == nil || atOrAfter,
                isCursorPack: isCursorPack, grid: grid)
        }
    }

    /// Browsing (no search text): ``AssetQuery/browse(_:page:)`` with each pack's rows in index order.
    static func browseRows(_ query: AssetQuery, packs: [ListedPack], _ tx: PostgresTransaction) throws -> ([ListedRow], Int, Bool) {
        try query.browse(packs) { pack, limit, skip in
            var statement = PostgresQuery(unsafeSQL: "")
            var conditions = [#"pva."packVersionId" = \#(statement.bind(pack.versionId))"#]
            if let kind = query.kind { conditions.append("pva.kind = \(statement.bind(kind.rawValue))") }
            if let after = query.after, pack.isCursorPack {
                // With the kind fixed, the shorter row value keeps the whole ORDER BY in index order.
                let name = statement.bind(after.name)
                let digest = statement.bind(after.digest.description)
                if let kind = query.kind, kind.rawValue == after.kind {
                    conditions.append(#"(pva.name, pva."assetDigest") > (\#(name), \#(digest))"#)
                } else {
                    conditions.append(#"(pva.kind, pva.name, pva."assetDigest") > (\#(statement.bind(after.kind)), \#(name), \#(digest))"#)
                }
            }
            statement.sql = pageSQL(conditions.joined(separator: " AND "), limit: statement.bind(limit), offset: statement.bind(skip))
            return try tx.rows(statement, as: (String, String, String, Int, Int).self).compactMap { digest, kind, name, width, height in
                Digest(digest).map {
                    ListedRow(pack: pack.name, digest: $0, kind: kind, name: name, width: width, height: height, grid: pack.grid)
                }
            }
        }
    }

    /// Searching or filtering by footprint: the matches of the visible packs' current versions are gathered once;
    /// the total and the page are both taken from that one set, and only the page's rows are joined to their assets.
    static func searchRows(_ query: AssetQuery, packs: [ListedPack], _ tx: PostgresTransaction) throws -> ([ListedRow], Int, Bool) {
        var statement = PostgresQuery(unsafeSQL: "")
        guard var conditions = matchConditions(query, packs: packs, &statement) else { return ([], 0, false) }
        if let kind = query.kind { conditions.append("pva.kind = \(statement.bind(kind.rawValue))") }
        if let footprint = query.footprint { conditions.append(footprintCondition(footprint, &statement)) }
        var after = "true"
        if let cursor = query.after {
            after = #"(lower(pack COLLATE "C"), kind, name, "assetDigest") > (lower(\#(statement.bind(cursor.pack)) COLLATE "C"), "#
                + "\(statement.bind(cursor.kind)), \(statement.bind(cursor.name)), \(statement.bind(cursor.digest.description)))"
        }
        statement.sql = searchSQL(
            conditions.joined(separator: " AND "), after: after, limit: statement.bind(query.limit + 1),
            offset: statement.bind(query.after == nil ? query.offset : 0))
        let found = try tx.rows(statement, as: (Int, String?, String?, String?, String?, Int?, Int?, Int64?).self)
        let total = found.first?.0 ?? 0
        let grids = Dictionary(packs.map { ($0.versionId, $0.grid) }) { first, _ in first }
        let rows = found.compactMap { _, pack, digest, kind, name, width, height, version -> ListedRow? in
            guard let pack, let digest = digest.flatMap(Digest.init), let kind, let name, let width, let height else { return nil }
            let grid = version.flatMap { grids[$0] } ?? nil
            return ListedRow(pack: pack, digest: digest, kind: kind, name: name, width: width, height: height, grid: grid)
        }
        return (Array(rows.prefix(query.limit)), total, rows.count > query.limit)
    }

    /// The conditions on `packVersionAsset pva` of the query's visible packs and text (not its kind or footprint),
    /// their values bound into `statement`; nil when no pack is visible. Three characters or more search the trigram
    /// index with `ILIKE`; fewer compare in the `C` collation, which folds ASCII case only (as SQLite's `LIKE`) and
    /// keeps the trigram index, which cannot serve them, out of the plan.
    static func matchConditions(_ query: AssetQuery, packs: [ListedPack], _ statement: inout PostgresQuery) -> [String]? {
        guard !packs.isEmpty else { return nil }
        var conditions = [#"pva."packVersionId" = ANY(\#(statement.bind(packs.map(\.versionId))))"#]
        let text = query.text ?? ""
        guard !text.isEmpty else { return conditions }
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        let pattern = statement.bind("%" + escaped + "%")
        conditions.append(text.unicodeScalars.count >= 3 ? "pva.name ILIKE \(pattern)" : #"pva.name COLLATE "C" ILIKE \#(pattern)"#)
        return conditions
    }

    /// A membership row's asset has this footprint.
    static func footprintCondition(_ footprint: Footprint, _ statement: inout PostgresQuery) -> String {
        #"""
        EXISTS (SELECT 1 FROM asset fa WHERE fa.digest = pva."assetDigest" AND fa."footprintWidth" = \#(statement.bind(footprint.width))
                AND fa."footprintHeight" = \#(statement.bind(footprint.height)))
        """#
    }

    /// The search's one pass: `matches` holds the matches' listing keys (materialised once), counted for the total and
    /// sorted for the page; the page alone is joined to its assets. Always one row at least (the total; the page's
    /// columns are null when it is empty).
    static func searchSQL(_ conditions: String, after: String, limit: String, offset: String) -> String {
        #"""
        WITH matches AS MATERIALIZED (
            SELECT p.name AS pack, pva.kind, pva.name, pva."assetDigest", pva."packVersionId" AS version
            FROM "packVersionAsset" pva JOIN "packVersion" v ON v.id = pva."packVersionId" JOIN pack p ON p.id = v."packId"
            WHERE \#(conditions))
        SELECT t.total, page.pack, page."assetDigest", page.kind, page.name, a."footprintWidth", a."footprintHeight", page.version
        FROM (SELECT count(*) AS total FROM matches) t
        LEFT JOIN (SELECT * FROM matches WHERE \#(after)
                   ORDER BY lower(pack COLLATE "C"), kind, name, "assetDigest" LIMIT \#(limit) OFFSET \#(offset)) page ON true
        LEFT JOIN asset a ON a.digest = page."assetDigest"
        ORDER BY lower(page.pack COLLATE "C"), page.kind, page.name, page."assetDigest"
        """#
    }

    /// One pack's page: the offset is skipped in the listing index alone, and only the page's rows are joined to
    /// their assets.
    static func pageSQL(_ conditions: String, limit: String, offset: String) -> String {
        #"""
        SELECT pva."assetDigest", pva.kind, pva.name, a."footprintWidth", a."footprintHeight" FROM (
            SELECT "assetDigest", kind, name FROM "packVersionAsset" pva WHERE \#(conditions)
            ORDER BY kind, name, "assetDigest" LIMIT \#(limit) OFFSET \#(offset)) pva
        JOIN asset a ON a.digest = pva."assetDigest" ORDER BY pva.kind, pva.name, pva."assetDigest"
        """#
    }
}

extension PostgresQuery {
    /// Binds `value` and gives its placeholder (`$1`, `$2`, …), for a statement whose SQL is written after its values.
    mutating func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }
}
