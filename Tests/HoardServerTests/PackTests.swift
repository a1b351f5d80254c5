import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import HummingbirdTesting
import Testing

/// /v1/packs: list, read, upload, publish, delete.
@Suite struct PackTests {
    @Test func getPackDescribesItsCurrentVersion() async throws {
        try await Fixture.with { fixture in
            let expected = try fixture.pack(Fixture.dungeon)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs/\(Fixture.dungeon)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    let pack = try response.decode(PackSummary.self)
                    #expect(pack.name == Fixture.dungeon)
                    #expect(pack.group == "red")
                    #expect(pack.version == "1.0.0")
                    #expect(pack.manifestDigest == expected.manifestDigest)
                    #expect(pack.assetCount == expected.assetCount)
                    #expect(pack.isPublic == false)
                }
                try await client.execute(uri: "/v1/packs/no-such-pack", method: .get, headers: auth(fixture.admin)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
            }
        }
    }

    @Test func uploadImportsTheStreamedArchiveAs201ThenReportsUnchangedAs200() async throws {
        try await Fixture.with(packs: false) { fixture in
            let archive = try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon)))
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: buffer(Array(archive))) { response in
                    #expect(response.status == .created)
                    let report = try response.decode(ImportReport.self)
                    #expect(report.pack == Fixture.dungeon)
                    #expect(report.group == "red")
                    #expect(report.outcome == .imported)
                    #expect(report.assets > 0)
                    #expect(report.newBlobs > 0)
                }
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: buffer(Array(archive))) { response in
                    #expect(response.status == .ok)
                    let report = try response.decode(ImportReport.self)
                    #expect(report.outcome == .unchanged)
                    #expect(report.newBlobs == 0)
                }
                try await client.execute(uri: "/v1/packs", method: .get, headers: auth(fixture.red)) { response throws in
                    #expect(try response.decode(PackList.self).packs.map(\.name) == [Fixture.dungeon])
                }
            }
            #expect(fixture.leftovers().isEmpty, "the spooled archive is removed")
        }
    }

    @Test func uploadQueryNamesThePackAndAdminsMayChooseTheGroup() async throws {
        try await Fixture.with(packs: false) { fixture in
            let archive = buffer(Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.scifi)))))
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs?group=blue&name=outpost-renamed", method: .post, headers: auth(fixture.admin), body: archive) { response in
                    #expect(response.status == .created)
                    let report = try response.decode(ImportReport.self)
                    #expect(report.pack == "outpost-renamed")
                    #expect(report.group == "blue")
                }
                try await client.execute(uri: "/v1/packs?group=blue&name=stolen", method: .post, headers: auth(fixture.red), body: archive) { response in
                    response.expectError(.forbidden, "FORBIDDEN")
                }
                try await client.execute(uri: "/v1/packs?group=red", method: .post, headers: auth(fixture.red), body: archive) { response in
                    #expect(response.status == .created, "a member may name its own group")
                }
                try await client.execute(uri: "/v1/packs", method: .post, body: archive) { response in
                    response.expectError(.unauthorized, "UNAUTHORIZED")
                }
            }
            #expect(Set(try fixture.hoard.catalog.packs().map(\.name)) == ["outpost-renamed", Fixture.scifi])
            #expect(try fixture.pack("outpost-renamed").group == "blue")
        }
    }

    @Test func hostileArchivesAre422WithPerEntryProblemsAndStoreNothing() async throws {
        let directory = try Python.hostile.get()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory + "/cases.json"))) as? [[String: Any]])
        let usable = cases.filter { $0["limits"] == nil }.compactMap { entry -> (file: String, codes: [String], entry: String?)? in
            guard let file = entry["file"] as? String, let codes = entry["codes"] as? [String] else { return nil }
            return (file, codes, entry["entry"] as? String)
        }
        #expect(usable.count > 50)
        try await Fixture.with { fixture in
            let before = try fixture.hoard.catalog.packs()
            let blobsBefore = try fixture.hoard.catalog.blobs().count
            try await fixture.run { client in
                for (file, codes, entry) in usable {
                    let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
                    try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: buffer(Array(bytes))) { response in
                        #expect(response.status == .unprocessableContent, "\(file) gave \(response.status.code): \(response.text)")
                        guard let error = try? response.decode(ErrorBody.self).error else {
                            Issue.record("\(file): no error body: \(response.text)")
                            return
                        }
                        #expect(codes.contains(error.code), "\(file): \(error.code) not in \(codes)")
                        let problems = error.problems ?? []
                        #expect(problems.contains { $0.severity == .error && codes.contains($0.code.rawValue) }, "\(file): \(problems)")
                        if let name = entry {
                            #expect(problems.contains { $0.entry == name }, "\(file): no problem names \(name): \(problems)")
                        }
                    }
                }
            }
            #expect(try fixture.hoard.catalog.packs() == before)
            #expect(try fixture.hoard.catalog.blobs().count == blobsBefore)
            #expect(fixture.leftovers().isEmpty)
        }
    }

    @Test func truncatedArchiveIs422AndImportsNothing() async throws {
        try await Fixture.with(packs: false) { fixture in
            let archive = Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon))))
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: buffer(Array(archive.prefix(archive.count / 2)))) { response in
                    #expect(response.status == .unprocessableContent, "\(response.text)")
                    #expect(response.expectErrorShapeWithProblems())
                }
            }
            #expect(try fixture.hoard.catalog.packs().isEmpty)
            #expect(try fixture.hoard.catalog.blobs().isEmpty)
        }
    }

    @Test func archiveOverTheUploadLimitIs413() async throws {
        try await Fixture.with(packs: false, { $0.maxPackUpload = 10_000 }) { fixture in
            let archive = buffer(Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon)))))
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: archive) { response in
                    response.expectError(.contentTooLarge, "PAYLOAD_TOO_LARGE")
                }
            }
            #expect(try fixture.hoard.catalog.packs().isEmpty)
        }
    }

    @Test func archivePastTheGroupQuotaIs507() async throws {
        try await Fixture.with(packs: false) { fixture in
            try fixture.hoard.catalog.setQuota(1000, group: "red")
            let archive = buffer(Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon)))))
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: archive) { response in
                    response.expectError(HTTPResponse.Status(code: 507), "QUOTA_EXCEEDED")
                }
            }
            #expect(try fixture.hoard.catalog.packs().isEmpty)
            #expect(fixture.leftovers().isEmpty)
        }
    }

    @Test func patchPublishesAPackToEveryone() async throws {
        try await Fixture.with { fixture in
            let manifest = try #require(try fixture.pack(Fixture.dungeon).manifestDigest)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(manifest)", method: .get) { response in
                    #expect(response.status == .notFound)
                }
                try await client.execute(
                    uri: "/v1/packs/\(Fixture.dungeon)", method: .patch, headers: auth(fixture.red), body: buffer(#"{"isPublic":true}"#)
                ) { response throws in
                    #expect(response.status == .ok)
                    #expect(try response.decode(PackSummary.self).isPublic)
                }
                try await client.execute(uri: "/v1/packs", method: .get) { response throws in
                    #expect(try response.decode(PackList.self).packs.map(\.name) == [Fixture.dungeon])
                }
                for token in [nil, fixture.blue] {
                    try await client.execute(uri: "/v1/blobs/\(manifest)", method: .get, headers: auth(token)) { response in
                        #expect(response.status == .ok, "published blobs are readable at once")
                    }
                }
                try await client.execute(
                    uri: "/v1/packs/\(Fixture.dungeon)", method: .patch, headers: auth(fixture.admin), body: buffer(#"{"isPublic":false}"#)
                ) { response throws in
                    #expect(try response.decode(PackSummary.self).isPublic == false)
                }
                try await client.execute(uri: "/v1/blobs/\(manifest)", method: .get) { response in
                    #expect(response.status == .notFound, "unpublishing hides the blobs again")
                }
            }
        }
    }

    @Test func patchNeedsTheOwningGroupAndValidJSON() async throws {
        try await Fixture.with { fixture in
            try fixture.hoard.catalog.setPublic(true, pack: Fixture.scifi)
            let publish = buffer(#"{"isPublic":true}"#)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs/\(Fixture.dungeon)", method: .patch, body: publish) { response in
                    response.expectError(.unauthorized, "UNAUTHORIZED")
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.dungeon)", method: .patch, headers: auth(fixture.blue), body: publish) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.scifi)", method: .patch, headers: auth(fixture.red), body: publish) { response in
                    response.expectError(.forbidden, "FORBIDDEN")
                }
                for body in ["{", #"{"isPublic":"yes"}"#, "{}", "[true]"] {
                    try await client.execute(uri: "/v1/packs/\(Fixture.dungeon)", method: .patch, headers: auth(fixture.red), body: buffer(body)) { response in
                        response.expectError(.badRequest, "BAD_REQUEST")
                    }
                }
            }
            #expect(try fixture.pack(Fixture.dungeon).isPublic == false)
        }
    }

    @Test func deleteByTheOwningGroupOrAnAdminRemovesThePackAndHidesItsBlobs() async throws {
        try await Fixture.with { fixture in
            try fixture.hoard.catalog.setPublic(true, pack: Fixture.scifi)
            let dungeonManifest = try #require(try fixture.pack(Fixture.dungeon).manifestDigest)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs/\(Fixture.dungeon)", method: .delete) { response in
                    response.expectError(.unauthorized, "UNAUTHORIZED")
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.scifi)", method: .delete, headers: auth(fixture.red)) { response in
                    response.expectError(.forbidden, "FORBIDDEN")
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.dungeon)", method: .delete, headers: auth(fixture.blue)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.dungeon)", method: .delete, headers: auth(fixture.red)) { response in
                    #expect(response.status == .noContent)
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.dungeon)", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/blobs/\(dungeonManifest)", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/packs/\(Fixture.scifi)", method: .delete, headers: auth(fixture.admin)) { response in
                    #expect(response.status == .noContent)
                }
                try await client.execute(uri: "/v1/packs", method: .get, headers: auth(fixture.admin)) { response throws in
                    #expect(try response.decode(PackList.self).packs.isEmpty)
                }
            }
        }
    }
}

extension TestResponse {
    /// Whether the body is the error shape with at least one error-severity problem.
    func expectErrorShapeWithProblems() -> Bool {
        guard let error = try? decode(ErrorBody.self).error else { return false }
        return ProblemCode(rawValue: error.code) != nil && (error.problems ?? []).contains { $0.severity == .error }
    }
}
