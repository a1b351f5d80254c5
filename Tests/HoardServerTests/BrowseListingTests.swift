import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
@testable import HoardServer
@testable import HoardRepository
import HummingbirdTesting
import NIOCore
import Testing

/// What the web page's browse and upload views ask of the server: a footprint filter with counts by kind and
/// footprint, packs named from the uploaded file, import progress. (Listings naming generated thumbnails need
/// libvips' generator, which the `hoard` binary registers: Tests/browser/test_web.py checks them.)
@Suite struct BrowseListingTests {
    struct Page: Decodable {
        var assets: [AssetListing]
        var total: Int
        var facets: AssetFacets?
    }

    @Test func footprintFiltersAndFacetsCountWhatEachChoiceWouldGive() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                let all = try await client.execute(uri: "/v1/assets?pack=\(Fixture.dungeon)&facets=true&limit=1000", method: .get,
                                                   headers: auth(fixture.red)).decode(Page.self)
                let facets = try #require(all.facets)
                #expect(facets.kind.values.reduce(0, +) == all.total)
                #expect(facets.footprint.values.reduce(0, +) == all.total)
                #expect(facets.footprint.count > 1, "the sample pack has several footprints")
                for (key, count) in facets.footprint {
                    let page = try await client.execute(uri: "/v1/assets?pack=\(Fixture.dungeon)&footprint=\(key)&limit=1000", method: .get,
                                                        headers: auth(fixture.red)).decode(Page.self)
                    #expect(page.total == count && page.assets.count == count, "footprint \(key)")
                    #expect(page.assets.allSatisfy { "\($0.footprint.width)x\($0.footprint.height)" == key })
                }
                // With a kind chosen, the kind counts still show every kind; the footprint counts are the kind's.
                let tokens = try await client.execute(uri: "/v1/assets?pack=\(Fixture.dungeon)&kind=token&facets=true", method: .get,
                                                      headers: auth(fixture.red)).decode(Page.self)
                #expect(tokens.facets?.kind == facets.kind)
                #expect(tokens.facets?.footprint.values.reduce(0, +) == tokens.total)
                // A search and a footprint together.
                let searched = try await client.execute(uri: "/v1/assets?q=drag&footprint=4x4&facets=true", method: .get,
                                                        headers: auth(fixture.red)).decode(Page.self)
                #expect(searched.total >= 1 && searched.assets.allSatisfy { $0.name.lowercased().contains("drag") })
                #expect(searched.facets?.footprint["4x4"] == searched.total)
                for query in ["footprint=2by2", "footprint=0x1", "footprint=x", "footprint=1x1x1", "facets=maybe"] {
                    try await client.execute(uri: "/v1/assets?\(query)", method: .get, headers: auth(fixture.red)) { response in
                        response.expectError(.badRequest, "BAD_REQUEST")
                    }
                }
            }
        }
    }

    /// A zip at `path` of the same green `side`×`side` PNG (`side`×`height` when given) at each of `pictures`, with
    /// `packJSON` as its pack.json if given.
    func writeZip(at path: String, side: Int, height: Int? = nil, pictures: [String], packJSON: String? = nil) throws {
        try Python.run(
            """
            import struct, sys, zipfile, zlib
            def chunk(k, d): return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
            side, height = (int(v) for v in sys.argv[2].split("x"))
            raw = b"".join(b"\\x00" + bytes([20, 150, 50, 255]) * side for _ in range(height))
            png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, height, 8, 6, 0, 0, 0))
                   + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                if sys.argv[3]: z.writestr("pack.json", sys.argv[3])
                for name in sys.argv[4:]: z.writestr(name, png)
            """, [path, "\(side)x\(height ?? side)", packJSON ?? ""] + pictures)
    }

    /// A pack whose pack.json says hex: its 72 × 62 hexes import without "smaller than the footprint" warnings, its
    /// manifest says its grid, its listing carries it, and the listing's grid filter keeps it or leaves it out.
    @Test func aHexPackSaysItsGridInItsManifestAndListingAndTheListingFiltersByIt() async throws {
        try await Fixture.with { fixture in
            let path = temporaryFile()
            defer { try? FileManager.default.removeItem(atPath: path) }
            let packJSON = #"{"name": "hexlands", "tilePixels": 72, "grid": {"type": "hex", "orientation": "flat"}}"#
            try writeZip(at: path, side: 72, height: 62, pictures: ["textures/grass.png", "textures/dirt.png"], packJSON: packJSON)
            let archive = try ByteBuffer(bytes: Array(Data(contentsOf: URL(fileURLWithPath: path))))
            try await fixture.run { client in
                let imported = try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: archive)
                #expect(imported.status == .created)
                let report = try imported.decode(ImportReport.self)
                #expect(!report.warnings.contains { $0.code == .footprintMismatch }, "\(report.warnings)")
                let summary = try #require(try fixture.hoard.catalog.packs().first { $0.name == "hexlands" })
                let manifestDigest = try #require(summary.manifestDigest)
                let bytes = try #require(try await fixture.hoard.read(manifestDigest))
                let manifest = try JSONDecoder().decode(PackManifest.self, from: Data(bytes))
                #expect(manifest.grid == PackGrid(type: .hex, orientation: .flat))
                func page(_ query: String) async throws -> Page {
                    try await client.execute(uri: "/v1/assets?limit=1000&" + query, method: .get, headers: auth(fixture.red)).decode(Page.self)
                }
                let all = try await page("")
                let hex = try await page("grid=hex")
                let square = try await page("grid=square")
                #expect(hex.total == 2 && hex.assets.allSatisfy { $0.pack == "hexlands" && $0.grid == manifest.grid })
                #expect(square.total == all.total - 2 && square.assets.allSatisfy { $0.pack != "hexlands" && $0.grid == nil })
                #expect(try await page("grid=hex&q=gras").assets.map(\.name) == ["grass"], "search keeps the grid filter and says it")
                #expect(try await page("grid=hex&q=gras").assets.first?.grid == manifest.grid)
                try await client.execute(uri: "/v1/assets?grid=hexagon", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.badRequest, "BAD_REQUEST")
                }
            }
        }
    }

    @Test func anUploadWithoutANameIsNamedFromItsFileAndItsProgressIdEndsWithIt() async throws {
        try await Fixture.with { fixture in
            let path = temporaryFile()
            defer { try? FileManager.default.removeItem(atPath: path) }
            try writeZip(at: path, side: 64, pictures: ["tokens/hero.png"], packJSON: #"{"version": "1.0.0"}"#)
            let archive = try ByteBuffer(bytes: Array(Data(contentsOf: URL(fileURLWithPath: path))))
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: archive) { response in
                    response.expectError(.unprocessableContent, "BAD_MANIFEST")
                }
                let named = try await client.execute(uri: "/v1/packs?fileName=heroes%20of%20old.zip&progress=page-0123456789", method: .post,
                                                     headers: auth(fixture.red), body: archive)
                #expect(named.status == .created)
                #expect(try named.decode(ImportReport.self).pack == "heroes of old")
                try await client.execute(uri: "/v1/imports/page-0123456789", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/packs?progress=no!", method: .post, headers: auth(fixture.red), body: archive) { response in
                    response.expectError(.badRequest, "BAD_REQUEST")
                }
            }
        }
    }

    @Test func theNameThePageIsToldIsTheNameFiledAndAPackAlreadyHereIsNotReplacedUnasked() async throws {
        try await Fixture.with(packs: false) { fixture in
            let path = temporaryFile()
            defer { try? FileManager.default.removeItem(atPath: path) }
            try writeZip(at: path, side: 72, pictures: ["My Monsters/tokens/imp.png", "My Monsters/tokens/orc.png"])
            let archive = try ByteBuffer(bytes: Array(Data(contentsOf: URL(fileURLWithPath: path))))
            let facts: [String: Any] = ["fileName": "mymonsters-v2.zip", "paths": ["My Monsters/tokens/imp.png", "My Monsters/tokens/orc.png"]]
            let body = ByteBuffer(bytes: Array(try JSONSerialization.data(withJSONObject: facts)))
            try await fixture.run { client in
                let told = try await client.execute(
                    uri: "/v1/pack-name", method: .post, headers: auth(fixture.red, [.contentType: "application/json"]), body: body)
                #expect(told.status == .ok)
                let prediction = try told.decode(PackNaming.Prediction.self)
                #expect(prediction == PackNaming.Prediction(name: "My Monsters", source: .wrapperFolder, isSure: true))
                let uri = "/v1/packs?fileName=mymonsters-v2.zip&newPackOnly=true"
                let first = try await client.execute(uri: uri, method: .post, headers: auth(fixture.red), body: archive)
                #expect(first.status == .created)
                let report = try first.decode(ImportReport.self)
                #expect(report.pack == prediction.name)
                #expect(report.warnings.isEmpty, "72 px art without pack.json: \(report.warnings)")
                try await client.execute(uri: uri, method: .post, headers: auth(fixture.red), body: archive) { response in
                    response.expectError(.conflict, "PACK_CONFLICT")
                }
                let asked = try await client.execute(uri: "/v1/packs?fileName=mymonsters-v2.zip", method: .post, headers: auth(fixture.red), body: archive)
                #expect(asked.status == .ok, "once asked, the same archive is sent again and found unchanged")
            }
        }
    }

    @Test func theImportBoardShowsAnImportToItsGroupUntilItEnds() throws {
        let board = ImportBoard()
        let key = try #require(board.start("import-one", groupId: 1, size: 100))
        #expect(board.start("import-one", groupId: 1, size: 5) == nil, "an id in use is not taken over")
        let other = try #require(board.start("import-one", groupId: 2, size: 5), "ids are per group: another group's is its own")
        board.received(key, bytes: 40)
        #expect(board.entry("import-one", groupId: 1, isAdmin: false)?.bytesDone == 40)
        #expect(board.entry("import-one", groupId: 2, isAdmin: false)?.bytesDone == 0, "each group sees its own")
        board.finish(other)
        #expect(board.entry("import-one", groupId: 2, isAdmin: false) == nil, "another group does not see it")
        #expect(board.entry("import-one", groupId: 2, isAdmin: true)?.phase == "receiving")
        board.update(key, ImportProgress(phase: .reading, bytesRead: 70, totalBytes: 100, entries: 12))
        #expect(board.entry("import-one", groupId: 1, isAdmin: false)?.entries == 12)
        board.finish(key)
        #expect(board.entry("import-one", groupId: 1, isAdmin: false) == nil)
        #expect(!ImportBoard.isValid("short") && !ImportBoard.isValid("has space in it") && ImportBoard.isValid("abcdef12-3456"))
    }

    /// The board's slots are per group (issue 43): one group's slow uploads filling its own slots leave another
    /// group's progress followed.
    @Test func oneGroupFillingItsImportSlotsLeavesAnotherGroupsFollowed() throws {
        let board = ImportBoard()
        for index in 0..<ImportBoard.perGroup {
            #expect(board.start("slow-upload-\(index)", groupId: 1, size: 1) != nil)
        }
        #expect(board.start("slow-upload-one-more", groupId: 1, size: 1) == nil, "the group's own slots are full")
        let key = try #require(board.start("another-group", groupId: 2, size: 10))
        board.received(key, bytes: 4)
        #expect(board.entry("another-group", groupId: 2, isAdmin: false)?.bytesDone == 4)
    }

    /// Cancel, asked while the archive arrives: the upload is answered 409 IMPORT_CANCELLED and nothing is stored.
    @Test func anUploadCancelledWhileItArrivesStoresNothing() async throws {
        try await Fixture.with(packs: false) { fixture in
            let archive = Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon))))
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                #expect(try await client.json(.delete, "/v1/imports/no-such-import", token: fixture.red).status == .notFound)
                let socket = try await RawSocket.connect(port: port)
                defer { socket.close() }
                let half = archive.count / 2
                try await socket.send(Array((
                    "POST /v1/packs?progress=cancel-me-1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(fixture.red)\r\n"
                    + "Content-Type: application/zip\r\nContent-Length: \(archive.count)\r\n\r\n").utf8) + archive[..<half])
                let receiving = await Fixture.eventually {
                    (try? await client.json(.get, "/v1/imports/cancel-me-1", token: fixture.red).json["bytesDone"] as? Int) == half
                }
                #expect(receiving, "the board follows the upload")
                #expect(try await client.json(.delete, "/v1/imports/cancel-me-1", token: fixture.blue).status == .notFound, "not blue's")
                #expect(try await client.json(.delete, "/v1/imports/cancel-me-1", token: fixture.red).status == .accepted)
                try await socket.send(Array(archive[half...]))
                let (head, rest) = try await socket.receiveHeadAndRest()
                #expect(head.hasPrefix("HTTP/1.1 409"), "\(head)")
                let body = String(decoding: rest, as: UTF8.self)
                #expect(body.contains("IMPORT_CANCELLED"), "\(body)")
                #expect(try fixture.hoard.catalog.packs().isEmpty)
                #expect(fixture.leftovers().isEmpty)
            }
        }
    }
}
