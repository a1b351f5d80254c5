import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import NIOCore
import Testing

/// `/v1/refs`: a member's named pointers, moved with compare-and-set.
@Suite struct RefTests {
    func put(
        _ client: some TestClientProtocol, _ name: String, to digest: String, token: String, _ precondition: HTTPFields = [:]
    ) async throws -> HTTPResponse.Status {
        let body = try JSONSerialization.data(withJSONObject: ["digest": digest])
        var headers = precondition
        headers[.contentType] = "application/json"
        return try await client.execute(uri: "/v1/refs/\(name)", method: .put, headers: auth(token, headers), body: ByteBuffer(bytes: body)) {
            $0.status
        }
    }

    @Test func aRefIsCreatedOnceThenMovedOnlyFromWhereTheCallerSawIt() async throws {
        try await Fixture.with(packs: false) { fixture in
            let first = try await fixture.freshPicture()
            let second = try await fixture.freshPicture()
            try await fixture.run { client in
                let a = try #require(try await client.uploadPicture(first, token: fixture.red).json["digest"] as? String)
                let b = try #require(try await client.uploadPicture(second, token: fixture.red).json["digest"] as? String)
                #expect(try await put(client, "last-drawing", to: a, token: fixture.red, [.ifNoneMatch: "*"]) == .ok)
                #expect(try await put(client, "last-drawing", to: b, token: fixture.red, [.ifNoneMatch: "*"]) == .preconditionFailed)
                #expect(try await put(client, "last-drawing", to: b, token: fixture.red, [.ifMatch: "\"\(a)\""]) == .ok)
                // A device that still believes the ref points at `a` loses, and is told why.
                try await client.execute(
                    uri: "/v1/refs/last-drawing", method: .put, headers: auth(fixture.red, [.ifMatch: "\"\(a)\"", .contentType: "application/json"]),
                    body: buffer(#"{"digest":"\#(a)"}"#)
                ) { response in
                    let error = response.expectError(.preconditionFailed, "REF_CONFLICT")
                    #expect(error?.message.contains(b) == true)
                }
                try await client.execute(uri: "/v1/refs/last-drawing", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.eTag] == "\"\(b)\"")
                    let object = try JSONSerialization.jsonObject(with: Data(response.bytes)) as? [String: Any]
                    #expect(object?["digest"] as? String == b)
                }
                try await client.execute(uri: "/v1/refs/last-drawing", method: .delete, headers: auth(fixture.red, [.ifMatch: "\"\(a)\""])) {
                    $0.expectError(.preconditionFailed, "REF_CONFLICT")
                }
                try await client.execute(uri: "/v1/refs/last-drawing", method: .delete, headers: auth(fixture.red, [.ifMatch: "\"\(b)\""])) {
                    #expect($0.status == .noContent)
                }
                #expect(try await client.fetch("/v1/refs/last-drawing", token: fixture.red).status == .notFound)
            }
        }
    }

    @Test func ofManyDevicesMovingTheSameRefAtOnceExactlyOneWins() async throws {
        try await Fixture.with(packs: false) { fixture in
            var made: [[UInt8]] = []
            for _ in 0..<9 { made.append(try await fixture.freshPicture()) }
            let pictures = made
            try await fixture.run(.live) { client in
                var digests: [String] = []
                for picture in pictures { digests.append(try #require(try await client.uploadPicture(picture, token: fixture.red).json["digest"] as? String)) }
                let start = digests[0]
                #expect(try await put(client, "last", to: start, token: fixture.red) == .ok)
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for digest in digests.dropFirst() {
                        group.addTask { try await put(client, "last", to: digest, token: fixture.red, [.ifMatch: "\"\(start)\""]) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .ok }.count == 1, "\(statuses)")
                #expect(statuses.filter { $0 == .preconditionFailed }.count == digests.count - 2)
            }
        }
    }

    @Test func refsBelongToTheMemberAndFollowThemToAnotherDevice() async throws {
        try await Fixture.with { fixture in
            let otherDevice = try fixture.hoard.createToken(group: "red", label: "red member", isAdmin: false)
            let otherMember = try fixture.hoard.createToken(group: "red", label: "someone else", isAdmin: false)
            let asset = try fixture.assetDigest(Fixture.dungeon)
            try await fixture.run { client in
                #expect(try await put(client, "favourite", to: asset, token: fixture.red) == .ok)
                #expect(try await client.fetch("/v1/refs/favourite", token: otherDevice).status == .ok)
                #expect(try await client.fetch("/v1/refs/favourite", token: otherMember).status == .notFound)
                #expect(try await client.fetch("/v1/refs/favourite", token: fixture.blue).status == .notFound)
                let listed = try await client.json(.get, "/v1/refs", token: otherDevice)
                #expect((listed.json["refs"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["favourite"])
            }
        }
    }

    @Test func aRefMayOnlyPointAtWhatTheMemberMayRead() async throws {
        try await Fixture.with { fixture in
            let blueAsset = try fixture.assetDigest(Fixture.scifi)
            try await fixture.run { client in
                let stolen = try await put(client, "stolen", to: blueAsset, token: fixture.red)
                #expect(stolen == .notFound)
                let malformed = try await put(client, "ok", to: "sha256:nope", token: fixture.blue)
                #expect(malformed == .badRequest)
            }
        }
    }
}
