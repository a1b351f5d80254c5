import Foundation
import HoardCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import HoardClient

/// Creating, joining and syncing game sessions end to end against the real server.
@Suite(.timeLimit(.minutes(2))) struct SessionTests {
    /// A map that places two pack assets and one custom picture that only the host has locally.
    static func map(assets: [Digest], picture: Digest) -> JSONValue {
        .object([
            "grid": .object(["width": .number(20), "height": .number(15)]),
            "background": .object(["texture": .string(picture.description)]),
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
                // The manifest names each asset's generated preview: the join draws it first, then the @1x variant.
                let manifestAssets = joined.session.manifest.assets
                #expect(manifestAssets.allSatisfy { $0.preview != nil && $0.firstPicture?.isPreview == true })
                let summary = try await joined.sync(into: cache)
                let wanted = manifestAssets.flatMap { [$0.firstPicture!, $0.picture(forPixelsPerTile: nil)!] }
                #expect(summary.assets == chosen.count)
                #expect(summary.blobsFetched == Set(wanted.map(\.digest)).count + 1)
                #expect(summary.firstRenderBytes == manifestAssets.reduce(0) { $0 + $1.preview!.size }, "the previews and nothing else")
                for picture in wanted {
                    let bytes = try #require(try cache.read(picture.digest))
                    #expect(Int64(bytes.count) == picture.size)
                }
                let sharper = manifestAssets.flatMap { asset in asset.variants.filter { $0.scale > 1 } }
                #expect(!sharper.isEmpty && !sharper.contains { cache.contains($0.digest) }, "sharper variants wait for a zoom")
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

    @Test func aWarmJoinTakesTheMapAndManifestFromTheCacheUntilTheMapChanges() async throws {
        try await ServerFixture.with { fixture in
            try await fixture.importPack("dungeon-basics")
            let packAssets = try fixture.hoard.catalog.assets(pack: "dungeon-basics")
            let chosen = Array(packAssets.filter { $0.variants.count > 1 }.prefix(2) + packAssets.filter { $0.variants.count == 1 }.prefix(2))
            let picture = try await fixture.upload(sizes: [2_000])[0]
            let map = Self.map(assets: chosen.map(\.digest), picture: picture.digest)
            let created = try await fixture.client().createSession(name: "Crypt", map: map)

            try await withCache { cache in
                let cold = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Ann", cache: cache)
                #expect(cold.snapshot == nil)
                _ = try await cold.sync(into: cache)
                #expect(FileManager.default.fileExists(atPath: cache.snapshotPath(of: created.mapDigest)))
                #expect(cache.contains(created.mapDigest), "the map is kept as a blob of the cache")

                // Warm: the server leaves the map and manifest out; they are read from the cache only when asked for.
                let log = RequestLog()
                let player = fixture.client(log: log)
                let warm = try await player.authenticated(with: nil).join(code: created.code, name: "Bo", cache: cache)
                #expect(log.all.map { "\($0.method) \($0.path) \($0.query ?? "")" } == [
                    "POST /v1/sessions/join ", "GET /v1/sessions/\(created.id) known=\(created.mapDigest)",
                ])
                #expect(warm.snapshot != nil && warm.received == nil)
                let summary = try await warm.sync(into: cache)
                #expect(summary.requests == 0 && summary.blobsFetched == 0)
                let drawn = cold.session.manifest.assets.flatMap { [$0.firstPicture!.digest, $0.picture(forPixelsPerTile: nil)!.digest] }
                #expect(summary.assets == chosen.count && summary.blobs == Set(drawn).count + 1)
                #expect(log.all.count == 2)
                #expect(warm.session.map == cold.session.map, "the map as stored (its floor in the palette form)")
                #expect(warm.session.manifest == cold.session.manifest)

                // A blob gone from the cache: the sync reads the cached manifest and fetches just that one.
                let lost = try #require(chosen.first?.variants.first?.digest)
                try cache.remove(lost)
                let patched = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Cy", cache: cache)
                let refetch = try await patched.sync(into: cache)
                #expect(refetch.blobsFetched == 1 && cache.contains(lost))

                // A join at another resolution is not warm: it reads the cached manifest and fetches the sharper art.
                let sharp = fixture.client { $0.pixelsPerTile = 1_000 }.authenticated(with: nil)
                let zoomed = try await sharp.join(code: created.code, name: "Flo", cache: cache).sync(into: cache)
                let sharpest = Set(cold.session.manifest.assets.map { $0.pictures.last!.digest }).subtracting(drawn)
                #expect(!sharpest.isEmpty)
                #expect(zoomed.blobsFetched == sharpest.count && sharpest.allSatisfy(cache.contains))

                // A damaged snapshot is ignored: the session comes whole from the server.
                let path = cache.snapshotPath(of: created.mapDigest)
                var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                bytes[bytes.count - 2] ^= 0x20
                try bytes.write(to: URL(fileURLWithPath: path))
                let damaged = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Di", cache: cache)
                #expect(damaged.snapshot == nil && damaged.received != nil)
                #expect(damaged.session.manifest == cold.session.manifest)

                // The host changes the map: the next join gets the new one whole, whatever the cache holds.
                let newMap: JSONValue = .array([.string(picture.digest.description)])
                var request = URLRequest(url: fixture.baseURL.appendingPathComponent("v1/sessions/\(created.id)/map"))
                request.httpMethod = "PUT"
                request.setValue("Bearer \(fixture.token)", forHTTPHeaderField: "Authorization")
                request.httpBody = try JSONEncoder().encode(newMap)
                let (_, response) = try await URLSession.shared.data(for: request)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                let changed = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Ed", cache: cache)
                #expect(changed.session.map == newMap && changed.snapshot == nil)
                #expect(changed.session.manifest.blobs.map(\.digest) == [picture.digest] && changed.session.manifest.assets.isEmpty)
            }
        }
    }

    @Test func aSnapshotFileReadsBackAndRefusesDamage() throws {
        let manifest = Data(#"{"assets":[],"blobs":[]}"#.utf8)
        let map = Data("[]".utf8)
        let blobs = [digest(of: Data("a".utf8)), digest(of: Data("b".utf8))]
        let snapshot = SessionSnapshot(mapDigest: digest(of: map), map: map, pixelsPerTile: nil, assets: 7, blobs: blobs, manifest: manifest)
        let encoded = snapshot.encoded()
        let read = try #require(SessionSnapshot(decoding: encoded, mapDigest: snapshot.mapDigest, map: map))
        #expect(read.assets == 7 && read.blobs == blobs && read.manifest == manifest && read.pixelsPerTile == nil)
        var sharp = snapshot
        sharp.pixelsPerTile = 96
        #expect(SessionSnapshot(decoding: sharp.encoded(), mapDigest: snapshot.mapDigest, map: map)?.pixelsPerTile == 96)
        // A slice that does not start at index 0 reads the same.
        let shifted = (Data([0]) + encoded).dropFirst()
        #expect(SessionSnapshot(decoding: shifted, mapDigest: snapshot.mapDigest, map: map)?.blobs == blobs)
        var flipped = encoded
        flipped[flipped.count - 3] ^= 1
        #expect(SessionSnapshot(decoding: flipped, mapDigest: snapshot.mapDigest, map: map) == nil)
        #expect(SessionSnapshot(decoding: encoded.dropLast(), mapDigest: snapshot.mapDigest, map: map) == nil)
        #expect(SessionSnapshot(decoding: Data("hoard-session-snapshot 3\n".utf8) + encoded, mapDigest: snapshot.mapDigest, map: map) == nil)
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
