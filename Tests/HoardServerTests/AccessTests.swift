import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import HoardTestSupport
import HummingbirdTesting
import NIOCore
import Testing

/// Who sees what: groups, public packs, admins, tokens, and the in-memory access index.
@Suite struct AccessTests {
    @Test func packListShowsMembersTheirGroupsAndPublicPacks() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                let cases: [(String?, [String])] = [
                    (nil, []), (fixture.red, [Fixture.dungeon]), (fixture.blue, [Fixture.scifi]), (fixture.admin, [Fixture.dungeon, Fixture.scifi]),
                ]
                for (token, names) in cases {
                    try await client.execute(uri: "/v1/packs", method: .get, headers: auth(token)) { response throws in
                        #expect(response.status == .ok)
                        #expect(try response.decode(PackList.self).packs.map(\.name) == names)
                    }
                }
                try fixture.hoard.catalog.setPublic(true, pack: Fixture.scifi)
                try await client.execute(uri: "/v1/packs", method: .get) { response throws in
                    #expect(try response.decode(PackList.self).packs.map(\.name) == [Fixture.scifi])
                }
                try await client.execute(uri: "/v1/packs", method: .get, headers: auth(fixture.red)) { response throws in
                    #expect(try response.decode(PackList.self).packs.map(\.name) == [Fixture.dungeon, Fixture.scifi])
                }
            }
        }
    }

    @Test func privatePackOfAnotherGroupIs404() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs/\(Fixture.scifi)", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.scifi)", method: .get) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.scifi)", method: .get, headers: auth(fixture.admin)) { response in
                    #expect(response.status == .ok)
                }
            }
        }
    }

    @Test func privateBlobOfAnotherGroupIs404LikeAnAbsentOne() async throws {
        try await Fixture.with { fixture in
            let (foreign, bytes) = try await fixture.picture(in: Fixture.scifi)
            let absent = digest(of: randomBytes(20))
            try await fixture.run { client in
                for method in [HTTPRequest.Method.get, .head] {
                    for token in [fixture.red, nil] {
                        try await client.execute(uri: "/v1/blobs/\(foreign)", method: method, headers: auth(token)) { response in
                            #expect(response.status == .notFound, "\(method) by \(token ?? "anonymous") gave \(response.status.code)")
                        }
                    }
                }
                let hidden = try await client.execute(uri: "/v1/blobs/\(foreign)", method: .get, headers: auth(fixture.red))
                let missing = try await client.execute(uri: "/v1/blobs/\(absent)", method: .get, headers: auth(fixture.red))
                hidden.expectError(.notFound, "NOT_FOUND")
                #expect(
                    hidden.text.replacingOccurrences(of: foreign.description, with: "D")
                        == missing.text.replacingOccurrences(of: absent.description, with: "D"),
                    "a hidden blob must be indistinguishable from an absent one")
                for token in [fixture.blue, fixture.admin] {
                    try await client.execute(uri: "/v1/blobs/\(foreign)", method: .get, headers: auth(token)) { response in
                        #expect(response.status == .ok)
                        #expect(response.bytes == bytes)
                    }
                }
            }
        }
    }

    @Test func publicPackBlobsAreFetchableWithoutAToken() async throws {
        try await Fixture.with { fixture in
            try fixture.hoard.catalog.setPublic(true, pack: Fixture.scifi)
            let (digest, bytes) = try await fixture.picture(in: Fixture.scifi)
            let manifest = try #require(try fixture.pack(Fixture.scifi).manifestDigest)
            try await fixture.run { client in
                for (uri, token) in [("/v1/blobs/\(digest)", nil), ("/v1/blobs/\(digest)", fixture.red), ("/v1/blobs/\(manifest)", nil)] {
                    try await client.execute(uri: uri, method: .get, headers: auth(token)) { response in
                        #expect(response.status == .ok, "\(uri)")
                    }
                }
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get) { response in
                    #expect(response.bytes == bytes)
                }
            }
        }
    }

    @Test func unknownOrMalformedTokensAre401EvenOnPublicRoutes() async throws {
        try await Fixture.with { fixture in
            let headers: [HTTPFields] = [
                auth("hoard_unknown"), auth(fixture.red + "x"), [.authorization: "Basic dXNlcjpwYXNz"], [.authorization: fixture.red],
                [.authorization: "Bearer"], [.authorization: ""],
            ]
            try await fixture.run { client in
                for fields in headers {
                    for uri in ["/v1/packs", "/v1/assets", "/healthz"] {
                        try await client.execute(uri: uri, method: .get, headers: fields) { response in
                            response.expectError(.unauthorized, "UNAUTHORIZED")
                        }
                    }
                }
                try await client.execute(uri: "/v1/packs", method: .get, headers: [.authorization: "bearer \(fixture.red)"]) { response in
                    #expect(response.status == .ok, "the scheme is case-insensitive")
                }
            }
        }
    }

    @Test func accessIndexAppliesAnotherProcesssChangesFromTheChangeLog() async throws {
        try await Fixture.with(packs: false) { fixture in
            let index = try AccessIndex(catalog: fixture.hoard.catalog)
            #expect(try await index.catchUp() == false)
            let other = try Hoard(dataDirectory: fixture.path)
            let report = try await Fixture.importPack(Fixture.scifi, into: "blue", hoard: other)
            let blue = try #require(try other.catalog.group(named: "blue")?.id)
            let member = Principal(groupId: blue, group: "blue", role: .member, member: 1, memberName: "t", tokenName: "t")
            #expect(index.readable(report.manifestDigest, by: member) != nil, "a blob of a pack it has not heard of reads the change log first")
            #expect(try await index.catchUp() == false, "that read applied the change")
            #expect(index.readable(report.manifestDigest, by: nil) == nil)
            #expect(try await index.catchUp() == false)
            try other.catalog.setPublic(true, pack: Fixture.scifi)
            #expect(index.readable(report.manifestDigest, by: nil) == nil, "the cached pack is still private")
            #expect(try await index.catchUp())
            #expect(index.readable(report.manifestDigest, by: nil)?.isPublic == true)
            let token = try other.createToken(group: "blue", label: "late", isAdmin: false)
            try await Task.sleep(for: .milliseconds(150))  // past the interval between two reads of the log on a miss
            #expect(index.principal(forToken: token)?.group == "blue", "a token the index does not hold reads the change log first")
            #expect(try await index.catchUp() == false, "that read applied the change")
            #expect(index.principal(forToken: "hoard_t_not-a-token") == nil)
            #expect(try await index.selfCheck() == 0, "an index that applied every change agrees with the catalog")
        }
    }

    @Test func aCachedBlobGainsTheOwnersOfANewVersionAndIsForgottenByGarbageCollection() async throws {
        try await Fixture.with(packs: false) { fixture in
            let index = try AccessIndex(catalog: fixture.hoard.catalog)
            let report = try await Fixture.importPack(Fixture.dungeon, into: "red", hoard: fixture.hoard)
            #expect(try await index.catchUp())
            let red = try #require(try fixture.hoard.catalog.group(named: "red")?.id)
            let picture = try #require(try fixture.assets(Fixture.dungeon).first?.variants.first?.digest)
            let redMember = Principal(groupId: red, group: "red", role: .member, member: 1, memberName: "t", tokenName: "t")
            #expect(index.readable(picture, by: redMember) != nil)
            #expect(index.cachedBlobCount >= 1)
            // Another process imports the same pictures as a pack of group blue.
            let other = try Hoard(dataDirectory: fixture.path)
            var options = Importer.Options()
            options.group = "blue"
            options.packName = "copy"
            _ = try await other.importPack(at: Fixture.packPath(Fixture.dungeon), options: options)
            let blue = try #require(try other.catalog.group(named: "blue")?.id)
            let blueMember = Principal(groupId: blue, group: "blue", role: .member, member: 1, memberName: "t", tokenName: "t")
            #expect(index.readable(picture, by: blueMember) == nil, "the cached owners are those before the import")
            #expect(try await index.catchUp())
            #expect(index.readable(picture, by: blueMember) != nil)
            // Both packs deleted and collected: the blob is gone for everyone, admins too.
            try other.catalog.deletePack(named: "copy")
            try other.catalog.deletePack(named: Fixture.dungeon)
            _ = try await other.collectGarbage(grace: 0)
            #expect(try await index.catchUp())
            let admin = Principal(groupId: red, group: "red", role: .operator, member: 2, memberName: "a", tokenName: "a")
            #expect(index.readable(picture, by: admin) == nil)
            #expect(index.readable(report.manifestDigest, by: admin) == nil)
        }
    }

    @Test func aChangeLogPrunedPastWhatTheIndexAppliedMakesItRebuild() async throws {
        try await Fixture.with(packs: false) { fixture in
            let index = try AccessIndex(catalog: fixture.hoard.catalog)
            let other = try Hoard(dataDirectory: fixture.path)
            let report = try await Fixture.importPack(Fixture.scifi, into: "blue", hoard: other)
            try other.catalog.setPublic(true, pack: Fixture.scifi)
            let last = try other.catalog.lastAccessChange()
            try other.catalog.pruneAccessChanges(through: last, writtenBefore: Date(timeIntervalSinceNow: 60))
            #expect(try await index.catchUp())
            #expect(index.readable(report.manifestDigest, by: nil)?.isPublic == true)
            #expect(try await index.catchUp() == false)
        }
    }

    @Test func theBlobOwnerCacheStaysWithinItsBound() async throws {
        try await Fixture.with { fixture in
            let index = try AccessIndex(catalog: fixture.hoard.catalog, cacheEntries: 8)
            let digests = try fixture.hoard.catalog.blobs().map(\.digest)
            #expect(digests.count > 16)
            let admin = Principal(groupId: 0, group: "x", role: .operator, member: 2, memberName: "a", tokenName: "a")
            #expect(index.readable(digests, by: admin).allSatisfy { $0 != nil })
            #expect(index.cachedBlobCount <= 8)
            #expect(index.readable(digests, by: admin).allSatisfy { $0 != nil }, "evicted entries are looked up again")
        }
    }

    @Test func runningServerPicksUpPacksAndTokensAddedByAnotherProcess() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                let other = try Hoard(dataDirectory: fixture.path)
                let report = try await Fixture.importPack(Fixture.dungeon, into: "blue", hoard: other)
                let token = try other.createToken(group: "blue", label: "cli", isAdmin: false)
                let seen = try await Fixture.eventually {
                    let response = try await client.execute(uri: "/v1/blobs/\(report.manifestDigest)", method: .get, headers: auth(token))
                    return response.status == .ok
                }
                #expect(seen, "the refresh service did not pick up the new token and pack within 5 seconds")
                try await client.execute(uri: "/v1/blobs/\(report.manifestDigest)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
    }
}

/// Routes outside /v1 and the error shape of unknown routes.
@Suite struct ServiceRouteTests {
    @Test func healthzAnswersOK() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/healthz", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.text.contains("\"status\":\"ok\""))
                }
            }
        }
    }

    @Test func metricsNeedAnAdminTokenOnTheAPIAddress() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/metrics", method: .get) { $0.expectError(.unauthorized, "UNAUTHORIZED") }
                try await client.execute(uri: "/metrics", method: .get, headers: auth(fixture.red)) { $0.expectError(.forbidden, "FORBIDDEN") }
                try await client.execute(uri: "/metrics", method: .get, headers: auth(fixture.admin)) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func metricsAddressServesMetricsThereAloneWithoutAToken() async throws {
        try await Fixture.with { fixture in
            var configured = fixture
            let port = try await freePort()
            configured.configuration.metricsAddress = ("127.0.0.1", port)
            try await configured.run(.live) { client in
                try await client.execute(uri: "/metrics", method: .get, headers: auth(fixture.admin)) { $0.expectError(.notFound, "NOT_FOUND") }
                let request = Array("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
                var responses: [BlobFastPathTests.RawResponse] = []
                for _ in 0..<50 where responses.isEmpty {  // the metrics listener may start a moment after the API's
                    if let answered = try? await BlobFastPathTests.responses(port: port, to: request) {
                        responses = answered
                    } else {
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                #expect(responses.map(\.status) == [200])
                let text = String(decoding: responses.first?.body ?? [], as: UTF8.self)
                #expect(text.contains("hoard_http_requests_total"))
            }
        }
    }

    @Test func metricsAreRenderedAsPrometheusTextWithRequestCounts() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red))
                try await client.execute(uri: "/v1/nothing-here", method: .get)
                try await client.execute(uri: "/metrics", method: .get, headers: auth(fixture.admin)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                    let lines = response.text.split(separator: "\n")
                    #expect(lines.contains { $0.hasPrefix("# TYPE hoard_http_requests_total counter") })
                    let requests = lines.filter { $0.hasPrefix("hoard_http_requests_total{") }
                    #expect(requests.contains { $0.contains("method=\"GET\"") && $0.contains("status=\"200\"") && $0.hasSuffix(" 1") })
                    #expect(requests.contains { $0.contains("status=\"404\"") && $0.hasSuffix(" 1") }, "unknown routes are counted")
                    #expect(lines.contains("hoard_blob_served_bytes_total \(bytes.count)"))
                    #expect(response.text.contains("hoard_http_request_duration_seconds"))
                }
            }
        }
    }

    @Test func unknownRouteIs404WithTheJSONErrorBody() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                for (uri, method) in [("/nope", HTTPRequest.Method.get), ("/v1/packs/a/b", .get), ("/v1/blobs", .get), ("/v1/packs", .put)] {
                    try await client.execute(uri: uri, method: method) { response in
                        response.expectError(.notFound, "NOT_FOUND")
                    }
                }
            }
        }
    }
}
