import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// GET /v1/assets (search, paging) and GET /v1/assets/{digest} (descriptors).
@Suite struct AssetTests {
    @Test func listingPagesThroughEveryVisibleAssetOnce() async throws {
        try await Fixture.with { fixture in
            let all = try fixture.assets(Fixture.dungeon) + fixture.assets(Fixture.scifi)
            #expect(all.count > 7)
            try await fixture.run { client in
                var seen: [Digest] = []
                var offset: Int? = 0
                var pages = 0
                while let next = offset, pages < 100 {
                    let response = try await client.execute(uri: "/v1/assets?offset=\(next)&limit=7", method: .get, headers: auth(fixture.admin))
                    #expect(response.status == .ok)
                    let page = try response.decode(AssetPage.self)
                    #expect(page.total == all.count)
                    #expect(page.assets.count == min(7, all.count - next))
                    seen += page.assets.map(\.digest)
                    offset = page.nextOffset
                    if let following = page.nextOffset { #expect(following == next + 7) }
                    pages += 1
                }
                #expect(seen == all.map(\.digest), "pages follow the catalog's order (pack, kind, name) without gaps or repeats")
                try await client.execute(uri: "/v1/assets?offset=\(all.count + 5)", method: .get, headers: auth(fixture.admin)) { response in
                    let page = try response.decode(AssetPage.self)
                    #expect(page.assets.isEmpty)
                    #expect(page.total == all.count)
                    #expect(page.nextOffset == nil)
                }
            }
        }
    }

    @Test func cursorPagesGiveTheSameAssetsAsOffsetPages() async throws {
        try await Fixture.with { fixture in
            let all = try fixture.assets(Fixture.dungeon) + fixture.assets(Fixture.scifi)
            try await fixture.run { client in
                var seen: [Digest] = []
                var cursor: String?
                for _ in 0..<100 {
                    let query = cursor.map { "cursor=\($0)&" } ?? ""
                    let response = try await client.execute(uri: "/v1/assets?\(query)limit=5", method: .get, headers: auth(fixture.admin))
                    #expect(response.status == .ok)
                    let page = try response.decode(AssetPage.self)
                    #expect(page.total == all.count)
                    if cursor != nil { #expect(page.nextOffset == nil, "a cursor page does not know its offset") }
                    seen += page.assets.map(\.digest)
                    guard let next = page.nextCursor else { break }
                    cursor = next
                }
                #expect(seen == all.map(\.digest))
                for query in ["cursor=nonsense", "cursor=\(cursor ?? "")&offset=3"] {
                    try await client.execute(uri: "/v1/assets?\(query)", method: .get, headers: auth(fixture.admin)) { response in
                        response.expectError(.badRequest, "BAD_REQUEST")
                    }
                }
            }
        }
    }

    @Test func aSearchWithControlCharactersIsASearch() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                // Found by schemathesis: a NUL in q broke the full-text query (507).
                for q in ["%00%7D%C2%B8%16%7F%08", "floor%00", "%01"] {
                    let response = try await client.execute(uri: "/v1/assets?q=\(q)", method: .get, headers: auth(fixture.red))
                    #expect(response.status == .ok, "q=\(q): \(response.status)")
                }
            }
        }
    }

    @Test func searchPagesWithCursors() async throws {
        try await Fixture.with { fixture in
            let folder = "floor"
            let expected = try fixture.assets(Fixture.dungeon).filter { $0.name.lowercased().contains(folder) }
            #expect(expected.count > 1)
            try await fixture.run { client in
                var seen: [Digest] = []
                var cursor: String?
                for _ in 0..<100 {
                    let query = cursor.map { "&cursor=\($0)" } ?? ""
                    let response = try await client.execute(
                        uri: "/v1/assets?q=\(folder.uppercased())&limit=1\(query)", method: .get, headers: auth(fixture.red))
                    let page = try response.decode(AssetPage.self)
                    #expect(page.total == expected.count)
                    seen += page.assets.map(\.digest)
                    guard let next = page.nextCursor else { break }
                    cursor = next
                }
                #expect(seen == expected.map(\.digest))
            }
        }
    }

    @Test func listingFiltersByPackKindAndNameText() async throws {
        try await Fixture.with { fixture in
            let tokens = try fixture.hoard.catalog.assets(pack: Fixture.dungeon, kind: .token)
            #expect(tokens.count > 1)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/assets?pack=\(Fixture.dungeon)&kind=token", method: .get, headers: auth(fixture.red)) { response in
                    let page = try response.decode(AssetPage.self)
                    #expect(page.assets == tokens)
                    #expect(page.total == tokens.count)
                    #expect(page.nextOffset == nil)
                }
                try await client.execute(uri: "/v1/assets?q=GOBLIN", method: .get, headers: auth(fixture.red)) { response in
                    let page = try response.decode(AssetPage.self)
                    #expect(page.total == 1)
                    #expect(page.assets.first?.name.lowercased().contains("goblin") == true)
                }
                try await client.execute(uri: "/v1/assets?kind=background", method: .get, headers: auth(fixture.admin)) { response in
                    let page = try response.decode(AssetPage.self)
                    #expect(page.total >= 2)
                    #expect(page.assets.allSatisfy { $0.kind == .background })
                }
                try await client.execute(uri: "/v1/assets?pack=\(Fixture.scifi)", method: .get, headers: auth(fixture.red)) { response throws in
                    #expect(try response.decode(AssetPage.self).total == 0, "another group's private pack lists nothing")
                }
            }
        }
    }

    @Test func listingShowsAnonymousCallersPublicPacksOnly() async throws {
        try await Fixture.with { fixture in
            try fixture.hoard.catalog.setPublic(true, pack: Fixture.scifi)
            let scifi = try fixture.assets(Fixture.scifi)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/assets?limit=1000", method: .get) { response throws in
                    #expect(try response.decode(AssetPage.self).assets == scifi)
                }
                try await client.execute(uri: "/v1/assets?limit=1000", method: .get, headers: auth(fixture.red)) { response throws in
                    #expect(try response.decode(AssetPage.self).total == scifi.count + fixture.assets(Fixture.dungeon).count)
                }
            }
        }
    }

    @Test func badPagingParametersAre400BadRequest() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                for query in ["offset=-1", "offset=abc", "limit=0", "limit=1001", "limit=ten", "limit=", "offset=1.5"] {
                    try await client.execute(uri: "/v1/assets?\(query)", method: .get) { response in
                        response.expectError(.badRequest, "BAD_REQUEST")
                    }
                }
            }
        }
    }

    @Test func descriptorIsTheExactJSONItsDigestNames() async throws {
        try await Fixture.with { fixture in
            let asset = try #require(try fixture.assets(Fixture.dungeon).first { $0.variants.count > 1 })
            try await fixture.run { client in
                try await client.execute(uri: "/v1/assets/\(asset.digest)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                    #expect(response.headers[.eTag] == "\"\(asset.digest)\"")
                    #expect(digest(of: response.bytes) == asset.digest)
                    let descriptor = try response.decode(AssetDescriptor.self)
                    #expect(descriptor.schema == AssetDescriptor.schemaID)
                    #expect(descriptor.name == asset.name)
                    #expect(descriptor.kind == asset.kind)
                    #expect(descriptor.variants.map(\.digest) == asset.variants.map(\.digest))
                }
            }
        }
    }

    @Test func descriptorOfAPictureOrAnInvisibleAssetIs404() async throws {
        try await Fixture.with { fixture in
            let picture = try await fixture.picture(in: Fixture.dungeon).digest
            let foreign = try #require(try fixture.assets(Fixture.scifi).first).digest
            try await fixture.run { client in
                try await client.execute(uri: "/v1/assets/\(picture)", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/assets/\(foreign)", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/assets/\(foreign)", method: .get, headers: auth(fixture.blue)) { response in
                    #expect(response.status == .ok)
                }
            }
        }
    }
}
