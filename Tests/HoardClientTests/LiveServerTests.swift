import Foundation
import HoardCore
import Testing

@testable import HoardClient

/// The live channel with a real server behind it: prefetching art from events, and the default transport.
@Suite(.timeLimit(.minutes(2))) struct LiveServerTests {
    static func manifestJSON(_ assets: [ManifestAsset]) throws -> String {
        let data = try JSONEncoder().encode(SessionManifest(assets: assets))
        return String(decoding: data, as: UTF8.self).dropFirst().dropLast().description
    }

    @Test func artThatAnAssetsEventReferencesIsPrefetchedIntoTheCache() async throws {
        try await ServerFixture.with { fixture in
            let blobs = try await fixture.upload(sizes: [1_000, 120_000])
            let event = #"{\#(try Self.manifestJSON([asset("new", [blobs[1]], preview: blobs[0])])),"seq":3,"type":"assets"}"#
            let connector = ScriptedConnector([.init(messages: [event])])
            try await withCache { cache in
                let events = fixture.client().live(sessionId: "s1", since: 2, prefetchInto: cache, options: fastRetries(connector))
                var sawAssets = false
                for try await event in events {
                    if case .assets(3, let manifest) = event { sawAssets = manifest.assets.count == 1 }
                    if case .prefetched(let summary) = event {
                        #expect(summary.blobsFetched == 2)
                        break
                    }
                    if case .prefetchFailed(let error) = event { Issue.record("prefetch failed: \(error)") }
                }
                #expect(sawAssets)
                for blob in blobs { #expect(try cache.read(blob.digest) == blob.bytes) }
            }
        }
    }

    @Test func aSnapshotRefetchesTheSessionAndPrefetchesItsArt() async throws {
        try await ServerFixture.with { fixture in
            let picture = try await fixture.upload(sizes: [2_000])[0]
            let host = fixture.client()
            let created = try await host.createSession(name: "Crypt", map: .object(["bg": .string(picture.digest.description)]))
            let joined = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Cy")
            let snapshot = #"{"map":{},"mapDigest":"\#(created.mapDigest)","seq":0,"type":"snapshot"}"#
            let connector = ScriptedConnector([.init(messages: [snapshot])])
            try await withCache { cache in
                for try await event in joined.live(prefetchInto: cache, options: fastRetries(connector)).events {
                    if case .prefetched(let summary) = event {
                        #expect(summary.blobsFetched == 1)
                        break
                    }
                    if case .prefetchFailed(let error) = event { Issue.record("prefetch failed: \(error)") }
                }
                #expect(try cache.read(picture.digest) == picture.bytes)
                #expect(connector.tokens.current == [joined.participantToken])
            }
        }
    }

    /// URLSessionWebSocketTask works on Apple platforms; on Linux it needs a libcurl with WebSocket support, and
    /// without one the channel must stop with `webSocketUnsupported` rather than retry forever.
    @Test func theDefaultTransportDeliversEventsOrSaysItIsUnsupported() async throws {
        try await ServerFixture.with { fixture in
            let picture = try await fixture.upload(sizes: [100])[0]
            let created = try await fixture.client().createSession(name: "Crypt", map: .array([.string(picture.digest.description)]))
            let joined = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Di")
            var options = LiveOptions()
            options.maxConsecutiveFailures = 2
            options.firstRetryDelay = .milliseconds(10)
            do {
                for try await event in joined.live(options: options).events {
                    if case .presence(_, .joined, let who) = event, who.id == joined.participantId { break }
                }
            } catch let error as HoardClientError {
                #if os(Linux)
                #expect(error.code == .webSocketUnsupported, "\(error)")
                #else
                Issue.record("URLSessionWebSocketTask failed: \(error)")
                #endif
            }
        }
    }
}
