import HoardCore

/// A visible pack with a current version, as either backend's listing reads it, and how many of its assets the query's
/// kind matches.
package struct ListedPack: Sendable {
    /// The pack's name.
    package var name: String
    /// Its current version.
    package var versionId: Int64
    /// Its current version's assets of the query's kind (of every kind without one).
    package var count: Int
    /// Whether the pack sorts at or after the cursor's pack (compared ignoring case; true without a cursor).
    package var isAtOrAfterCursor: Bool
    /// Whether it is the cursor's pack (compared ignoring case).
    package var isCursorPack: Bool
    /// The grid its current version's art was made for (`packVersion.grid`; nil: square).
    package var grid: String?

    /// A listed pack.
    package init(name: String, versionId: Int64, count: Int, isAtOrAfterCursor: Bool, isCursorPack: Bool, grid: String? = nil) {
        self.name = name
        self.versionId = versionId
        self.count = count
        self.isAtOrAfterCursor = isAtOrAfterCursor
        self.isCursorPack = isCursorPack
        self.grid = grid
    }
}

/// One asset of a listing page, before its variants are read.
package struct ListedRow: Sendable {
    /// Its pack's name.
    package var pack: String
    /// The asset.
    package var digest: Digest
    /// Its kind.
    package var kind: String
    /// Its name.
    package var name: String
    /// Its footprint's width.
    package var width: Int
    /// Its footprint's height.
    package var height: Int
    /// Its pack's grid (``ListedPack/grid``).
    package var grid: String?

    /// A listed row.
    package init(pack: String, digest: Digest, kind: String, name: String, width: Int, height: Int, grid: String? = nil) {
        self.pack = pack
        self.digest = digest
        self.kind = kind
        self.name = name
        self.width = width
        self.height = height
        self.grid = grid
    }
}

extension AssetQuery {
    /// The SQL condition on a pack `p` (both backends) that keeps the packs of the query's grid; nil without one.
    package var gridCondition: String? {
        grid.map { Self.gridColumn + ($0 == .hex ? " IS NOT NULL" : " IS NULL") }
    }

    /// The column (both backends) of a pack `p`'s current version's grid.
    package static let gridColumn = #"(SELECT v.grid FROM "packVersion" v WHERE v.id = p."currentVersionId")"#

    /// Browsing (no search text), on either backend: whole packs are skipped by their counts, then `page` gives one
    /// pack's next rows in index order, at most `limit` after skipping `skip` (and, in the cursor's pack, only those
    /// after the cursor). Gives the page, the total and whether more rows follow it.
    package func browse(
        _ packs: [ListedPack], page: (_ pack: ListedPack, _ limit: Int, _ skip: Int) throws -> [ListedRow]
    ) rethrows -> (rows: [ListedRow], total: Int, hasMore: Bool) {
        let total = packs.reduce(0) { $0 + $1.count }
        var rows: [ListedRow] = []
        var skip = after == nil ? offset : 0
        for pack in packs where pack.count > 0 && pack.isAtOrAfterCursor {
            if rows.count == limit { return (rows, total, true) }
            if skip >= pack.count {
                skip -= pack.count
                continue
            }
            let wanted = limit - rows.count
            let found = try page(pack, wanted + 1, skip)
            skip = 0
            rows += found.prefix(wanted)
            if found.count > wanted { return (rows, total, true) }
        }
        return (rows, total, false)
    }
}

extension AssetPage {
    /// A page of these rows with their variants and renditions (by role: `preview`, `thumbnail`); its cursor is the
    /// last row when more follow.
    package init(
        rows: [ListedRow], total: Int, hasMore: Bool, variants: [Digest: [AssetDescriptor.Variant]],
        renditions: [Digest: [String: AssetDescriptor.Rendition]], pending: [Digest: [String]] = [:]
    ) {
        let assets = rows.compactMap { row -> AssetListing? in
            guard let footprint = Footprint(width: row.width, height: row.height) else { return nil }
            return AssetListing(
                digest: row.digest, kind: AssetKind(rawValue: row.kind), name: row.name, pack: row.pack, footprint: footprint,
                variants: variants[row.digest] ?? [], thumbnail: renditions[row.digest]?["thumbnail"],
                preview: renditions[row.digest]?["preview"], grid: row.grid.flatMap(PackGrid.init),
                pending: pending[row.digest], compatible: renditions[row.digest]?["compatible"])
        }
        let next = hasMore ? rows.last.map { AssetCursor(pack: $0.pack, kind: $0.kind, name: $0.name, digest: $0.digest) } : nil
        self.init(assets: assets, total: total, next: next)
    }
}
