#if canImport(Glibc)
import Foundation
import HoardCore
import Testing

@testable import HoardClient

/// The live channel against the real server's WebSocket, through the command line's NIO transport
/// (``DroppableLiveConnector``; on Linux, URLSessionWebSocketTask needs a libcurl with WebSocket support).
@Suite(.timeLimit(.minutes(2))) struct LiveEndToEndTests {
    /// The next event that `matches`, skipping the others; nil when the channel ends first.
    static func next(
        _ iterator: inout AsyncThrowingStream<LiveEvent, any Error>.Iterator, _ matches: (LiveEvent) -> Bool
    ) async throws -> LiveEvent? {
        while let event = try await iterator.next() {
            if matches(event) { return event }
        }
        return nil
    }

    @Test func theHostsChangesReachAPlayerAndNewArtIsPrefetched() async throws {
        try await ServerFixture.with { fixture in
            let start = try await fixture.upload(sizes: [100])[0]
            let host = fixture.client()
            let created = try await host.createSession(name: "Crypt", map: .array([.string(start.digest.description)]))
            let joined = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Ann")
            try await withCache { cache in
                let player = joined.live(prefetchInto: cache, options: fastRetries(DroppableLiveConnector()))
                var events = player.events.makeAsyncIterator()
                let arrived = try await Self.next(&events) {
                    if case .presence(_, .joined, let who) = $0 { who.id == joined.participantId } else { false }
                }
                #expect(arrived != nil)

                let hostChannel = host.liveChannel(sessionId: created.id, since: nil, options: fastRetries(DroppableLiveConnector()))
                #expect(await eventually { hostChannel.isConnected })
                let art = try await fixture.upload(sizes: [3_000, 80_000])
                try await hostChannel.send(.custom(.object(["place": .string(art[0].digest.description), "hd": .string(art[1].digest.description)])))

                var sawAssets = false, sawOp = false, prefetched: SyncSummary?
                while prefetched == nil || !sawOp, let event = try await events.next() {
                    switch event {
                    case .assets(_, let manifest): sawAssets = Set(manifest.blobs.map(\.digest)) == Set(art.map(\.digest))
                    case .op(_, let from, let op):
                        sawOp = op["payload"]?["place"]?.stringValue == art[0].digest.description
                        #expect(from.hasPrefix("host:"))
                    case .prefetched(let summary): prefetched = summary
                    case .prefetchFailed(let error): Issue.record("prefetch failed: \(error)")
                    default: break
                    }
                }
                #expect(sawAssets)
                #expect(prefetched?.blobsFetched == 2)
                for blob in art { #expect(try cache.read(blob.digest) == blob.bytes) }
                player.close()
                hostChannel.close()
            }
        }
    }

    @Test func aDroppedConnectionResumesWithoutGapsOrRepeats() async throws {
        try await ServerFixture.with { fixture in
            let start = try await fixture.upload(sizes: [100])[0]
            let host = fixture.client()
            let created = try await host.createSession(name: "Crypt", map: .array([.string(start.digest.description)]))
            let joined = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Ann")
            let playerSockets = DroppableLiveConnector()
            let player = joined.live(options: fastRetries(playerSockets))
            let hostChannel = host.liveChannel(sessionId: created.id, since: nil, options: fastRetries(DroppableLiveConnector()))
            #expect(await eventually { hostChannel.isConnected && player.isConnected })

            var events = player.events.makeAsyncIterator()
            var seqs: [Int64] = []
            var moves: [String] = []
            func play(until last: String) async throws {
                while moves.last != last, let event = try await events.next() {
                    if let seq = event.seq { seqs.append(seq) }
                    if case .op(_, _, let op) = event, let move = op["payload"]?["move"]?.stringValue { moves.append(move) }
                }
            }
            for move in ["1", "2", "3"] { try await hostChannel.send(.custom(.object(["move": .string(move)]))) }
            try await play(until: "3")
            let beforeDrop = try #require(player.lastSeq)
            playerSockets.dropAll()
            for move in ["4", "5", "6"] { try await hostChannel.send(.custom(.object(["move": .string(move)]))) }
            try await play(until: "6")

            #expect(moves == ["1", "2", "3", "4", "5", "6"])
            #expect(seqs == Array(seqs[0]...seqs[seqs.count - 1]), "every sequence number once, in order: \(seqs)")
            let sinces = playerSockets.urls.current.map {
                URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "since" }?.value.flatMap { Int64($0) }
            }
            #expect(sinces.count == 2, "one reconnection")
            #expect(sinces.first == joined.session.seq)
            #expect((sinces.last ?? nil).map { $0 >= beforeDrop } == true, "the reconnection continues after what was received")
            player.close()
            hostChannel.close()
        }
    }

    @Test func opsSentWhileReconnectingAreSentAfterTheResyncAndAppliedOnce() async throws {
        try await ServerFixture.with { fixture in
            let art = try await fixture.upload(sizes: [100])[0].digest.description
            let host = fixture.client()
            let map = JSONValue.object([
                "schema": .string("hoard.map/v1"), "grid": .object(["width": .number(16), "height": .number(16)]),
                "tokens": .array([.object(["id": .string("t"), "asset": .string(art), "x": .number(0), "y": .number(0), "number": .number(1)])]),
            ])
            let created = try await host.createSession(name: "Crypt", map: map)
            let joined = try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Ann")
            let watcher = joined.live(options: fastRetries(DroppableLiveConnector()))
            let hostSockets = DroppableLiveConnector()
            let hostChannel = host.liveChannel(sessionId: created.id, since: nil, options: fastRetries(hostSockets))
            #expect(await eventually(seconds: 30) { hostChannel.isConnected && watcher.isConnected })
            try await hostChannel.send(.move(token: "t", x: 1, y: 0))
            // The host's link drops: what it sends meanwhile waits, and goes once the channel is back.
            hostSockets.dropAll()
            for x in 2...5 { try await hostChannel.send(.move(token: "t", x: x, y: 0)) }
            #expect(await eventually(seconds: 30) { hostChannel.pendingOps.isEmpty }, "every op answered")
            var moves: [Int] = []
            var events = watcher.events.makeAsyncIterator()
            while moves.last != 5, let event = try await events.next() {
                if case .op(_, _, let op) = event, case .number(let x)? = op["x"] { moves.append(Int(x)) }
            }
            #expect(moves == [1, 2, 3, 4, 5], "each op applied once, in order")
            let state = try await host.session(id: created.id)
            guard case .array(let tokens)? = state.map["tokens"] else { Issue.record("no tokens"); return }
            #expect(tokens.first?["x"] == .number(5))
            watcher.close()
            hostChannel.close()
        }
    }
}
#endif
