import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HoardStore
import HummingbirdTesting
import Testing

/// A blob file damaged or unreadable on disk: detected on the read path, never served (whole, in a range or in a
/// batch), never cached, and reported by `verify`; the server recovers once the file is restored.
@Suite struct StoredBlobFaultTests {
    /// `streamed`: the blob is over the cache's largest entry, so it takes the streaming path instead of the
    /// read-whole-and-cache path.
    @Test(arguments: [false, true])
    func aCorruptBlobAnswersCorruptBlobAndItsBytesAreNeverServed(streamed: Bool) async throws {
        try await Fixture.with({ if streamed { $0.cacheMaxBlob = 1024 } }) { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            #expect(bytes.count > 1024)
            let path = try #require(fixture.hoard.store as? FileBlobStore).path(of: digest)
            var damaged = bytes
            damaged[bytes.count / 2] ^= 0xFF
            try Self.overwrite(path, with: damaged)
            try await fixture.run { client in
                for headers in [auth(fixture.red), auth(fixture.red, [.range: "bytes=0-99"])] {
                    try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: headers) { response in
                        response.expectError(.internalServerError, "CORRUPT_BLOB")
                    }
                }
                // A batch stops before the damaged blob's frame: the response may be cut, never carries its bytes.
                _ = try? await client.execute(
                    uri: "/v1/blobs/batch", method: .post, headers: auth(fixture.red, [.contentType: "application/json"]),
                    body: digestList([digest.description])
                ) { response in
                    #expect(!response.text.contains("\(digest) \(bytes.count)\n"))
                }
                try Self.overwrite(path, with: bytes)
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.bytes == bytes)
                }
            }
        }
    }

    @Test(arguments: [false, true])
    func anUnreadableBlobFileAnswersUnreadableBlobAndVerifyReportsIt(streamed: Bool) async throws {
        try await Fixture.with({ if streamed { $0.cacheMaxBlob = 1024 } }) { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let path = try #require(fixture.hoard.store as? FileBlobStore).path(of: digest)
            let restore = try Self.makeUnreadable(path)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red)) { response in
                    let error = response.expectError(.internalServerError, "UNREADABLE_BLOB")
                    #expect(error?.message.contains("permissions") == true)
                }
            }
            let report = try await fixture.hoard.verify()
            #expect(report.unreadable == [digest])
            #expect(!report.isHealthy)
            try restore()
            #expect(try await fixture.hoard.verify().isHealthy)
            #expect(try await fixture.hoard.store.read(digest, range: nil) == bytes)
        }
    }

    /// Replaces a read-only blob file's bytes, as a failing disk or a stray tool would.
    static func overwrite(_ path: String, with bytes: [UInt8]) throws {
        chmod(path, 0o644)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o444)
    }

    /// Makes a blob file unreadable and returns how to undo it. Root reads any file whatever its mode, so as root
    /// the file is moved aside and a folder takes its name (reading it fails with EISDIR).
    static func makeUnreadable(_ path: String) throws -> () throws -> Void {
        guard geteuid() == 0 else {
            chmod(path, 0)
            return { chmod(path, 0o444) }
        }
        let aside = path + ".aside"
        try FileManager.default.moveItem(atPath: path, toPath: aside)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return {
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(atPath: aside, toPath: path)
        }
    }
}
