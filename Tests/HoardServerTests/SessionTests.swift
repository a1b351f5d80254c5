import Foundation
import HTTPTypes
import HoardCore
import HoardRepository
import HoardServer
import HoardStore
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("Game sessions over HTTP")
struct SessionTests {
    @Test func aMapReferencingUnknownBlobsIsRefusedWithTheListThenAcceptedOnceUploaded() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let picture = Array("custom token art".utf8)
        let digest = BlobHasher.digest(of: picture).description
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.router) { client in
            let refused = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Crypt", "map": ["token": digest]])
            #expect(refused.status == .conflict)
            let error = try #require(refused.json["error"] as? [String: Any])
            #expect(error["code"] as? String == "MISSING_BLOBS")
            #expect(error["missing"] as? [String] == [digest])
            let put = try await client.execute(
                uri: "/v1/blobs/\(digest)", method: .put, headers: [.authorization: "Bearer \(fixture.hostToken)"], body: ByteBuffer(bytes: picture)
            ) { $0.status }
            #expect(put == .created)
            let created = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Crypt", "map": ["token": digest]])
            #expect(created.status == .created)
            #expect((created.json["code"] as? String)?.count == 9)
        }
    }

    @Test func aParticipantFetchesExactlyWhatItsSessionReferences() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let tokens = try fixture.assets("token")
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.router) { client in
            let created = try await client.json(
                .post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Crypt", "visibility": "private", "map": ["tokens": [tokens[0]]]])
            let code = try #require(created.json["code"] as? String)
            let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": code.lowercased(), "name": "Ana"])
            #expect(joined.status == .ok)
            let participant = try #require(joined.json["participantToken"] as? String)
            let id = try #require(created.json["id"] as? String)
            let session = try await client.json(.get, "/v1/sessions/\(id)", token: participant)
            #expect(session.status == .ok)
            let mapDigest = try #require(session.json["mapDigest"] as? String)
            #expect(joined.json["mapDigest"] as? String == mapDigest, "the join names the current map")
            // A caller that holds the current map and its manifest gets the session without them; any other
            // `known` (an older map, or not a digest) gets them whole.
            let light = try await client.json(.get, "/v1/sessions/\(id)?known=\(mapDigest)", token: participant)
            #expect(light.status == .ok && light.json["map"] == nil && light.json["manifest"] == nil)
            #expect(light.json["mapDigest"] as? String == mapDigest && light.json["seq"] != nil && light.json["participants"] != nil)
            for known in [tokens[0], "nonsense"] {
                let whole = try await client.json(.get, "/v1/sessions/\(id)?known=\(known)", token: participant)
                #expect(whole.status == .ok && whole.json["map"] != nil && whole.json["manifest"] != nil)
            }
            let manifest = try #require(session.json["manifest"] as? [String: Any])
            let assets = try #require(manifest["assets"] as? [[String: Any]])
            #expect(assets.map { $0["digest"] as? String } == [tokens[0]])
            #expect(["dungeon-basics", "scifi-outpost"].contains(assets.first?["pack"] as? String), "the manifest names the asset's pack")
            #expect((assets.first?["packVersion"] as? String)?.isEmpty == false, "and its version")
            let variants = try #require(assets.first?["variants"] as? [[String: Any]])
            for variant in variants {
                let status = try await client.execute(
                    uri: "/v1/blobs/\(variant["digest"] as? String ?? "")", method: .get, headers: [.authorization: "Bearer \(participant)"]
                ) { $0.status }
                #expect(status == .ok)
            }
            let other = try await client.json(.get, "/v1/assets/\(tokens[1])", token: participant)
            #expect(other.status == .notFound, "an asset the map does not reference stays private")
            let packs = try await client.json(.get, "/v1/sessions", token: participant)
            #expect(packs.status == .forbidden, "a participant token is not a member's")
            let change = try await client.json(.put, "/v1/sessions/\(id)/map", token: participant, body: ["tokens": []])
            #expect(change.status == .notFound || change.status == .forbidden)
        }
    }

    @Test func anUnknownJoinCodeIs404() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.router) { client in
            let response = try await client.json(.post, "/v1/sessions/join", body: ["code": "ZZZZ-ZZZZ", "name": "Bo"])
            #expect(response.status == .notFound)
            #expect((response.json["error"] as? [String: Any])?["code"] as? String == "UNKNOWN_CODE")
        }
    }

    @Test func theLobbyListsGroupSessionsAndHidesOthersPrivateOnes() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let other = try Hoard(dataDirectory: fixture.directory).createToken(group: "table", label: "player", isAdmin: false)
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.router) { client in
            _ = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Open", "map": [:] as [String: Any]])
            _ = try await client.json(
                .post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Secret", "visibility": "private", "map": [:] as [String: Any]])
            let mine = try await client.json(.get, "/v1/sessions", token: fixture.hostToken)
            let theirs = try await client.json(.get, "/v1/sessions", token: other)
            func names(_ json: [String: Any]) -> Set<String> { Set((json["sessions"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }) }
            #expect(names(mine.json) == ["Open", "Secret"])
            #expect(names(theirs.json) == ["Open"])
        }
    }

    @Test func savingAMapNeverOverwritesAndASavedMapStartsASession() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let textures = try fixture.assets("texture")
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.router) { client in
            let map: [String: Any] = ["floor": textures[0]]
            #expect(try await client.json(.post, "/v1/maps", token: fixture.hostToken, body: ["name": "cellar", "map": map]).status == .created)
            let again = try await client.json(.post, "/v1/maps", token: fixture.hostToken, body: ["name": "cellar", "map": ["floor": textures[1]]])
            #expect(again.status == .conflict)
            #expect((again.json["error"] as? [String: Any])?["code"] as? String == "MAP_EXISTS")
            let loaded = try await client.json(.get, "/v1/maps/cellar", token: fixture.hostToken)
            #expect((loaded.json["map"] as? [String: Any])?["floor"] as? String == textures[0])
            let started = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "From save", "fromMap": "cellar"])
            #expect(started.status == .created)
            #expect(try await client.json(.delete, "/v1/maps/cellar", token: fixture.hostToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/maps/cellar", token: fixture.hostToken).status == .notFound)
        }
    }
}
