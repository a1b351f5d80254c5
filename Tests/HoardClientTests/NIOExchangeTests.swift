import Foundation
import HoardClientNIO
import HoardCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import HoardClient

/// The client over `NIOHTTPExchange` (what the command line uses) against the real server: the same answers as over
/// URLSession, connections kept alive and bounded, and a body left unread never holding a connection.
@Suite(.timeLimit(.minutes(2))) struct NIOExchangeTests {
    static func nio(maxConnections: Int = 8, timeout: TimeInterval = 60) -> (inout HoardClient.Configuration) -> Void {
        { $0.exchange = NIOHTTPExchange(maxConnections: maxConnections, timeout: timeout) }
    }

    @Test func aColdSyncThenAWarmOneOverNIO() async throws {
        try await ServerFixture.with { fixture in
            let (manifest, blobs) = try await SyncTests.scene(fixture)
            try await withCache { cache in
                let log = RequestLog()
                let client = fixture.client(log: log, Self.nio())
                let summary = try await client.sync(manifest, into: cache)
                for blob in blobs { #expect(try cache.read(blob.digest) == blob.bytes) }
                #expect(summary.blobsFetched == 5 && summary.bytesFetched == Int64(blobs.reduce(0) { $0 + $1.bytes.count }))
                #expect(log.all.filter { $0.path == "/v1/blobs/batch" }.count == 2 && log.all.count == 4)
                let warm = try await client.sync(manifest, into: cache)
                #expect(warm.requests == 0 && log.all.count == 4)
            }
        }
    }

    @Test func anInterruptedDownloadResumesWithARangeRequestOverNIO() async throws {
        try await ServerFixture.with { fixture in
            let blob = try await fixture.upload(sizes: [700_000])[0]
            try await withCache { cache in
                try blob.bytes.prefix(300_000).write(to: cache.partialURL(for: blob.digest))
                let log = RequestLog()
                let summary = try await fixture.client(log: log, Self.nio()).sync(SessionManifest(assets: [asset("big", [blob])]), into: cache)
                #expect(log.all.map(\.range) == ["bytes=300000-"])
                #expect(summary.bytesFetched == 400_000)
                #expect(try cache.read(blob.digest) == blob.bytes)
            }
        }
    }

    @Test func aHostUploadsFromFilesAndPlayersJoinColdThenWarmOverNIO() async throws {
        try await ServerFixture.with { fixture in
            try await withCache { local in
                let custom = [randomData(3_000), randomData(1_500_000)]
                for bytes in custom { try local.insert(bytes, as: digest(of: bytes)) }
                let map: JSONValue = .array(custom.map { .string(digest(of: $0).description) })
                let created = try await fixture.client(Self.nio()).createSession(name: "Crypt", map: map, localBlobs: local)
                #expect(Set(created.uploaded) == Set(custom.map { digest(of: $0) }), "both sent as files, one over a megabyte")
                for bytes in custom { #expect(try await fixture.hoard.store.read(digest(of: bytes), range: nil) == Array(bytes)) }

                try await withCache { cache in
                    var configuration = HoardClient.Configuration()
                    Self.nio()(&configuration)
                    let cold = try await HoardClient(baseURL: fixture.baseURL, configuration: configuration).join(
                        code: created.code, name: "Ann", cache: cache)
                    _ = try await cold.sync(into: cache)
                    for bytes in custom { #expect(try cache.read(digest(of: bytes)) == bytes) }
                    let player = HoardClient(baseURL: fixture.baseURL, configuration: configuration)
                    let warm = try await player.join(code: created.code, name: "Bo", cache: cache)
                    #expect(warm.snapshot != nil && warm.session.map == map)
                    #expect(try await warm.sync(into: cache).requests == 0 && player.requestCount == 2)
                }
            }
        }
    }

    @Test func theServersErrorsAndAnAbsentServerReadAsOverURLSession() async throws {
        try await ServerFixture.with { fixture in
            var configuration = HoardClient.Configuration()
            Self.nio()(&configuration)
            await #expect {
                _ = try await HoardClient(baseURL: fixture.baseURL, configuration: configuration).join(code: "ZZZZ-ZZZZ", name: "Ann")
            } throws: { error in
                let error = try #require(error as? HoardClientError)
                return error.status == 404 && error.serverCode == "UNKNOWN_CODE"
            }
        }
        var configuration = HoardClient.Configuration()
        configuration.attempts = 1
        Self.nio()(&configuration)
        await #expect {
            _ = try await HoardClient(baseURL: URL(string: "http://127.0.0.1:1")!, configuration: configuration).join(code: "A", name: "B")
        } throws: { error in (error as? HoardClientError)?.code == .network }
    }

    @Test func manyRequestsShareAFewConnections() async throws {
        try await ServerFixture.with { fixture in
            let blobs = try await fixture.upload(sizes: Array(repeating: 20_000, count: 6))
            let exchange = NIOHTTPExchange(maxConnections: 2, timeout: 60)
            // Twelve requests at once through two connections: the rest wait their turn and every one is answered.
            try await withThrowingTaskGroup(of: Data.self) { group in
                for blob in blobs + blobs {
                    group.addTask { try await Self.get(blob.digest, fixture, exchange).data }
                }
                var answers: [Data] = []
                for try await data in group { answers.append(data) }
                #expect(Set(answers) == Set(blobs.map(\.bytes)) && answers.count == 12)
            }
        }
    }

    @Test func aBodyLeftUnreadDoesNotHoldItsConnection() async throws {
        try await ServerFixture.with { fixture in
            let big = try await fixture.upload(sizes: [3_000_000])[0]
            let exchange = NIOHTTPExchange(maxConnections: 1, timeout: 60)
            for _ in 0..<3 {
                // One chunk of a 3 MB answer, then the stream is dropped: the only connection must come free.
                let streamed = try await Self.stream(big.digest, fixture, exchange)
                var iterator = streamed.body.makeAsyncIterator()
                #expect(try await iterator.next()?.isEmpty == false)
            }
            #expect(try await Self.get(big.digest, fixture, exchange).data == big.bytes)
        }
    }

    static func stream(_ digest: Digest, _ fixture: ServerFixture, _ exchange: NIOHTTPExchange) async throws -> HTTPStreamedResponse {
        var request = URLRequest(url: fixture.baseURL.appendingPathComponent("v1/blobs/\(digest)"))
        request.setValue("Bearer \(fixture.token)", forHTTPHeaderField: "Authorization")
        return try await exchange.stream(request, uploadFile: nil)
    }

    static func get(_ digest: Digest, _ fixture: ServerFixture, _ exchange: NIOHTTPExchange) async throws -> (status: Int, data: Data) {
        let streamed = try await stream(digest, fixture, exchange)
        var data = Data()
        for try await chunk in streamed.body { data.append(chunk) }
        return (streamed.response.statusCode, data)
    }
}
