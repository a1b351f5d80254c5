import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// GET and HEAD /v1/blobs/{digest}: headers, ranges, conditional requests, digest validation.
@Suite struct BlobReadTests {
    @Test func getAnswersWithTheBytesAndImmutableCachingHeaders() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.bytes == bytes)
                    #expect(response.headers[.contentType] == "image/png")
                    #expect(response.headers[.contentLength] == String(bytes.count))
                    #expect(response.headers[.eTag] == "\"\(digest)\"")
                    #expect(response.headers[.eTag]?.hasPrefix("\"sha256:") == true)
                    #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable")
                    #expect(response.headers[.acceptRanges] == "bytes")
                }
            }
        }
    }

    @Test func headAnswersWithTheSameHeadersAndNoBody() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .head, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.body.readableBytes == 0)
                    #expect(response.headers[.contentLength] == String(bytes.count))
                    #expect(response.headers[.contentType] == "image/png")
                    #expect(response.headers[.eTag] == "\"\(digest)\"")
                    #expect(response.headers[.acceptRanges] == "bytes")
                }
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .head, headers: auth(fixture.red, [.range: "bytes=-100"])) { response in
                    #expect(response.status == .partialContent)
                    #expect(response.headers[.contentLength] == "100")
                    #expect(response.headers[.contentRange] == "bytes \(bytes.count - 100)-\(bytes.count - 1)/\(bytes.count)")
                }
            }
        }
    }

    @Test func singleRangesAnswer206WithContentRange() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let size = bytes.count
            let cases: [(header: String, range: ClosedRange<Int>)] = [
                ("bytes=10-19", 10...19), ("bytes=0-0", 0...0), ("bytes=100-", 100...(size - 1)), ("bytes=-100", (size - 100)...(size - 1)),
                ("bytes=-\(size * 2)", 0...(size - 1)), ("bytes=\(size - 5)-\(size * 3)", (size - 5)...(size - 1)),
            ]
            try await fixture.run { client in
                for (header, range) in cases {
                    try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.range: header])) { response in
                        #expect(response.status == .partialContent, "\(header)")
                        #expect(response.headers[.contentRange] == "bytes \(range.lowerBound)-\(range.upperBound)/\(size)", "\(header)")
                        #expect(response.headers[.contentLength] == String(range.count), "\(header)")
                        #expect(response.bytes == Array(bytes[range]), "\(header)")
                        #expect(response.headers[.eTag] == "\"\(digest)\"")
                    }
                }
            }
        }
    }

    @Test func rangeStartingPastTheEndIs416WithTheSize() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            try await fixture.run { client in
                for header in ["bytes=\(bytes.count)-", "bytes=\(bytes.count + 10)-\(bytes.count + 20)", "bytes=-0"] {
                    try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.range: header])) { response in
                        response.expectError(.rangeNotSatisfiable, "RANGE_NOT_SATISFIABLE")
                        #expect(response.headers[.contentRange] == "bytes */\(bytes.count)", "\(header)")
                    }
                }
            }
        }
    }

    @Test func malformedOrMultipleRangesServeTheWholeBlob() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let headers = [
                "bytes=abc-def", "bytes=5-2", "bytes=-", "bytes=x", "items=0-10", "bytes 0-10", "bytes=0-1,5-9", "bytes=-10, -20",
                "bytes=+1-2", "bytes=99999999999999999999-",
            ]
            try await fixture.run { client in
                for header in headers {
                    try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.range: header])) { response in
                        #expect(response.status == .ok, "\(header) gave \(response.status.code)")
                        #expect(response.headers[.contentRange] == nil, "\(header)")
                        #expect(response.bytes == bytes, "\(header)")
                    }
                }
            }
        }
    }

    @Test func ifNoneMatchWithTheETagAnswers304() async throws {
        try await Fixture.with { fixture in
            let (digest, _) = try await fixture.picture(in: Fixture.dungeon)
            let etag = "\"\(digest)\""
            try await fixture.run { client in
                for header in [etag, "W/\(etag)", "*", "\"sha256:\(String(repeating: "0", count: 64))\", \(etag)"] {
                    for method in [HTTPRequest.Method.get, .head] {
                        try await client.execute(uri: "/v1/blobs/\(digest)", method: method, headers: auth(fixture.red, [.ifNoneMatch: header])) { response in
                            #expect(response.status == .notModified, "\(method) If-None-Match: \(header)")
                            #expect(response.body.readableBytes == 0)
                            #expect(response.headers[.eTag] == etag)
                        }
                    }
                }
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.ifNoneMatch: "\"other\""])) { response in
                    #expect(response.status == .ok)
                }
            }
        }
    }

    @Test func ifRangeWithAnotherValidatorIgnoresTheRange() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            try await fixture.run { client in
                try await client.execute(
                    uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.range: "bytes=0-9", .ifRange: "\"stale\""])
                ) { response in
                    #expect(response.status == .ok)
                    #expect(response.bytes == bytes)
                }
                try await client.execute(
                    uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.range: "bytes=0-9", .ifRange: "\"\(digest)\""])
                ) { response in
                    #expect(response.status == .partialContent)
                    #expect(response.bytes == Array(bytes[0...9]))
                }
            }
        }
    }

    @Test func malformedDigestsAre400InvalidDigest() async throws {
        try await Fixture.with { fixture in
            let hex = String(repeating: "ab", count: 32)
            let bad = ["sha256:\(hex.uppercased())", "sha256:\(hex.dropLast())", hex, "md5:\(hex)", "sha256:\(hex)0", "sha256:\(hex.dropLast())g", "x"]
            try await fixture.run { client in
                for text in bad {
                    try await client.execute(uri: "/v1/blobs/\(text)", method: .get, headers: auth(fixture.red)) { response in
                        response.expectError(.badRequest, "INVALID_DIGEST")
                    }
                    try await client.execute(uri: "/v1/assets/\(text)", method: .get) { response in
                        response.expectError(.badRequest, "INVALID_DIGEST")
                    }
                }
                try await client.execute(uri: "/v1/blobs/missing", method: .post, body: digestList(["sha256:\(hex)", "nope"])) { response in
                    response.expectError(.badRequest, "INVALID_DIGEST")
                }
                try await client.execute(uri: "/v1/blobs/batch", method: .post, body: digestList(["sha256:ABC"])) { response in
                    response.expectError(.badRequest, "INVALID_DIGEST")
                }
            }
        }
    }

    @Test func percentEncodedDigestNamesTheSameBlob() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let encoded = digest.description.replacingOccurrences(of: ":", with: "%3A")
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(encoded)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.bytes == bytes)
                }
            }
        }
    }

    @Test func lowercaseEscapesDecodeAndMalformedOnesAreRefusedAsWritten() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let hex = digest.description.dropFirst("sha256:".count)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/sha256%3a\(hex)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.bytes == bytes)
                }
                for malformed in ["sha256%3Z\(hex)", "sha256%zz\(hex)", "sha256%FF\(hex)"] {
                    try await client.execute(uri: "/v1/blobs/\(malformed)", method: .get, headers: auth(fixture.red)) { response in
                        #expect(response.status == .badRequest)
                        #expect(String(buffer: response.body).contains(malformed))
                    }
                }
            }
        }
    }

    @Test func absentBlobIs404NotFound() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/\(digest(of: randomBytes(32)))", method: .get, headers: auth(fixture.admin)) { response in
                    response.expectError(.notFound, "NOT_FOUND")
                }
            }
        }
    }
}

/// POST /v1/blobs/missing and POST /v1/blobs/batch.
@Suite struct BlobListTests {
    @Test func missingListsAbsentAndInvisibleDigestsInOrder() async throws {
        try await Fixture.with { fixture in
            let own = try await fixture.picture(in: Fixture.dungeon).digest
            let others = try await fixture.picture(in: Fixture.scifi).digest
            let absent = digest(of: randomBytes(16))
            let request = [own, others, absent].map(\.description)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/missing", method: .post, headers: auth(fixture.red), body: digestList(request)) { response throws in
                    #expect(response.status == .ok)
                    #expect(try response.decode(MissingList.self).missing == [others, absent].map(\.description))
                }
                try await client.execute(uri: "/v1/blobs/missing", method: .post, headers: auth(fixture.admin), body: digestList(request)) { response throws in
                    #expect(try response.decode(MissingList.self).missing == [absent.description])
                }
                try await client.execute(uri: "/v1/blobs/missing", method: .post, body: digestList(request)) { response throws in
                    #expect(try response.decode(MissingList.self).missing == request, "anonymous callers see no private blob")
                }
            }
        }
    }

    @Test func badJSONBodiesAre400BadRequest() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                for uri in ["/v1/blobs/missing", "/v1/blobs/batch"] {
                    for body in ["{", "not json", "{\"digests\": 5}", "{\"other\": []}", "[]", ""] {
                        try await client.execute(uri: uri, method: .post, headers: auth(fixture.red), body: buffer(body)) { response in
                            response.expectError(.badRequest, "BAD_REQUEST")
                        }
                    }
                }
            }
        }
    }

    @Test func tooManyDigestsAre413() async throws {
        try await Fixture.with({ $0.maxBatchCount = 3; $0.maxMissingCount = 4 }) { fixture in
            let digests = (0..<5).map { _ in digest(of: randomBytes(8)).description }
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/batch", method: .post, headers: auth(fixture.red), body: digestList(Array(digests.prefix(4)))) { response in
                    response.expectError(.contentTooLarge, "PAYLOAD_TOO_LARGE")
                }
                try await client.execute(uri: "/v1/blobs/batch", method: .post, headers: auth(fixture.red), body: digestList(Array(digests.prefix(3)))) { response in
                    #expect(response.status == .ok)
                }
                try await client.execute(uri: "/v1/blobs/missing", method: .post, headers: auth(fixture.red), body: digestList(digests)) { response in
                    response.expectError(.contentTooLarge, "PAYLOAD_TOO_LARGE")
                }
            }
        }
    }

    @Test func batchFramesEachDigestInRequestOrder() async throws {
        try await Fixture.with { fixture in
            let assets = try fixture.assets(Fixture.dungeon).flatMap(\.variants).prefix(4)
            var expected: [(String, BatchItem)] = []
            for variant in assets {
                expected.append((variant.digest.description, .bytes(try #require(try await fixture.hoard.store.read(variant.digest, range: nil)))))
            }
            let hidden = try await fixture.picture(in: Fixture.scifi).digest.description
            let absent = digest(of: randomBytes(8)).description
            expected.insert((hidden, .marker("-")), at: 1)
            expected.append((absent, .marker("-")))
            expected.append(expected[0])
            let request = expected.map(\.0)
            let items = expected.map(\.1)
            try await fixture.run { client in
                try await client.execute(uri: "/v1/blobs/batch", method: .post, headers: auth(fixture.red), body: digestList(request)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/vnd.hoard.blob-batch")
                    let framed = try parseBatch(response.bytes)
                    #expect(framed.map(\.0) == request)
                    #expect(framed.map(\.1) == items)
                }
            }
        }
    }

    @Test func batchMarksBlobsOverTheCacheLimitForSeparateFetching() async throws {
        try await Fixture.with({ $0.cacheMaxBlob = 1000 }) { fixture in
            let (big, _) = try await fixture.picture(in: Fixture.dungeon)
            let small = try #require(try fixture.assets(Fixture.dungeon).flatMap(\.variants).first { $0.size <= 1000 })
            try await fixture.run { client in
                try await client.execute(
                    uri: "/v1/blobs/batch", method: .post, headers: auth(fixture.red), body: digestList([big.description, small.digest.description])
                ) { response in
                    let items = try parseBatch(response.bytes)
                    #expect(items.count == 2)
                    #expect(items.first?.1 == .marker(">"))
                    if case .bytes(let bytes) = items.last?.1 { #expect(digest(of: bytes) == small.digest) } else { Issue.record("small blob not inlined") }
                }
            }
        }
    }
}
