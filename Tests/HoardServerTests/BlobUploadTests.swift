import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// PUT /v1/blobs/{digest}: verified, bounded, quota-checked uploads.
@Suite struct BlobUploadTests {
    @Test func putStoresAVerifiedBlobAs201AndAnswers201AgainWhenAlreadyStored() async throws {
        try await Fixture.with { fixture in
            let bytes = randomBytes(5000)
            let name = digest(of: bytes)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) { response in
                    #expect(response.status == .created)
                    let result = try response.decode(UploadResult.self)
                    #expect(result.digest == name.description)
                    #expect(result.size == 5000)
                }
                // Again, and from another group: the answer does not tell whether someone held the bytes.
                for token in [fixture.red, fixture.blue] {
                    try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(token), body: buffer(bytes)) { response in
                        #expect(response.status == .created)
                    }
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.bytes == bytes)
                    #expect(response.headers[.contentType] == "application/octet-stream")
                }
            }
            #expect(try await fixture.blobExists(name))
        }
    }

    @Test func emptyBlobUploadsAndServesWithZeroLength() async throws {
        try await Fixture.with { fixture in
            let name = digest(of: [])
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer([])) { response in
                    #expect(response.status == .created, "\(response.text)")
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentLength] == "0")
                    #expect(response.body.readableBytes == 0)
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red, [.range: "bytes=0-"])) { response in
                    response.expectError(.rangeNotSatisfiable, "RANGE_NOT_SATISFIABLE")
                    #expect(response.headers[.contentRange] == "bytes */0")
                }
            }
        }
    }

    @Test func uploadedBlobIsVisibleToItsGroupAndAdminsOnly() async throws {
        try await Fixture.with { fixture in
            let bytes = randomBytes(300)
            let name = digest(of: bytes)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.blue), body: buffer(bytes))
                for (token, status) in [(fixture.blue, HTTPResponse.Status.ok), (fixture.admin, .ok), (fixture.red, .notFound), (nil, .notFound)] {
                    try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(token)) { response in
                        #expect(response.status == status)
                    }
                }
            }
        }
    }

    @Test func uploadedPictureGetsItsMediaTypeFromItsBytes() async throws {
        try await Fixture.with { fixture in
            let (_, png) = try await fixture.picture(in: Fixture.scifi)
            let bytes = png + Array("trailing bytes make a new blob".utf8)
            let name = digest(of: bytes)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) { response in
                    #expect(response.status == .created)
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .head, headers: auth(fixture.red)) { response in
                    #expect(response.headers[.contentType] == "image/png")
                }
            }
        }
    }

    @Test func bytesThatDoNotHashToTheDigestAre400DigestMismatchAndStoreNothing() async throws {
        try await Fixture.with { fixture in
            let bytes = randomBytes(4000)
            let claimed = digest(of: randomBytes(4000))
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(claimed)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) { response in
                    let error = response.expectError(.badRequest, "DIGEST_MISMATCH")
                    #expect(error?.message.contains(digest(of: bytes).description) == true, "the message names the real digest")
                }
            }
            #expect(try await fixture.blobExists(claimed) == false)
            #expect(try await fixture.blobExists(digest(of: bytes)) == false)
            #expect(fixture.leftovers().isEmpty)
        }
    }

    @Test func truncatedUploadIsRefusedAndStoresNothing() async throws {
        try await Fixture.with { fixture in
            let bytes = randomBytes(100_000)
            let name = digest(of: bytes)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer(Array(bytes.prefix(60_000)))) { response in
                    response.expectError(.badRequest, "DIGEST_MISMATCH")
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
            }
            #expect(try await fixture.blobExists(name) == false)
            #expect(try fixture.hoard.catalog.blobs().contains { $0.digest == name } == false)
            #expect(fixture.leftovers().isEmpty)
        }
    }

    @Test func uploadOverTheSizeLimitIs413() async throws {
        try await Fixture.with({ $0.maxBlobUpload = 1024 }) { fixture in
            let bytes = randomBytes(2048)
            let name = digest(of: bytes)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) { response in
                    response.expectError(.contentTooLarge, "PAYLOAD_TOO_LARGE")
                }
                let small = randomBytes(1024)
                try await client.execute(uri: "/v1/blobs/\(digest(of: small))", method: .put, headers: auth(fixture.red), body: buffer(small)) { response in
                    #expect(response.status == .created, "exactly the limit is allowed")
                }
            }
            #expect(try await fixture.blobExists(name) == false)
        }
    }

    @Test func uploadWithoutATokenIs401AndWithAnUnknownOneToo() async throws {
        try await Fixture.with { fixture in
            let bytes = randomBytes(64)
            let name = digest(of: bytes)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, body: buffer(bytes)) { response in
                    response.expectError(.unauthorized, "UNAUTHORIZED")
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth("hoard_not-a-token"), body: buffer(bytes)) { response in
                    response.expectError(.unauthorized, "UNAUTHORIZED")
                }
            }
            #expect(try await fixture.blobExists(name) == false)
        }
    }

    @Test func uploadWithAMalformedDigestIs400() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/sha256:1234", method: .put, headers: auth(fixture.red), body: buffer("x")) { response in
                    response.expectError(.badRequest, "INVALID_DIGEST")
                }
            }
        }
    }

    @Test func uploadPastTheGroupQuotaIs507QuotaExceeded() async throws {
        try await Fixture.with { fixture in
            let redId = try #require(try fixture.hoard.catalog.group(named: "red")?.id)
            let used = try fixture.hoard.catalog.usage(groupId: redId)
            #expect(used > 0)
            try fixture.hoard.catalog.setQuota(used + 100, group: "red")
            let bytes = randomBytes(101)
            let name = digest(of: bytes)
            let fits = randomBytes(100)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) { response in
                    response.expectError(HTTPResponse.Status(code: 507), "QUOTA_EXCEEDED")
                }
                try await client.execute(uri: "/v1/blobs/\(digest(of: fits))", method: .put, headers: auth(fixture.red), body: buffer(fits)) { response in
                    #expect(response.status == .created, "exactly filling the quota is allowed")
                }
                let (own, ownBytes) = try await fixture.picture(in: Fixture.dungeon)
                try await client.execute(uri: "/v1/blobs/\(own)", method: .put, headers: auth(fixture.red), body: buffer(ownBytes)) { response in
                    #expect(response.status == .created, "re-uploading a blob the group already holds costs nothing")
                }
            }
            #expect(try await fixture.blobExists(name) == false)
        }
    }

    @Test func uploadsPastTheRateLimitAre429() async throws {
        try await Fixture.with({ $0.uploadsPerMinute = 2 }) { fixture in
            try await fixture.run { client in
                var statuses: [Int] = []
                for _ in 0..<3 {
                    let bytes = randomBytes(10)
                    let response = try await client.execute(
                        uri: "/v1/blobs/\(digest(of: bytes))", method: .put, headers: auth(fixture.red), body: buffer(bytes))
                    statuses.append(response.status.code)
                    if response.status.code == 429 { response.expectError(.tooManyRequests, "RATE_LIMITED") }
                }
                // The window is per minute, so the third upload is refused unless the minute turned between requests.
                #expect(statuses.filter { $0 == 201 }.count >= 2)
                #expect(statuses.last == 429 || statuses.filter { $0 == 201 }.count == 3)
                let bytes = randomBytes(10)
                try await client.execute(uri: "/v1/blobs/\(digest(of: bytes))", method: .put, headers: auth(fixture.blue), body: buffer(bytes)) { response in
                    #expect(response.status == .created, "the limit is per group")
                }
            }
        }
    }
}
