import Foundation
import GRDB
import HoardCore

/// Which packs a listing may show.
public enum PackVisibility: Sendable, Hashable {
    /// Every pack (an admin).
    case all
    /// Public packs, and those of this group when there is one.
    case publicAnd(groupId: Int64?)

    /// What a principal sees: admins every pack, members public packs and their group's, anyone else public packs.
    public init(_ principal: Principal?) {
        guard let principal else {
            self = .publicAnd(groupId: nil)
            return
        }
        if principal.isAdmin { self = .all } else { self = .publicAnd(groupId: principal.isMember ? principal.groupId : nil) }
    }
}

/// A position in the listing order (pack name ignoring case, kind, name, digest): the last asset of a page.
///
/// Its wire form (``token``) is opaque to clients: base64url of a small JSON array. A page that starts after a
/// cursor costs the same wherever the cursor points.
public struct AssetCursor: Sendable, Hashable {
    /// The pack of the last asset.
    public var pack: String
    /// Its kind.
    public var kind: String
    /// Its name.
    public var name: String
    /// Its digest.
    public var digest: Digest

    /// Creates a cursor after this asset.
    public init(pack: String, kind: String, name: String, digest: Digest) {
        self.pack = pack
        self.kind = kind
        self.name = name
        self.digest = digest
    }

    /// Reads a cursor's wire form; nil when it is not one.
    public init?(token: String) {
        var text = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        guard token.utf8.count <= 4096, let data = Data(base64Encoded: text),
              let fields = try? JSONDecoder().decode([String].self, from: data), fields.count == 4,
              let digest = Digest(fields[3])
        else { return nil }
        self.init(pack: fields[0], kind: fields[1], name: fields[2], digest: digest)
    }

    /// The wire form: base64url (no padding) of `["pack","kind","name","sha256:…"]`.
    public var token: String {
        let data = (try? JSONEncoder().encode([pack, kind, name, digest.description])) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// What to list: filters, visibility and where the page starts.
public struct AssetQuery: Sendable, Hashable {
    /// Only this pack (its name, ignoring case).
    public var pack: String?
    /// Only this kind.
    public var kind: AssetKind?
    /// Only assets whose name (folders included) contains this text, ignoring case.
    public var text: String?
    /// Only assets of this footprint.
    public var footprint: Footprint?
    /// Only packs made for this grid (square, or hex of either orientation).
    public var grid: PackGrid.Kind?
    /// Which packs may be shown.
    public var visibility: PackVisibility = .all
    /// Start after this asset (keyset paging); when set, `offset` is ignored.
    public var after: AssetCursor?
    /// Assets to skip (kept for older clients; a deep offset costs at most one pack's rows).
    public var offset = 0
    /// Most assets in the page.
    public var limit = 100

    /// Creates a query.
    public init(pack: String? = nil, kind: AssetKind? = nil, text: String? = nil, footprint: Footprint? = nil,
                visibility: PackVisibility = .all, after: AssetCursor? = nil, offset: Int = 0, limit: Int = 100,
                grid: PackGrid.Kind? = nil) {
        self.pack = pack
        self.grid = grid
        self.kind = kind
        self.text = text
        self.footprint = footprint
        self.visibility = visibility
        self.after = after
        self.offset = offset
        self.limit = limit
    }
}

/// How many assets match a query, by kind (ignoring the query's kind) and by footprint (ignoring its footprint),
/// so a filter can show what each choice would give.
public struct AssetFacets: Sendable, Hashable, Codable {
    /// Matches by kind (`token`), kinds without a match left out.
    public var kind: [String: Int]
    /// Matches by footprint (`2x2`), footprints without a match left out.
    public var footprint: [String: Int]

    /// Counts (for every backend).
    public init(kind: [String: Int], footprint: [String: Int]) {
        self.kind = kind
        self.footprint = footprint
    }
}

/// One page of assets.
public struct AssetPage: Sendable, Hashable {
    /// The assets, in listing order, each with its variants.
    public var assets: [AssetListing]
    /// Assets matching over all pages.
    public var total: Int
    /// Where the next page starts; nil on the last page.
    public var next: AssetCursor?

    /// A page (for every backend).
    public init(assets: [AssetListing], total: Int, next: AssetCursor?) {
        self.assets = assets
        self.total = total
        self.next = next
    }
}

extension SQLiteCatalog {
    /// One page of the assets of the current versions of visible packs, by pack (ignoring case), kind, name and
    /// digest. Every step is an indexed query: packs are read whole (there are few), each pack's assets come in
    /// order from `packVersionAsset_listing`, totals from `packVersionKind`, search from `packVersionAssetSearch`
    /// (FTS5 trigrams; a text of one or two characters scans the visible packs' names instead), and variants only
    /// for the page.
    public func assetPage(_ query: AssetQuery) throws(CatalogError) -> AssetPage {
        try read { db in
            let packs = try Self.listedPacks(query, db)
            let rows: [ListedRow]
            let total: Int
            let hasMore: Bool
            if !(query.text ?? "").isEmpty || query.footprint != nil {
                (rows, total, hasMore) = try Self.searchRows(query, packs: packs, db)
            } else {
                (rows, total, hasMore) = try Self.browseRows(query, packs: packs, db)
            }
            return AssetPage(
                rows: rows, total: total, hasMore: hasMore, variants: try Self.variants(of: Set(rows.map(\.digest)), db),
                renditions: try Self.renditions(of: Set(rows.map(\.digest)), db), pending: try Self.pendingRoles(of: Set(rows.map(\.digest)), db))
        }
    }

    static func listedPacks(_ query: AssetQuery, _ db: Database) throws -> [ListedPack] {
        var conditions = ["p.currentVersionId IS NOT NULL"]
        var arguments: StatementArguments = [query.after?.pack ?? "", query.after?.pack ?? ""]
        let count: String
        if let kind = query.kind {
            count = "(SELECT COALESCE(SUM(assetCount), 0) FROM packVersionKind WHERE packVersionId = p.currentVersionId AND kind = ?)"
            arguments += [kind.rawValue]
        } else {
            count = "(SELECT COALESCE(SUM(assetCount), 0) FROM packVersionKind WHERE packVersionId = p.currentVersionId)"
        }
        switch query.visibility {
        case .all: break
        case .publicAnd(let groupId?):
            conditions.append("(p.isPublic OR p.groupId = ?)")
            arguments += [groupId]
        case .publicAnd(nil):
            conditions.append("p.isPublic")
        }
        if let pack = query.pack {
            conditions.append("p.name = ?")
            arguments += [pack]
        }
        if let grid = query.gridCondition { conditions.append(grid) }
        return try Row.fetchAll(db, sql: """
            SELECT p.name, p.currentVersionId, p.name >= ? AS atOrAfter, p.name = ? AS isCursorPack, \(count) AS count,
                \(AssetQuery.gridColumn) AS grid
            FROM pack p WHERE \(conditions.joined(separator: " AND ")) ORDER BY p.name
            """, arguments: arguments).map { row in
            ListedPack(
                name: row["name"], versionId: row["currentVersionId"], count: row["count"],
                isAtOrAfterCursor: query.after == nil || row["atOrAfter"] as Bool, isCursorPack: row["isCursorPack"], grid: row["grid"])
        }
    }

    /// Browsing (no search text): ``AssetQuery/browse(_:page:)`` with each pack's rows in index order.
    static func browseRows(_ query: AssetQuery, packs: [ListedPack], _ db: Database) throws -> ([ListedRow], Int, Bool) {
        try query.browse(packs) { pack, limit, skip in
            var conditions = ["pva.packVersionId = ?"]
            var arguments: StatementArguments = [pack.versionId]
            if let kind = query.kind {
                conditions.append("pva.kind = ?")
                arguments += [kind.rawValue]
            }
            if let after = query.after, pack.isCursorPack {
                // With the kind fixed, the shorter row value keeps the whole ORDER BY in index order.
                if let kind = query.kind, kind.rawValue == after.kind {
                    conditions.append("(pva.name, pva.assetDigest) > (?, ?)")
                    arguments += [after.name, after.digest]
                } else {
                    conditions.append("(pva.kind, pva.name, pva.assetDigest) > (?, ?, ?)")
                    arguments += [after.kind, after.name, after.digest]
                }
            }
            arguments += [limit, skip]
            return try Row.fetchAll(db, sql: pageSQL(conditions.joined(separator: " AND ")), arguments: arguments)
                .compactMap { listedRow($0, pack: pack.name, grid: pack.grid) }
        }
    }

    /// Searching or filtering by footprint: the matches come from the FTS5 index (or, for a text shorter than a
    /// trigram, from the visible packs' names; with no text, from the visible packs' rows), joined to the current
    /// versions of visible packs and gathered once; the total and the page are both taken from that one set, and only
    /// the page's rows are joined to their assets.
    static func searchRows(_ query: AssetQuery, packs: [ListedPack], _ db: Database) throws -> ([ListedRow], Int, Bool) {
        guard let filter = matchFilter(query, packs: packs) else { return ([], 0, false) }
        var (from, conditions, arguments) = filter
        if let kind = query.kind {
            conditions.append("pva.kind = ?")
            arguments += [kind.rawValue]
        }
        if let footprint = query.footprint {
            conditions.append(footprintCondition)
            arguments += [footprint.width, footprint.height]
        }
        from += packJoins
        var after = "1"
        if let cursor = query.after {
            after = "(pack, kind, name, assetDigest) > (?, ?, ?, ?)"
            arguments += [cursor.pack, cursor.kind, cursor.name, cursor.digest]
        }
        arguments += [query.limit + 1, query.after == nil ? query.offset : 0]
        let sql = searchSQL(from: from, conditions.joined(separator: " AND "), after: after)
        let found = try Row.fetchAll(db, sql: sql, arguments: arguments)
        let total = found.first.map { $0["total"] as Int } ?? 0
        let grids = Dictionary(packs.map { ($0.versionId, $0.grid) }) { first, _ in first }
        let rows = found.compactMap { row in
            (row["pack"] as String?).flatMap { listedRow(row, pack: $0, grid: (row["version"] as Int64?).flatMap { grids[$0] } ?? nil) }
        }
        return (Array(rows.prefix(query.limit)), total, rows.count > query.limit)
    }

    /// Where the query's matches come from and the conditions of its pack and text (not its kind or footprint); nil
    /// when no pack is visible.
    static func matchFilter(_ query: AssetQuery, packs: [ListedPack]) -> (String, [String], StatementArguments)? {
        let versions = packs.map { String($0.versionId) }.joined(separator: ",")
        guard !versions.isEmpty else { return nil }
        let text = query.text ?? ""
        if text.unicodeScalars.count >= 3 {
            // `+` keeps the version list a filter: as an index term it would have every match probe the primary key
            // once per visible version (50 probes a match at 1,000,000 assets) instead of one lookup by rowid.
            return (matchSource, ["+pva.packVersionId IN (\(versions))", "packVersionAssetSearch MATCH ?"],
                    ["\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""])
        }
        guard !text.isEmpty else { return ("packVersionAsset pva", ["pva.packVersionId IN (\(versions))"], []) }
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        return ("packVersionAsset pva", ["pva.packVersionId IN (\(versions))", "pva.name LIKE ? ESCAPE '\\'"], ["%" + escaped + "%"])
    }

    /// A membership row's asset has this footprint (width, height).
    static let footprintCondition =
        "EXISTS (SELECT 1 FROM asset fa WHERE fa.digest = pva.assetDigest AND fa.footprintWidth = ? AND fa.footprintHeight = ?)"

    /// The query's matches counted by kind (its kind ignored) and by footprint (its footprint ignored).
    public func assetFacets(_ query: AssetQuery) throws(CatalogError) -> AssetFacets {
        try read { db in
            var facets = AssetFacets(kind: [:], footprint: [:])
            var unfiltered = query
            unfiltered.kind = nil
            guard let filter = Self.matchFilter(unfiltered, packs: try Self.listedPacks(unfiltered, db)) else { return facets }
            let (from, conditions, arguments) = filter
            var kindConditions = conditions
            var kindArguments = arguments
            if let footprint = query.footprint {
                kindConditions.append(Self.footprintCondition)
                kindArguments += [footprint.width, footprint.height]
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT pva.kind, COUNT(*) AS count FROM \(from) WHERE \(kindConditions.joined(separator: " AND ")) GROUP BY pva.kind
                """, arguments: kindArguments) {
                facets.kind[row["kind"] as String] = row["count"] as Int
            }
            var footprintConditions = conditions
            var footprintArguments = arguments
            if let kind = query.kind {
                footprintConditions.append("pva.kind = ?")
                footprintArguments += [kind.rawValue]
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT a.footprintWidth AS width, a.footprintHeight AS height, COUNT(*) AS count
                FROM \(from) CROSS JOIN asset a ON a.digest = pva.assetDigest WHERE \(footprintConditions.joined(separator: " AND "))
                GROUP BY a.footprintWidth, a.footprintHeight
                """, arguments: footprintArguments) {
                facets.footprint["\(row["width"] as Int)x\(row["height"] as Int)"] = row["count"] as Int
            }
            return facets
        }
    }

    /// The search's one pass: `matches` holds the matches' listing keys (materialised once), counted for the total and
    /// sorted for the page; the page alone is joined to its assets. Always one row at least (the total; the page's
    /// columns are null when it is empty).
    static func searchSQL(from: String, _ conditions: String, after: String) -> String {
        """
        WITH matches AS MATERIALIZED (
            SELECT p.name AS pack, pva.kind, pva.name, pva.assetDigest, pva.packVersionId AS version FROM \(from) WHERE \(conditions))
        SELECT t.total, page.pack, page.assetDigest, page.kind, page.name, a.footprintWidth, a.footprintHeight, page.version
        FROM (SELECT COUNT(*) AS total FROM matches) t
        LEFT JOIN (SELECT * FROM matches WHERE \(after) ORDER BY pack, kind, name, assetDigest LIMIT ? OFFSET ?) page
        LEFT JOIN asset a ON a.digest = page.assetDigest
        ORDER BY page.pack, page.kind, page.name, page.assetDigest
        """
    }

    /// One pack's page: the offset is skipped in the covering index alone, and only the page's rows are joined to
    /// their assets (joined first, every skipped row cost an asset lookup: 0.29 s for an offset of 19,750).
    static func pageSQL(_ conditions: String) -> String {
        """
        SELECT pva.assetDigest, pva.kind, pva.name, a.footprintWidth, a.footprintHeight FROM (
            SELECT assetDigest, kind, name FROM packVersionAsset pva WHERE \(conditions)
            ORDER BY kind, name, assetDigest LIMIT ? OFFSET ?) pva
        JOIN asset a ON a.digest = pva.assetDigest ORDER BY pva.kind, pva.name, pva.assetDigest
        """
    }

    /// The full-text matches, then their membership rows (one lookup by rowid each). CROSS JOIN keeps this order: the
    /// matches drive the query (otherwise SQLite may walk the visible packs' rows and run the full-text query once
    /// per row).
    static let matchSource = "packVersionAssetSearch s CROSS JOIN packVersionAsset pva ON pva.rowid = s.rowid"
    /// From a membership row to its pack.
    static let packJoins = " CROSS JOIN packVersion v ON v.id = pva.packVersionId CROSS JOIN pack p ON p.id = v.packId"

    static func listedRow(_ row: Row, pack: String, grid: String?) -> ListedRow? {
        guard let digest = Digest.fromDatabaseValue(row["assetDigest"]) else { return nil }
        return ListedRow(
            pack: pack, digest: digest, kind: row["kind"], name: row["name"], width: row["footprintWidth"], height: row["footprintHeight"],
            grid: grid)
    }
}
