import Foundation
import HoardCore
import Testing

@testable import HoardClient

/// Creating, joining and syncing game sessions end to end against the real server.
@Suite(.timeLimit(.minutes(2))) struct SessionTests {
    /// A map that places two pack assets and one custom picture that only the host has locally.
    static func map(assets: [Digest], picture: Digest) -> JSONValue {
        .object([
            "grid": .object(["width": .number(20), "height": .number(15)]),
            "background": .string(picture.description),
            "tokens": .array(assets.enumerated().map { index, digest in
                .object(["id": .string("t\(index)"), "art": .string(digest.description), "x": .number(Double(index)), "y": .number(2)])
            }),
        ])
    }

    @Test func creatingASessionUploadsExactlyWhatTheServerLacksThenRetries() async throws {
        try await ServerFixture.with { fixture in
            try await withCache { local in
                let custom = [randomData(3_000), randomData(90_000)]
                for bytes in custom { try local.insert(bytes, as: digest(of: bytes)) }
                let onServer = try await fixture.upload(sizes: [500])[0]
                let map: JSONValue = .object([
                    "a": .string(digest(of: custom[0]).description),
                    "nested": .array([.object(["b": .string(digest(of: custom[1]).description)]), .string(onServer.digest.description)]),
                ])
                let log = RequestLog()
                let created = try await fixture.client(log: log).createSession(name: "Crypt", map: map, localBlobs: local)
                #expect(Set(created.uploaded) == Set(custom.map { digest(of: $0) }))
                #expect(created.name == "Crypt")
                #expect(created.code.count == 9)
                #expect(log.all.map { "\($0.method) \($0.path)" } == [
                    "POST /v1/sessions", "PUT /v1/blobs/\(created.uploaded[0])", "PUT /v1/blobs/\(created.uploaded[1])", "POST /v1/sessions",
                ])
                for bytes in custom { #expect(try await fixture.hoard.store.info(digest(of: bytes)) != nil) }
            }
        }
    }

    @Test func creatingASessionWithoutTheMissingBlobsNamesThemAndUploadsNothing() async throws {
        try await ServerFixture.with { fixture in
            try await withCache { local in
                let have = randomData(100)
                try local.insert(have, as: digest(of: have))
                let lost = digest(of: Data("lost".utf8))
                let map: JSONValue = .array([.string(digest(of: have).description), .string(lost.description)])
                let log = RequestLog()
                await #expect {
                    _ = try await fixture.client(log: log).createSession(name: "Crypt", map: map, localBlobs: local)
                } throws: { error in
                    let error = try #require(error as? HoardClientError)
                    return error.code == .missingBlobs && error.digests == [lost] && error.status == 409
                }
                #expect(log.all.map(\.method) == ["POST"])
            }
        }
    }

    @Test func aJoinIsTriedAgainWhenTheNetworkFailsButNotWhenTheServerSaysNo() async throws {
        let sent = Locked(0)
        var configuration = HoardClient.Configuration()
        configuration.attempts = 3
        configuration.onRequest = { _ in sent.withLock { $0 += 1 } }
        // Nothing listens on port 9: every try fails to connect.
        let unreachable = HoardClient(baseURL: URL(string: "http://127.0.0.1:9")!, configuration: configuration)
        await #expect { try await unreachable.join(code: "ABCD-EFGH", name: "p") } throws: { ($0 as? HoardClientError)?.code == .network }
        #expect(sent.current == 3)
        // A server's refusal is an answer: sent once.
        try await ServerFixture.with { [configuration] fixture in
            let client = HoardClient(baseURL: fixture.baseURL, configuration: configuration)
            await #expect { try await client.join(code: "ZZZZ-ZZZZ", name: "p") } throws: { ($0 as? HoardClientError)?.code == .server }
        }
        #expect(sent.current == 4)
    }

    @Test func joiningWithAnUnknownCodeSaysSo() async throws {
        try await ServerFixture.with { fixture in
            await #expect {
                _ = try await HoardClient(baseURL: fixture.baseURL).join(code: "ZZZZ-ZZZZ", name: "Ann")
            } throws: { error in
                let error = try #require(error as? HoardClientError)
                return error.status == 404 && error.serverCode == "UNKNOWN_CODE" && error.code == .server
            }
        }
    }

    @Test func aPlayerJoinsSyncsTheMapsArtAndAWarmJoinFetchesNothing() async throws {
        try await ServerFixture.with { fixture in
            try await fixture.importPack("dungeon-basics")
            let packAssets = try fixture.hoard.catalog.assets(pack: "dungeon-basics")
            let chosen = Array(packAssets.filter { $0.variants.count > 1 }.prefix(3))
            try #require(chosen.count >= 2, "the sample pack has assets with several variants")
            let picture = try await fixture.upload(sizes: [40_000])[0]
            let host = fixture.client()
            let created = try await host.createSession(
                name: "Crypt", visibility: .private, map: Self.map(assets: chosen.map(\.digest), picture: picture.digest))

            try await withCache { cache in
                let joined = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Ann")
                #expect(joined.session.id == created.id)
                #expect(joined.session.mapDigest == created.mapDigest)
                #expect(Set(joined.session.manifest.assets.map(\.digest)) == Set(chosen.map(\.digest)))
                #expect(joined.session.manifest.blobs.map(\.digest) == [picture.digest])
                let summary = try await joined.sync(into: cache)
                let variants = chosen.flatMap(\.variants)
                #expect(summary.assets == chosen.count)
                #expect(summary.blobsFetched == Set(variants.map(\.digest)).count + 1)
                for variant in variants {
                    let bytes = try #require(try cache.read(variant.digest))
                    #expect(Int64(bytes.count) == variant.size)
                }
                #expect(try cache.read(picture.digest) == picture.bytes)

                // Another device with the same cache: join and session only, not one blob request.
                let log = RequestLog()
                var configuration = HoardClient.Configuration()
                configuration.onRequest = { log.record($0) }
                let player = HoardClient(baseURL: fixture.baseURL, configuration: configuration)
                let again = try await player.join(code: created.code, name: "Ann's tablet")
                let warm = try await again.sync(into: cache)
                #expect(warm.requests == 0)
                #expect(player.requestCount <= 3)
                #expect(log.all.map { "\($0.method) \($0.path)" } == ["POST /v1/sessions/join", "GET /v1/sessions/\(created.id)"])
            }
        }
    }

    @Test func aParticipantTokenReadsItsSessionButCannotCreateOne() async throws {
        try await ServerFixture.with { fixture in
            let picture = try await fixture.upload(sizes: [100])[0]
            let created = try await fixture.client().createSession(name: "Crypt", map: .array([.string(picture.digest.description)]))
            let joined = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code.lowercased(), name: "Bo")
            #expect(try await joined.client.session(id: created.id).name == "Crypt")
            await #expect {
                _ = try await joined.client.createSession(name: "Mine", map: .null)
            } throws: { error in (error as? HoardClientError)?.status == 403 }
        }
    }
}
