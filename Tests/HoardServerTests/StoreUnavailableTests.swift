import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import HoardS3
import HoardTestSupport
import HummingbirdTesting
import NIOCore
import Testing

@testable import HoardServer

/// A blob store in S3 that cannot be reached: writes answer 503 with `Retry-After`, say what happened, and record
/// nothing.
@Suite("The blob store is unavailable")
struct StoreUnavailableTests {
    @Test func writesAnswer503AndRecordNothing() async throws {
        try await Fixture.with(packs: false) { fixture in
            // A port nothing listens on: the S3 service is down.
            let closed = try await freePort()
            let s3 = try S3BlobStore(
                location: "s3://down", endpoint: "http://127.0.0.1:\(closed)", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"),
                stagingDirectory: fixture.path + "/staging")
            var down = fixture
            down.configuration.hoard = Hoard(directory: fixture.hoard.directory, store: s3, catalog: fixture.hoard.catalog)
            let red = fixture.red
            let bytes = Array("a blob nobody can store".utf8)
            let digest = BlobHasher.digest(of: bytes)
            try await down.run { client in
                try await client.execute(
                    uri: "/v1/blobs/\(digest)", method: .put, headers: auth(red), body: ByteBuffer(bytes: bytes)
                ) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(response.headers[.retryAfter] == "5")
                    let body = String(buffer: response.body)
                    #expect(body.contains(#""code":"STORAGE_UNAVAILABLE""#) && body.contains("nothing was stored"), "\(body)")
                }
            }
            #expect(try fixture.hoard.catalog.blob(digest) == nil, "no row names the blob")
            #expect(fixture.leftovers().isEmpty && (FileManager.default.subpaths(atPath: fixture.path + "/staging") ?? []).isEmpty)
        }
    }
}
