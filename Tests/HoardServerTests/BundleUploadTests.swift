import Foundation
import HTTPTypes
import HoardCore
import HoardRepository
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// POST /v1/packs with a bundle (an archive of packs) imports each inner pack, answering a report or a refusal for
/// each; a MapTool token file uploaded alone is a pack of one token.
@Suite struct BundleUploadTests {
    /// The answer to a bundle upload.
    struct BundleAnswer: Decodable {
        struct Member: Decodable {
            var inner: String
            var report: ImportReport?
            var error: ErrorBody.Inner?
            var problems: [Problem]?
        }
        var packs: [Member]
    }

    static func corpusFile(_ name: String) throws -> ByteBuffer {
        buffer(Array(try Data(contentsOf: URL(fileURLWithPath: try Python.hostile.get() + "/" + name))))
    }

    @Test func aBundleImportsEachInnerPackAndAHostileOneRefusesOnlyItself() async throws {
        let bundle = try Self.corpusFile("bundle-of-bombs.zip")
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs?name=ignored", method: .post, headers: auth(fixture.red), body: bundle) { response in
                    #expect(response.status == .created, "\(response.text)")
                    let answer = try response.decode(BundleAnswer.self)
                    #expect(answer.packs.map(\.inner) == ["bomb.zip", "good-a.zip", "good-b.zip", "nested.zip", "traversal.zip"])
                    let refused = Dictionary(uniqueKeysWithValues: answer.packs.compactMap { member in member.error.map { (member.inner, $0.code) } })
                    #expect(refused == ["bomb.zip": "COMPRESSION_RATIO", "traversal.zip": "UNSAFE_PATH"])
                    #expect(answer.packs.filter { $0.error != nil }.allSatisfy { $0.report == nil && $0.problems?.isEmpty == false })
                    #expect(answer.packs.compactMap(\.report).map(\.pack).sorted() == ["good-a", "good-b", "nested"])
                    #expect(answer.packs.compactMap(\.report).allSatisfy { $0.outcome == .imported && $0.group == "red" })
                }
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: bundle) { response throws in
                    #expect(response.status == .ok, "nothing new: \(response.text)")
                    #expect(try response.decode(BundleAnswer.self).packs.compactMap(\.report).allSatisfy { $0.outcome == .unchanged })
                }
            }
            #expect(Set(try fixture.hoard.catalog.packs().map(\.name)) == ["good-a", "good-b", "nested"])
            #expect(fixture.leftovers().isEmpty)
        }
    }

    @Test func aBundleWhosePacksAreAllRefusedIs422NamingEachPacksProblems() async throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Python.run(
            """
            import io, sys, zipfile
            def pack(entry):
                out = io.BytesIO()
                with zipfile.ZipFile(out, "w") as z:
                    z.writestr("pack.json", '{"name": "x"}')
                    z.writestr(entry, b"not a picture")
                return out.getvalue()
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
                z.writestr("a.zip", pack("../evil.png"))
                z.writestr("b.zip", pack("tokens/fake.png"))
            """, [path])
        let bundle = buffer(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: bundle) { response in
                    let error = response.expectError(.unprocessableContent, "UNSAFE_PATH")
                    #expect(error?.message.contains("every pack of the bundle was refused") == true)
                    let entries = Set((error?.problems ?? []).filter { $0.severity == .error }.compactMap(\.entry))
                    #expect(entries == ["a.zip/../evil.png", "b.zip/tokens/fake.png"], "\(error?.problems ?? [])")
                }
            }
            #expect(try fixture.hoard.catalog.packs().isEmpty)
        }
    }

    @Test func aTokenFileUploadedAloneIsAPackOfOneTokenNamedAfterIt() async throws {
        let path = temporaryFile(".rptok")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Python.run(
            """
            import importlib.util, sys
            spec = importlib.util.spec_from_file_location("hostile", sys.argv[2])
            hostile = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(hostile)
            open(sys.argv[1], "wb").write(hostile.rptok("Cave Troll", hostile.token_png(512, 512), "Large"))
            """, [path, Fixture.root.appendingPathComponent("tools/make-hostile.py").path])
        let token = buffer(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: token) { response in
                    #expect(response.status == .created, "\(response.text)")
                    let report = try response.decode(ImportReport.self)
                    #expect((report.pack, report.assetsByKind) == ("Cave Troll", ["token": 1]))
                }
            }
            let asset = try #require(try fixture.assets("Cave Troll").first)
            #expect((asset.name, asset.kind, asset.footprint.description) == ("Cave Troll", .token, "2x2"))
        }
    }
}
