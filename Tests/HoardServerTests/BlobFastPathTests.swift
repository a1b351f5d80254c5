import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// ``BlobFastPath`` answers hot blobs before the router: it must answer exactly as the router does, hand everything
/// else on, and never reorder the responses of one connection.
@Suite(.timeLimit(.minutes(2))) struct BlobFastPathTests {
    struct Answer: Equatable, CustomStringConvertible {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var description: String { "\(status) \(headers) \(body.count) bytes" }
    }

    /// Every request of `requests` over a real socket, after one GET has made the blob hot; and how many of them
    /// the fast path answered (from /metrics).
    static func answers(
        _ fixture: Fixture, fastPath: Bool, digest: Digest, _ requests: [(HTTPRequest.Method, HTTPFields)]
    ) async throws -> (answers: [Answer], fast: Int) {
        var configured = fixture
        configured.configuration.hasBlobFastPath = fastPath
        let red = fixture.red
        return try await configured.run(.live) { client in
            try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(red)) { #expect($0.status == .ok) }
            var answers: [Answer] = []
            for (method, headers) in requests {
                let answer = try await client.execute(uri: "/v1/blobs/\(digest)", method: method, headers: headers) { response in
                    var fields: [String: String] = [:]
                    for field in response.headers where field.name != .date { fields[field.name.canonicalName] = field.value }
                    return Answer(status: response.status.code, headers: fields, body: response.bytes)
                }
                answers.append(answer)
            }
            let metrics = try await client.execute(uri: "/metrics", method: .get) { $0.text }
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("hoard_blob_fast_path_total ") }
            return (answers, line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1)
        }
    }

    @Test func hotBlobsGetTheSameAnswersWithAndWithoutTheFastPath() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let requests: [(HTTPRequest.Method, HTTPFields)] = [
                (.get, auth(fixture.red)),
                (.head, auth(fixture.red)),
                (.get, auth(fixture.red, [.range: "bytes=100-199"])),
                (.get, auth(fixture.red, [.range: "bytes=-10"])),
                (.get, auth(fixture.red, [.range: "bytes=\(bytes.count)-"])),
                (.get, auth(fixture.red, [.ifNoneMatch: "\"\(digest)\""])),
                (.get, auth(fixture.red, [.range: "bytes=0-9", .ifRange: "\"sha256:other\""])),
                (.get, auth(fixture.blue)),
                (.get, auth("not-a-token")),
                (.get, [:]),
            ]
            let fast = try await Self.answers(fixture, fastPath: true, digest: digest, requests)
            let routed = try await Self.answers(fixture, fastPath: false, digest: digest, requests)
            for (index, pair) in zip(fast.answers, routed.answers).enumerated() {
                #expect(pair.0 == pair.1, "request \(index): fast path \(pair.0) vs router \(pair.1)")
            }
            #expect(fast.answers.map(\.status) == [200, 200, 206, 206, 416, 304, 200, 404, 401, 404])
            #expect(fast.answers[0].body == bytes)
            #expect(fast.fast == 6, "the warming GET goes to disk; the six readable answers come from the fast path")
            #expect(routed.fast == 0)
        }
    }

    @Test func pipelinedRequestsKeepTheirOrderAcrossBothPaths() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            try await fixture.run(.live) { client in
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red)) { #expect($0.status == .ok) }
                let socket = try await RawSocket.connect(port: try #require(client.port))
                defer { socket.close() }
                func request(_ path: String, _ extra: String = "") -> String {
                    "GET \(path) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(fixture.red)\r\n\(extra)\r\n"
                }
                // The first goes to the router; the hot blob behind it must wait for it rather than overtake it.
                try await socket.send(Array((request("/v1/packs") + request("/v1/blobs/\(digest)") + request("/healthz", "Connection: close\r\n")).utf8))
                let text = String(decoding: try await socket.receiveAll(), as: UTF8.self)
                let packs = try #require(text.range(of: Fixture.dungeon)).lowerBound
                let blob = try #require(text.range(of: "ETag: \"\(digest)\"", options: .caseInsensitive)).lowerBound
                let health = try #require(text.range(of: #""status":"ok""#)).lowerBound
                #expect(packs < blob && blob < health, "responses out of order")
                #expect(text.components(separatedBy: "HTTP/1.1 200").count == 4)
                #expect(bytes.count > 0)
            }
        }
    }
}
