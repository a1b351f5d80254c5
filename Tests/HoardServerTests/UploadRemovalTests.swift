import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// `GET /v1/uploads` and `DELETE /v1/uploads/{digest}`: people list the pictures they put in, and take them back.
@Suite struct UploadRemovalTests {
    struct Listed: Decodable, Equatable {
        var digest: String
        var size: Int64
        var mediaType: String
        var scope: String
        var session: String?
        var uploadedAt: Date
    }

    struct Page: Decodable {
        var uploads: [Listed]
        var total: Int
        var nextOffset: Int?
    }

    @Test func eachCallerListsExactlyTheUploadsTheyMade() async throws {
        try await Fixture.with(packs: false) { fixture in
            let otherDevice = try fixture.hoard.createToken(group: "red", label: "red member", isAdmin: false)
            let pictures = try await (0..<5).asyncMap { _ in try await fixture.freshPicture() }
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                // A participant may take any name, the member's too: names alone decide nothing.
                let impostor = try await client.joinSession(code: room.code, name: "red member")
                let own = try #require(try await client.uploadPicture(pictures[0], token: fixture.red).json["digest"] as? String)
                let intoRoom = try #require(try await client.uploadPicture(pictures[1], token: fixture.red, query: "?session=\(room.id)").json["digest"] as? String)
                let anns = try #require(try await client.uploadPicture(pictures[2], token: ann).json["digest"] as? String)
                let impostors = try #require(try await client.uploadPicture(pictures[3], token: impostor).json["digest"] as? String)
                _ = try await client.uploadPicture(pictures[4], token: fixture.blue)

                let red = try await client.uploadList(token: fixture.red)
                #expect(red.total == 2)
                #expect(Set(red.uploads.map(\.digest)) == [own, intoRoom])
                let ownEntry = try #require(red.uploads.first { $0.digest == own })
                #expect(ownEntry.scope == "member" && ownEntry.session == nil && ownEntry.size == Int64(pictures[0].count))
                #expect(ownEntry.mediaType == "image/png")
                let roomEntry = try #require(red.uploads.first { $0.digest == intoRoom })
                #expect(roomEntry.scope == "session" && roomEntry.session == room.id)
                #expect(try await client.uploadList(token: otherDevice).uploads == red.uploads, "a member's devices share their uploads")
                #expect(try await client.uploadList(token: ann).uploads.map(\.digest) == [anns])
                #expect(try await client.uploadList(token: impostor).uploads.map(\.digest) == [impostors])
                #expect(try await client.uploadList(token: fixture.admin).total == 0)
                try await client.execute(uri: "/v1/uploads", method: .get) { $0.expectError(.unauthorized, "UNAUTHORIZED") }
            }
        }
    }

    @Test func theListComesInPagesNewestFirst() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                var digests: [String] = []
                for _ in 0..<3 {
                    digests.append(try #require(try await client.uploadPicture(try await fixture.freshPicture(), token: fixture.red).json["digest"] as? String))
                    try await Task.sleep(for: .milliseconds(5))
                }
                let first = try await client.uploadList(token: fixture.red, query: "?limit=2")
                #expect(first.total == 3 && first.nextOffset == 2)
                #expect(first.uploads.map(\.digest) == [digests[2], digests[1]])
                let second = try await client.uploadList(token: fixture.red, query: "?limit=2&offset=2")
                #expect(second.uploads.map(\.digest) == [digests[0]] && second.nextOffset == nil)
                for bad in ["?limit=0", "?limit=1001", "?offset=-1", "?limit=two"] {
                    try await client.execute(uri: "/v1/uploads" + bad, method: .get, headers: auth(fixture.red)) {
                        $0.expectError(.badRequest, "BAD_REQUEST")
                    }
                }
            }
        }
    }

    @Test func aForgottenSessionUploadAnswers404ThroughBothRoutesAtOnce() async throws {
        try await Fixture.with(packs: false) { fixture in
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let bob = try await client.joinSession(code: room.code, name: "Bob")
                let digest = try #require(try await client.uploadPicture(picture, token: ann).json["digest"] as? String)
                // The host's map shows the photo, so every participant reaches it.
                #expect(try await client.json(.put, "/v1/sessions/\(room.id)/map", token: fixture.red, body: ["photo": digest]).status == .ok)
                #expect(try await client.fetch("/v1/blobs/\(digest)", token: bob).status == .ok)
                #expect(try await client.fetch("/v1/uploads/\(digest)", token: bob).status == .ok)
                #expect(try await client.delete(digest, token: ann) == .noContent)
                for reader in [ann, bob, fixture.red] {
                    #expect(try await client.fetch("/v1/uploads/\(digest)", token: reader).status == .notFound)
                    #expect(try await client.fetch("/v1/blobs/\(digest)", token: reader).status == .notFound)
                }
                #expect(try await client.uploadList(token: ann).total == 0)
                try await client.execute(uri: "/v1/uploads/\(digest)", method: .delete, headers: auth(ann)) { $0.expectError(.notFound, "NOT_FOUND") }
            }
        }
    }

    @Test func aForgottenMemberUploadIsGoneFromEveryDevice() async throws {
        try await Fixture.with(packs: false) { fixture in
            let otherDevice = try fixture.hoard.createToken(group: "red", label: "red member", isAdmin: false)
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let digest = try #require(try await client.uploadPicture(picture, token: fixture.red).json["digest"] as? String)
                #expect(try await client.delete(digest, token: otherDevice) == .noContent)
                for device in [fixture.red, otherDevice] {
                    #expect(try await client.fetch("/v1/uploads/\(digest)", token: device).status == .notFound)
                    #expect(try await client.fetch("/v1/blobs/\(digest)", token: device).status == .notFound)
                }
            }
        }
    }

    @Test func onlyTheUploaderTheHostOrAnAdminMayForgetAndOthersGet404() async throws {
        try await Fixture.with(packs: false) { fixture in
            let notHost = try fixture.hoard.createToken(group: "red", label: "someone else", isAdmin: false)
            let (first, second, mine) = (try await fixture.freshPicture(), try await fixture.freshPicture(), try await fixture.freshPicture())
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let bob = try await client.joinSession(code: room.code, name: "Ann")
                let anns = try #require(try await client.uploadPicture(first, token: ann).json["digest"] as? String)
                let other = try #require(try await client.uploadPicture(second, token: ann).json["digest"] as? String)
                let reds = try #require(try await client.uploadPicture(mine, token: fixture.red).json["digest"] as? String)
                // Another participant (even of the same name), a member of the group who is not the host, another
                // group, and the host without naming the session: 404, as for an absent upload.
                for (token, query) in [(bob, ""), (notHost, "?session=\(room.id)"), (fixture.blue, "?session=\(room.id)"), (fixture.red, "")] {
                    try await client.execute(uri: "/v1/uploads/\(anns)\(query)", method: .delete, headers: auth(token)) { $0.expectError(.notFound, "NOT_FOUND") }
                }
                // A member's own space is theirs alone, an admin's included.
                for token in [fixture.admin, notHost, ann] {
                    #expect(try await client.delete(reds, token: token) == .notFound)
                }
                #expect(try await client.fetch("/v1/uploads/\(anns)", token: ann).status == .ok, "nothing was forgotten")
                #expect(try await client.delete(anns, token: fixture.red, query: "?session=\(room.id)") == .noContent)
                #expect(try await client.delete(other, token: fixture.admin, query: "?session=\(room.id)") == .noContent)
                #expect(try await client.uploadList(token: ann).total == 0)
                #expect(try await client.delete(reds, token: fixture.red) == .noContent)
            }
        }
    }

    @Test func forgettingGivesTheBytesBackToTheQuotaAndGarbageCollectionFreesThem() async throws {
        try await Fixture.with(packs: false) { fixture in
            let (forgotten, kept) = (try await fixture.freshPicture(), try await fixture.freshPicture())
            let red = try #require(try fixture.hoard.catalog.group(named: "red")?.id)
            let before = try fixture.hoard.catalog.usage(groupId: red)
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let gone = try #require(try await client.uploadPicture(forgotten, token: ann).json["digest"] as? String)
                // The same bytes in the member's own space keep them alive when the session's copy goes.
                #expect(try await client.uploadPicture(kept, token: ann).status == .created)
                let stays = try #require(try await client.uploadPicture(kept, token: fixture.red).json["digest"] as? String)
                let full = try fixture.hoard.catalog.usage(groupId: red)
                #expect(full == before + Int64(forgotten.count + kept.count))
                #expect(try await client.delete(gone, token: ann) == .noContent)
                #expect(try await client.delete(stays, token: ann) == .noContent)
                #expect(try fixture.hoard.catalog.usage(groupId: red) == before + Int64(kept.count))
                // The default grace period: a forgotten upload's blob row goes, and its file with it, however young.
                let collected = try await fixture.hoard.collectGarbage()
                #expect(collected.deletedBlobs == 1 && collected.deletedBytes == Int64(forgotten.count))
                #expect(try await fixture.blobExists(try #require(Digest(gone))) == false, "gc freed the forgotten picture's bytes")
                #expect(try await fixture.blobExists(try #require(Digest(stays))), "a picture still uploaded elsewhere keeps its bytes")
                #expect(try await client.fetch("/v1/uploads/\(stays)", token: fixture.red).status == .ok)
            }
        }
    }
}

extension TestClientProtocol {
    /// GET /v1/uploads, decoded.
    func uploadList(token: String, query: String = "") async throws -> UploadRemovalTests.Page {
        try await execute(uri: "/v1/uploads" + query, method: .get, headers: auth(token)) { response in
            #expect(response.status == .ok, "\(response.text)")
            return try response.decode(UploadRemovalTests.Page.self)
        }
    }

    /// DELETE /v1/uploads/{digest}; the status.
    func delete(_ digest: String, token: String, query: String = "") async throws -> HTTPResponse.Status {
        try await execute(uri: "/v1/uploads/\(digest)" + query, method: .delete, headers: auth(token)) { $0.status }
    }
}

extension Sequence {
    /// `map` with an async transform, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
