import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HoardClient
import HoardCore
import HoardRepository
import HoardServer
import Testing

/// A pack is usable the moment its import answers; its generated pictures come afterwards, made by the server's
/// render workers, and clients pick them up from a later listing or session.
@Suite("The rendition queue, end to end")
struct RenditionQueueTests {
    /// A raw request with the fixture's member token (the client library has no pack upload).
    private static func send(_ fixture: ServerFixture, _ method: String, _ path: String, body: Data? = nil, token: String? = nil)
        async throws -> (Int, Data) {
        var request = URLRequest(url: fixture.baseURL.appendingPathComponent(path))
        if let range = path.range(of: "?") {
            request.url = URL(string: fixture.baseURL.absoluteString + path[..<range.lowerBound] + path[range.lowerBound...])
        }
        request.httpMethod = method
        request.httpBody = body
        request.setValue("Bearer \(token ?? fixture.token)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test func anUploadedPackIsListedAndServedAtOnceAndItsPicturesComeFromTheWorkers() async throws {
        try await ServerFixture.with({ $0.renderWorkers = 1 }) { fixture in
            let archive = try Data(contentsOf: ServerFixture.root.appendingPathComponent("Packs/dungeon-basics.zip"))
            let (status, body) = try await Self.send(fixture, "POST", "/v1/packs?name=dungeon-basics", body: archive)
            #expect(status == 201)
            let report = try JSONDecoder().decode(ImportReport.self, from: body)
            #expect(report.renditionJobs == report.assets)
            // Usable at once: every asset is listed with its shipped variants, each either already made or coming.
            let client = fixture.client()
            let listed = try await client.assets(AssetSearch(pack: "dungeon-basics", limit: 1000)).assets
            #expect(listed.count == report.assets)
            #expect(listed.allSatisfy { $0.pending != nil || $0.thumbnail != nil })
            let shipped = try #require(listed.first?.variants.first { $0.generated == nil })
            #expect(try await Self.send(fixture, "GET", "/v1/blobs/\(shipped.digest)").0 == 200)
            // The workers finish; the pack says so, and every asset has its pictures.
            let deadline = Date().addingTimeInterval(120)
            var progress = try await client.packs().first { $0.name == "dungeon-basics" }?.renditions
            while (progress?.pending ?? 1) > 0, Date() < deadline {
                try await Task.sleep(for: .milliseconds(200))
                progress = try await client.packs().first { $0.name == "dungeon-basics" }?.renditions
            }
            #expect(progress?.done == report.assets && progress?.failed == 0)
            let made = try await client.assets(AssetSearch(pack: "dungeon-basics", limit: 1000)).assets
            #expect(made.allSatisfy { $0.pending == nil && $0.thumbnail != nil && $0.preview != nil })
            let thumbnail = try #require(made.first?.thumbnail)
            let (got, bytes) = try await Self.send(fixture, "GET", "/v1/blobs/\(thumbnail.digest)")
            #expect(got == 200 && BlobHasher.digest(of: [UInt8](bytes)) == thumbnail.digest)
        }
    }

    @Test func aPlayerSeesTheSmallestVariantFirstAndPicksUpThePreviewOnceMade() async throws {
        try await ServerFixture.with { fixture in
            try await fixture.importPack("dungeon-basics", makingPictures: false)
            let chosen = Array(try fixture.hoard.catalog.assets(pack: "dungeon-basics").prefix(2))
            #expect(chosen.allSatisfy { $0.pending?.contains("preview") == true })
            let map: JSONValue = .object([
                "grid": .object(["width": .number(10), "height": .number(10)]),
                "tokens": .array(chosen.enumerated().map { index, asset in
                    .object(["id": .string("t\(index)"), "art": .string(asset.digest.description), "x": .number(Double(index)), "y": .number(0)])
                }),
            ])
            let created = try await fixture.client().createSession(name: "Crypt", visibility: .private, map: map)
            let joined = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Ann")
            let assets = joined.session.manifest.assets
            #expect(assets.count == 2 && assets.allSatisfy { $0.preview == nil && $0.pending != nil })
            #expect(assets.allSatisfy { $0.firstPicture?.isPreview == false && $0.firstPicture?.digest == $0.variants.first?.digest },
                    "the smallest variant is drawn first while the preview is coming")
            // Another process (hoard jobs run) makes the pictures; the server learns of them from the catalog.
            #expect(await fixture.hoard.makeRenditions().done > 0)
            var state = try await joined.client.session(id: joined.sessionId)
            let deadline = Date().addingTimeInterval(10)
            while state.manifest.assets.contains(where: { $0.preview == nil }), Date() < deadline {
                try await Task.sleep(for: .milliseconds(100))
                state = try await joined.client.session(id: joined.sessionId)
            }
            let previews = state.manifest.assets.compactMap(\.preview)
            #expect(previews.count == 2, "a later session read names the previews")
            // The player may fetch them: the session reaches the new pictures, and their view shows the assets.
            for preview in previews {
                var status = 0
                while status != 200, Date() < deadline {
                    status = try await Self.send(fixture, "GET", "/v1/blobs/\(preview.digest)", token: joined.participantToken).0
                    if status != 200 { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(status == 200)
            }
        }
    }
}
