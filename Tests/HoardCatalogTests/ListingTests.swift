import Foundation
import GRDB
import HoardCore
import PostgresNIO
import Testing

@testable import HoardCatalog
@testable import HoardPostgres

/// `assetPage`: keyset and offset paging, search, visibility, and the query plans that keep them flat, on every
/// backend (the plans each on its own).
@Suite struct ListingTests {
    /// Three packs (two groups, one public) of `perPack` tokens and textures whose names share words.
    static func catalog(_ kind: CatalogBackendKind, perPack: Int = 30) throws -> Catalog {
        let catalog = try kind.makeCatalog()
        for (pack, group) in [("alpha", "dragons"), ("Beta", "owlbears"), ("gamma", "dragons")] {
            let assets = (0..<perPack).map { n in
                AssetSpec(
                    kind: n % 3 == 0 ? .texture : .token, name: "\(n % 2 == 0 ? "cave" : "forest")/\(pack)-goblin-\(n % 7)",
                    footprint: Footprint(width: 1 + n % 2, height: 1)!,
                    pictures: [PictureSpec(scale: 1, width: 64, height: 64, size: 100, label: "\(pack)-\(n)")])
            }
            _ = try catalog.record(CommitFixture(group: group, pack: pack, assets: assets).commit)
        }
        try catalog.setPublic(true, pack: "Beta")
        return catalog
    }

    /// Every asset of the query, page after page, following the cursors.
    static func walk(_ catalog: Catalog, _ query: AssetQuery) throws -> [AssetListing] {
        var query = query
        var seen: [AssetListing] = []
        for _ in 0..<1000 {
            let page = try catalog.assetPage(query)
            seen += page.assets
            guard let next = page.next else { return seen }
            #expect(page.assets.count == query.limit)
            let cursor: AssetCursor = try #require(AssetCursor(token: next.token))
            query.after = cursor
        }
        Issue.record("the cursor never reached the end")
        return seen
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func cursorPagesGiveEveryAssetOnceInListingOrder(_ kind: CatalogBackendKind) throws {
        let catalog = try Self.catalog(kind)
        let all = try catalog.assets()
        #expect(all.count == 90)
        for limit in [1, 7, 30, 89, 90, 1000] {
            #expect(try Self.walk(catalog, AssetQuery(limit: limit)) == all)
        }
        #expect(all.map(\.pack).first == "alpha" && all.map(\.pack).last == "gamma", "packs sort ignoring case")
        let page = try catalog.assetPage(AssetQuery(limit: 10))
        #expect(page.total == 90)
    }

    /// A pack version made for hexes lists its grid with each asset, and the grid filter keeps or leaves out its
    /// packs, browsing, searching and in the facets alike; a later square version of the pack is square again.
    @Test(arguments: CatalogBackendKind.allCases)
    func theGridFilterKeepsThePacksMadeForItAndEachAssetSaysItsPacksGrid(_ kind: CatalogBackendKind) throws {
        let catalog = try Self.catalog(kind)
        let pointy = PackGrid(type: .hex, orientation: .pointy)
        var hex = CommitFixture(group: "dragons", pack: "gamma", version: "2", assets: [
            AssetSpec(kind: .texture, name: "cave/hex-grass", pictures: [PictureSpec(scale: 1, width: 62, height: 72, size: 100, label: "hex")]),
        ]).commit
        hex.grid = pointy
        _ = try catalog.record(hex)
        let hexes = try Self.walk(catalog, AssetQuery(limit: 7, grid: .hex))
        #expect(hexes.map(\.name) == ["cave/hex-grass"] && hexes.allSatisfy { $0.grid == pointy })
        let squares = try Self.walk(catalog, AssetQuery(limit: 7, grid: .square))
        #expect(squares.count == 60 && squares.allSatisfy { $0.pack != "gamma" && $0.grid == nil })
        #expect(try catalog.assetPage(AssetQuery(text: "hex", grid: .hex)).assets.first?.grid == pointy)
        #expect(try catalog.assetPage(AssetQuery(text: "goblin", grid: .hex)).total == 0)
        #expect(try catalog.assetFacets(AssetQuery(grid: .hex)).kind == ["texture": 1])
        _ = try catalog.record(CommitFixture(group: "dragons", pack: "gamma", version: "3", assets: [
            AssetSpec(kind: .token, name: "square-again", pictures: [PictureSpec(scale: 1, width: 64, height: 64, size: 100, label: "sq")]),
        ]).commit)
        #expect(try catalog.assetPage(AssetQuery(grid: .hex)).total == 0)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func offsetPagesMatchTheCursorPages(_ kind: CatalogBackendKind) throws {
        let catalog = try Self.catalog(kind)
        let all = try catalog.assets()
        for offset in [0, 1, 29, 30, 31, 60, 89, 90, 200] {
            let page = try catalog.assetPage(AssetQuery(offset: offset, limit: 11))
            #expect(page.assets == Array(all.dropFirst(offset).prefix(11)))
            #expect(page.total == 90)
            #expect((page.next != nil) == (offset + 11 < 90))
        }
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func filtersAndVisibilityNarrowTheListing(_ kind: CatalogBackendKind) throws {
        let catalog = try Self.catalog(kind)
        let dragons = try #require(try catalog.group(named: "dragons")?.id)
        let tokens = try catalog.assets(kind: .token)
        #expect(try Self.walk(catalog, AssetQuery(kind: .token, limit: 8)) == tokens)
        #expect(try catalog.assetPage(AssetQuery(kind: .token, limit: 1)).total == tokens.count)
        let visible = try Self.walk(catalog, AssetQuery(visibility: .publicAnd(groupId: dragons), limit: 13))
        #expect(Set(visible.map(\.pack)) == ["alpha", "Beta", "gamma"])
        let anonymous = try Self.walk(catalog, AssetQuery(visibility: .publicAnd(groupId: nil), limit: 13))
        #expect(anonymous == (try catalog.assets(pack: "Beta")))
        let owlbears = try #require(try catalog.group(named: "owlbears")?.id)
        #expect(try catalog.assetPage(AssetQuery(pack: "alpha", visibility: .publicAnd(groupId: owlbears))).total == 0)
        #expect(try catalog.assetPage(AssetQuery(pack: "ALPHA")).total == 30, "a pack name matches ignoring case")
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func searchFindsNamesAndFolderPathsIgnoringCaseAndPagesWithCursors(_ kind: CatalogBackendKind) throws {
        let catalog = try Self.catalog(kind)
        let all = try catalog.assets()
        for text in ["GOBLIN-3", "forest/", "Cave/BETA", "a-g", "t", "no such thing", "100%", "_"] {
            let expected = all.filter { $0.name.lowercased().contains(text.lowercased()) }
            #expect(try Self.walk(catalog, AssetQuery(text: text, limit: 4)) == expected, "\(text)")
            #expect(try catalog.assetPage(AssetQuery(text: text, limit: 4)).total == expected.count, "\(text)")
            #expect(try catalog.assetPage(AssetQuery(text: text, offset: 3, limit: 4)).assets == Array(expected.dropFirst(3).prefix(4)))
        }
        let tokens = all.filter { $0.kind == .token && $0.name.contains("cave") }
        #expect(try Self.walk(catalog, AssetQuery(kind: .token, text: "cave", limit: 5)) == tokens)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func searchSeesOnlyCurrentVersionsAndForgetsCollectedAssets(_ kind: CatalogBackendKind) throws {
        let catalog = try kind.makeCatalog()
        let old = [AssetSpec(kind: .token, name: "ogre", pictures: [PictureSpec(scale: 1, width: 64, height: 64, size: 9, label: "ogre")])]
        let new = [AssetSpec(kind: .token, name: "troll", pictures: [PictureSpec(scale: 1, width: 64, height: 64, size: 9, label: "troll")])]
        _ = try catalog.record(CommitFixture(pack: "monsters", version: "1", assets: old).commit)
        _ = try catalog.record(CommitFixture(pack: "monsters", version: "2", assets: new).commit)
        #expect(try catalog.assetPage(AssetQuery(text: "ogre")).total == 0)
        #expect(try catalog.assetPage(AssetQuery(text: "troll")).assets.map(\.name) == ["troll"])
        try catalog.deletePack(named: "monsters")
        _ = try catalog.collectGarbage()
        if let catalog = catalog as? SQLiteCatalog {
            let sql = "SELECT COUNT(*) FROM packVersionAssetSearch WHERE packVersionAssetSearch MATCH 'troll'"
            #expect(try catalog.read { db in try Int.fetchOne(db, sql: sql) } == 0)
            #expect(try catalog.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM packVersionKind") } == 0)
        }
        if let catalog = catalog as? PostgresCatalog {
            // The trigram index is on the membership rows themselves: none is left to find.
            #expect(try catalog.read("count") { tx in try tx.value(#"SELECT count(*) FROM "packVersionAsset""#, as: Int.self) } == 0)
            #expect(try catalog.read("count") { tx in try tx.value(#"SELECT count(*) FROM "packVersionKind""#, as: Int.self) } == 0)
        }
    }

    @Test func aCursorTokenRoundTripsAndGarbageIsRefused() throws {
        let cursor = AssetCursor(pack: "Pack \"1\"/é", kind: "token", name: "a/b", digest: fakeDigest("x"))
        #expect(AssetCursor(token: cursor.token) == cursor)
        #expect(!cursor.token.contains("="))
        for garbage in ["", "abc", "W10", String(repeating: "A", count: 5000), "WyJhIiwiYiIsImMiLCJkIl0"] {
            #expect(AssetCursor(token: garbage) == nil, "\(garbage)")
        }
    }

    /// The plans, not timings: each query the listing runs is an index search, never a scan of a large table and
    /// never a sort of every asset.
    @Test func listingQueriesUseIndexesNotScans() throws {
        let catalog = try #require(try Self.catalog(.sqlite, perPack: 3) as? SQLiteCatalog)
        let cursor = AssetCursor(pack: "alpha", kind: "token", name: "x", digest: fakeDigest("x"))
        let plans = try catalog.read { db -> [String: String] in
            func plan(_ sql: String, _ arguments: StatementArguments) throws -> String {
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
                    .joined(separator: "\n")
            }
            return [
                "page": try plan(
                    SQLiteCatalog.pageSQL("pva.packVersionId = ? AND (pva.kind, pva.name, pva.assetDigest) > (?, ?, ?)"),
                    [1, cursor.kind, cursor.name, cursor.digest, 10, 0]),
                "kindPage": try plan(
                    SQLiteCatalog.pageSQL("pva.packVersionId = ? AND pva.kind = ? AND (pva.name, pva.assetDigest) > (?, ?)"),
                    [1, "token", cursor.name, cursor.digest, 10, 0]),
                "search": try plan(
                    SQLiteCatalog.searchSQL(
                        from: SQLiteCatalog.matchSource + SQLiteCatalog.packJoins,
                        "+pva.packVersionId IN (1,2,3) AND packVersionAssetSearch MATCH ?", after: "1"),
                    ["\"goblin\"", 10, 0]),
                "owners": try plan(SQLiteCatalog.blobPacksSQL, ["d": fakeDigest("x")]),
                "changes": try plan("SELECT seq, kind, key FROM accessChange WHERE seq > ? ORDER BY seq LIMIT ?", [0, 10]),
            ]
        }
        for name in ["page", "kindPage"] {
            let plan = try #require(plans[name])
            #expect(plan.contains("COVERING INDEX packVersionAsset_listing (packVersionId=?"), "\(plan)")
            #expect(plan.contains("SEARCH a USING INDEX"), "only the page's rows are joined to their assets: \(plan)")
        }
        let search = try #require(plans["search"])
        #expect(search.contains("VIRTUAL TABLE INDEX"), "\(search)")
        #expect(search.contains("SEARCH pva USING INTEGER PRIMARY KEY (rowid=?)"), "one lookup a match: \(search)")
        for (name, plan) in plans {
            for line in plan.split(separator: "\n") where line.hasPrefix("SCAN") {
                // The full-text index, or rows materialised by the query itself: the page of pageSQL (at most
                // `limit + 1` rows), the search's matches, their count and their page.
                let materialised = ["SCAN pva", "SCAN matches", "SCAN t", "SCAN page", "SCAN page LEFT-JOIN"]
                #expect(line.hasPrefix("SCAN s VIRTUAL TABLE") || materialised.contains(String(line)), "\(name) scans: \(line)")
            }
        }
    }

    /// The PostgreSQL plans, on a catalog large enough for the planner to choose (6,000 assets, analysed): a pack's
    /// page is a range of the listing index, a search of three characters or more a search of the trigram index, and
    /// none reads a whole membership or asset table.
    @Test func postgresListingQueriesUseIndexesNotScans() throws {
        let catalog = try #require(try CatalogBackendKind.postgres.makeCatalog() as? PostgresCatalog)
        for pack in ["alpha", "beta", "gamma"] {
            let assets = (0..<2000).map { n in
                AssetSpec(
                    kind: n % 3 == 0 ? .texture : .token, name: "folder-\(n % 10)/\(pack)-creature-\(n)",
                    pictures: [PictureSpec(scale: 1, width: 64, height: 64, size: 100, label: "\(pack)-\(n)")])
            }
            _ = try catalog.record(CommitFixture(pack: pack, assets: assets).commit)
        }
        // What autovacuum does after a large import: the trigram index's pending rows merged, the statistics taken.
        try catalog.write("analyze") { tx in
            try tx.query(#"SELECT gin_clean_pending_list('"packVersionAssetSearch"'::regclass)"#)
            try tx.query("ANALYZE")
        }
        let cursor = AssetCursor(pack: "beta", kind: "token", name: "folder-5/beta-creature-1000", digest: fakeDigest("x"))
        let plans = try catalog.read("explain") { tx -> [String: String] in
            func plan(_ statement: PostgresQuery) throws -> String {
                var statement = statement
                statement.sql = "EXPLAIN " + statement.sql
                return try tx.values(statement, as: String.self).joined(separator: "\n")
            }
            let packs = try PostgresCatalog.listedPacks(AssetQuery(after: cursor), tx)
            let version = packs.first { $0.isCursorPack }?.versionId ?? 0
            var page = PostgresQuery(unsafeSQL: "")
            let pageConditions = #"pva."packVersionId" = \#(page.bind(version)) AND (pva.kind, pva.name, pva."assetDigest") > "#
                + "(\(page.bind(cursor.kind)), \(page.bind(cursor.name)), \(page.bind(cursor.digest.description)))"
            page.sql = PostgresCatalog.pageSQL(pageConditions, limit: page.bind(11), offset: page.bind(0))
            var kindPage = PostgresQuery(unsafeSQL: "")
            let kindConditions = #"pva."packVersionId" = \#(kindPage.bind(version)) AND pva.kind = \#(kindPage.bind("token")) AND "#
                + #"(pva.name, pva."assetDigest") > (\#(kindPage.bind(cursor.name)), \#(kindPage.bind(cursor.digest.description)))"#
            kindPage.sql = PostgresCatalog.pageSQL(kindConditions, limit: kindPage.bind(11), offset: kindPage.bind(0))
            var search = PostgresQuery(unsafeSQL: "")
            let conditions = PostgresCatalog.matchConditions(AssetQuery(text: "beta-creature-1234"), packs: packs, &search) ?? []
            search.sql = PostgresCatalog.searchSQL(
                conditions.joined(separator: " AND "), after: "true", limit: search.bind(11), offset: search.bind(0))
            return ["page": try plan(page), "kindPage": try plan(kindPage), "search": try plan(search)]
        }
        for name in ["page", "kindPage"] {
            let plan = try #require(plans[name])
            #expect(plan.contains("packVersionAsset_listing"), "\(name): \(plan)")
            #expect(plan.contains("asset_pkey"), "only the page's rows are joined to their assets: \(plan)")
        }
        let search = try #require(plans["search"])
        #expect(search.contains("Bitmap Index Scan on \"packVersionAssetSearch\""), "\(search)")
        for (name, plan) in plans {
            for table in [#""packVersionAsset""#, "asset", "variant", "blob"] {
                #expect(!plan.contains("Seq Scan on \(table) "), "\(name) scans \(table): \(plan)")
            }
        }
    }

    @Test func theMigrationFillsListingColumnsCountsAndSearchForAnExistingCatalog() throws {
        let queue = try DatabaseQueue()
        try SQLiteCatalog.migrator.migrate(queue, upTo: "v5-renditions")
        let assets = goblinAssets()
        // What v5 wrote: a version's membership rows without kind and name.
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO "group" (name, createdAt) VALUES ('dragons', '2026-01-01 00:00:00.000');
                INSERT INTO pack (name, groupId, isPublic, currentVersionId, createdAt) VALUES ('goblins', 1, 0, 1, '2026-01-01 00:00:00.000');
                """)
            for (index, asset) in assets.enumerated() {
                let digest = fakeDigest("asset\(index)")
                try db.execute(sql: "INSERT INTO blob VALUES (?, 1, 'application/vnd.hoard.asset+json', '2026-01-01 00:00:00.000')", arguments: [digest])
                try db.execute(sql: "INSERT INTO asset VALUES (?, ?, ?, 1, 1)", arguments: [digest, asset.kind.rawValue, asset.name])
            }
            try db.execute(sql: """
                INSERT INTO blob VALUES ('\(fakeDigest("m"))', 1, 'application/vnd.hoard.pack+json', '2026-01-01 00:00:00.000');
                INSERT INTO packVersion (packId, version, manifestDigest, assetCount, totalBytes, importedAt)
                    VALUES (1, '1', '\(fakeDigest("m"))', \(assets.count), 0, '2026-01-01 00:00:00.000');
                INSERT INTO packVersionAsset (packVersionId, assetDigest) SELECT 1, digest FROM asset;
                """)
        }
        try SQLiteCatalog.migrator.migrate(queue)
        let catalog = try SQLiteCatalog(writer: queue)
        #expect(try Self.walk(catalog, AssetQuery(limit: 1)) == (try catalog.assets()))
        #expect(try catalog.assetPage(AssetQuery()).total == assets.count)
        let name = try #require(assets.first?.name)
        #expect(try catalog.assetPage(AssetQuery(text: name.uppercased())).assets.map(\.name).contains(name))
        // v10 rebuilt the pack table: its rows, ids and access-log triggers are as they were.
        #expect(try catalog.packState(named: "goblins")?.versions == ["1"])
        let before = try catalog.lastAccessChange()
        #expect(try catalog.setPublic(true, pack: "goblins"))
        #expect(try catalog.lastAccessChange() > before)
    }
}
