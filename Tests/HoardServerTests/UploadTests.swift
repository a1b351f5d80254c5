import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// `POST /v1/uploads`: participants' and members' pictures, readable only inside their scope.
@Suite struct UploadTests {
    @Test func aMemberUploadIsReadableOnlyByThatMemberOnAnyOfTheirDevices() async throws {
        try await Fixture.with(packs: false) { fixture in
            let otherDevice = try fixture.hoard.createToken(group: "red", label: "red member", isAdmin: false)
            let otherMember = try fixture.hoard.createToken(group: "red", label: "someone else", isAdmin: false)
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let stored = try await client.uploadPicture(picture, token: fixture.red)
                #expect(stored.status == .created)
                #expect(stored.json["scope"] as? String == "member")
                let digest = try #require(stored.json["digest"] as? String)
                #expect(digest == HoardServerTests.digest(of: picture).description)
                #expect(try await client.fetch("/v1/uploads/\(digest)", token: fixture.red) == (HTTPResponse.Status.ok, picture))
                #expect(try await client.fetch("/v1/uploads/\(digest)", token: otherDevice).status == .ok)
                for stranger in [otherMember, fixture.blue] {
                    #expect(try await client.fetch("/v1/uploads/\(digest)", token: stranger).status == .notFound)
                }
                // No token at all: 401, as the API declares, for a stored upload and an absent one alike.
                #expect(try await client.fetch("/v1/uploads/\(digest)", token: nil).status == .unauthorized)
                #expect(try await client.fetch("/v1/uploads/\(HoardServerTests.digest(of: [1, 2, 3]))", token: nil).status == .unauthorized)
                // Knowing the digest is not enough through the blob API either.
                #expect(try await client.fetch("/v1/blobs/\(digest)", token: otherMember).status == .notFound)
            }
        }
    }

    @Test func anUploadLosesItsTextAndGPSMetadataBeforeItIsHashed() async throws {
        try await Fixture.with(packs: false) { fixture in
            let text = Array("GPSPosition\0".utf8) + Array("48.8584 N, 2.2945 E".utf8)
            let picture = try await fixture.freshPicture(extra: [(type: "tEXt", data: text)])
            let chunk = 12 + text.count
            let clean = Array(picture.prefix(picture.count - 12 - chunk)) + Array(picture.suffix(12))
            try await fixture.run { client in
                let stored = try await client.uploadPicture(picture, token: fixture.red)
                #expect(stored.status == .created)
                let digest = try #require(stored.json["digest"] as? String)
                #expect(digest == HoardServerTests.digest(of: clean).description, "the digest names the cleaned bytes")
                let fetched = try await client.fetch("/v1/uploads/\(digest)", token: fixture.red)
                #expect(fetched.bytes == clean)
                #expect(!String(decoding: fetched.bytes, as: UTF8.self).contains("48.8584"))
            }
        }
    }

    @Test func aParticipantUploadIsReadableOnlyInsideItsSession() async throws {
        try await Fixture.with(packs: false) { fixture in
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red, name: "room one")
                let other = try await client.makeSession(token: fixture.red, name: "room two")
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let bob = try await client.joinSession(code: room.code, name: "Bob")
                let eve = try await client.joinSession(code: other.code, name: "Eve")
                let stored = try await client.uploadPicture(picture, token: ann)
                #expect(stored.status == .created)
                #expect(stored.json["scope"] as? String == "session")
                #expect(stored.json["session"] as? String == room.id)
                let digest = try #require(stored.json["digest"] as? String)
                for reader in [ann, fixture.red] {
                    #expect(try await client.fetch("/v1/uploads/\(digest)", token: reader) == (HTTPResponse.Status.ok, picture))
                }
                // Until the table shows it, a participant's picture is theirs and the host's alone.
                #expect(try await client.fetch("/v1/uploads/\(digest)", token: bob).status == .notFound)
                #expect(try await client.fetch("/v1/blobs/\(digest)", token: bob).status == .notFound)
                // Once the host's map shows it, the session's participants reach it as a blob.
                let shown = try await client.json(.put, "/v1/sessions/\(room.id)/map", token: fixture.red, body: ["photo": digest])
                #expect(shown.status == .ok)
                #expect(try await client.fetch("/v1/blobs/\(digest)", token: bob).status == .ok)
                for stranger in [eve, fixture.blue] {
                    #expect(try await client.fetch("/v1/uploads/\(digest)", token: stranger).status == .notFound)
                    #expect(try await client.fetch("/v1/blobs/\(digest)", token: stranger).status == .notFound)
                }
            }
        }
    }

    @Test func aMemberMayUploadIntoASessionOfTheirGroupOnly() async throws {
        try await Fixture.with(packs: false) { fixture in
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                #expect(try await client.uploadPicture(picture, token: fixture.blue, query: "?session=\(room.id)").status == .notFound)
                let stored = try await client.uploadPicture(picture, token: fixture.red, query: "?session=\(room.id)")
                #expect(stored.status == .created)
                #expect(stored.json["session"] as? String == room.id)
            }
        }
    }

    @Test func anUploadThatIsNotAPNGJPEGOrWebPIsRefusedByItsBytes() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                for body in [Array("not a picture".utf8), Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0], []] {
                    try await client.execute(uri: "/v1/uploads", method: .post, headers: auth(fixture.red, [.contentType: "image/png"]), body: buffer(body)) {
                        $0.expectError(.unsupportedMediaType, "NOT_A_PICTURE")
                    }
                }
                try await client.execute(uri: "/v1/uploads", method: .post, body: buffer("x")) { $0.expectError(.unauthorized, "UNAUTHORIZED") }
            }
        }
    }

    @Test func uploadsCountAgainstTheGroupQuota() async throws {
        try await Fixture.with(packs: false) { fixture in
            let first = try await fixture.freshPicture()
            let second = try await fixture.freshPicture()
            let red = try #require(try fixture.hoard.catalog.group(named: "red")?.id)
            let before = try fixture.hoard.catalog.usage(groupId: red)
            try await fixture.run { client in
                #expect(try await client.uploadPicture(first, token: fixture.red).status == .created)
                #expect(try fixture.hoard.catalog.usage(groupId: red) == before + Int64(first.count))
                try fixture.hoard.catalog.setQuota(before + Int64(first.count) + 10, group: "red")
                try await client.execute(uri: "/v1/uploads", method: .post, headers: auth(fixture.red), body: buffer(second)) {
                    $0.expectError(.init(code: 507), "QUOTA_EXCEEDED")
                }
                // The same picture again costs nothing.
                #expect(try await client.uploadPicture(first, token: fixture.red).status == .ok)
            }
        }
    }

    /// Stands in for the metadata-stripping processor: keeps the first 64 bytes.
    struct Truncating: UploadSanitizer {
        func sanitize(_ bytes: [UInt8], mediaType: HoardCore.MediaType) async throws -> [UInt8] { Array(bytes.prefix(64)) }
    }

    @Test func theSanitizerHookDecidesTheStoredBytesAndTheirDigest() async throws {
        try await Fixture.with(packs: false, { $0.uploadSanitizer = Truncating() }) { fixture in
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let stored = try await client.uploadPicture(picture, token: fixture.red)
                let digest = try #require(stored.json["digest"] as? String)
                #expect(digest == HoardServerTests.digest(of: Array(picture.prefix(64))).description)
                #expect(try await client.fetch("/v1/uploads/\(digest)", token: fixture.red) == (HTTPResponse.Status.ok, Array(picture.prefix(64))))
            }
        }
    }
}
