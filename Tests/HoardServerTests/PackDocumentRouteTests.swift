import Foundation
import HoardPlugins
import HTTPTypes
import HoardServer
import HoardTestSupport
@testable import HoardCore
import HummingbirdTesting
import Testing

/// GET /v1/packs/{name} lists a pack's licence, readme and credits; GET /v1/packs/{name}/documents/{file} serves one.
@Suite struct PackDocumentRouteTests {
    /// The fields of the pack detail this test reads.
    struct Detail: Decodable {
        var name: String
        var documents: [PackDocument]
        var license: String?
        var author: String?
    }

    /// A minimal PNG: signature, IHDR, an IDAT, IEND.
    static func png(side: UInt32) -> [UInt8] { PNGBytes.minimal(width: Int(side), height: Int(side), idat: [1, 2, 3]) }

    /// A zip (Python's shutil) of `entries`.
    static func zip(_ entries: [(String, [UInt8])]) throws -> [UInt8] {
        let directory = NSTemporaryDirectory() + "hoard-docs-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, bytes) in entries {
            let path = directory + "/src/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let script = "import shutil, sys; shutil.make_archive(sys.argv[1], 'zip', sys.argv[2])"
        let outcome = try ChildProcess.run(["python3", "-c", script, directory + "/out", directory + "/src"])
        try #require(outcome.status == 0, "\(outcome.errorText)")
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/out.zip")))
    }

    @Test func aPacksDocumentsAreListedAndServedToThoseWhoSeeThePack() async throws {
        let licence = Array("# Licence\nCC BY 4.0, credit Example Art\n".utf8)
        let archive = try Self.zip([
            ("pack.json", Array(#"{"name": "documented", "license": "CC-BY-4.0", "author": "Example Art"}"#.utf8)),
            ("tokens/goblin.png", Self.png(side: 256)), ("LICENSE.md", licence),
        ])
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: buffer(archive)) { response in
                    #expect(response.status == .created)
                }
                try await client.execute(uri: "/v1/packs/documented", method: .get, headers: auth(fixture.red)) { response in
                    let detail = try response.decode(Detail.self)
                    #expect(detail.documents.map(\.name) == ["LICENSE.md"])
                    #expect(detail.license == "CC-BY-4.0")
                    #expect(detail.author == "Example Art")
                }
                try await client.execute(uri: "/v1/packs/documented/documents/LICENSE.md", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "text/markdown; charset=utf-8")
                    #expect(Array(buffer: response.body) == licence)
                }
                try await client.execute(uri: "/v1/packs/documented/documents/LICENSE.md", method: .get, headers: auth(fixture.blue)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
                try await client.execute(uri: "/v1/packs/documented/documents/README.md", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
            }
        }
    }
}
