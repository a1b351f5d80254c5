import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// `/v1/shares` and `/s/{id}`: unguessable, revocable links to one picture.
@Suite struct ShareTests {
    @Test func aShareLinkShowsThePictureToAnyoneUntilItIsRevoked() async throws {
        try await Fixture.with(packs: false) { fixture in
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let digest = try #require(try await client.uploadPicture(picture, token: fixture.red).json["digest"] as? String)
                let created = try await client.json(.post, "/v1/shares", token: fixture.red, body: ["blob": digest, "name": "<b>my dragon</b>"])
                #expect(created.status == .created)
                let id = try #require(created.json["id"] as? String)
                #expect(id.wholeMatch(of: try Regex("[a-z2-7]{26}")) != nil)
                #expect(created.json["url"] as? String == "/s/\(id)")
                let shown = try await client.execute(uri: "/v1/shares/\(id)", method: .get) { response in
                    #expect(response.status == .ok)
                    return response.text
                }
                #expect(!shown.contains(digest.dropFirst(7)), "the share names the private digest")
                #expect(shown.contains("<b>my dragon</b>"))
                #expect(try await client.fetch("/v1/shares/\(id)/picture", token: nil) == (HTTPResponse.Status.ok, picture))
                try await client.execute(uri: "/s/\(id)", method: .get) { #expect($0.headers[.contentType] == "text/html; charset=utf-8") }
                try await client.execute(uri: "/v1/shares/\(id)", method: .delete, headers: auth(fixture.blue)) { $0.expectError(.forbidden, "FORBIDDEN") }
                try await client.execute(uri: "/v1/shares/\(id)", method: .delete, headers: auth(fixture.red)) { #expect($0.status == .noContent) }
                #expect(try await client.fetch("/v1/shares/\(id)", token: nil).status == .notFound)
                #expect(try await client.fetch("/v1/shares/\(id)/picture", token: nil).status == .notFound)
            }
        }
    }

    @Test func sharingAnAssetShowsItsLargestVariantUnderItsName() async throws {
        try await Fixture.with { fixture in
            let asset = try #require(try fixture.assets(Fixture.dungeon).max { $0.variants.count < $1.variants.count })
            let largest = try #require(asset.variants.last)
            let bytes = try #require(try await fixture.hoard.store.read(largest.digest, range: nil))
            try await fixture.run { client in
                let created = try await client.json(.post, "/v1/shares", token: fixture.red, body: ["asset": asset.digest.description])
                #expect(created.status == .created)
                #expect(created.json["name"] as? String == asset.name)
                #expect(created.json["kind"] as? String == "asset")
                let id = try #require(created.json["id"] as? String)
                #expect(try await client.fetch("/v1/shares/\(id)/picture", token: nil) == (HTTPResponse.Status.ok, bytes))
                let listed = try await client.json(.get, "/v1/shares", token: fixture.red)
                #expect((listed.json["shares"] as? [[String: Any]])?.count == 1)
            }
        }
    }

    @Test func aMemberCannotShareWhatTheyCannotRead() async throws {
        try await Fixture.with { fixture in
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let digest = try #require(try await client.uploadPicture(picture, token: fixture.red).json["digest"] as? String)
                #expect(try await client.json(.post, "/v1/shares", token: fixture.blue, body: ["blob": digest]).status == .notFound)
                #expect(try await client.json(.post, "/v1/shares", token: fixture.red, body: ["asset": try fixture.assetDigest(Fixture.scifi)]).status == .notFound)
                #expect(try await client.json(.post, "/v1/shares", token: fixture.red, body: ["blob": digest, "asset": digest]).status == .badRequest)
                #expect(try await client.json(.post, "/v1/shares", body: ["blob": digest]).status == .unauthorized)
            }
        }
    }
}
