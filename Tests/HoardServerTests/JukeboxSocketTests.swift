import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// A clock tests move by hand: the server's, injected through ``ServerConfiguration/clock``.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now = Date(timeIntervalSince1970: 1_800_000_000)

    /// The time now.
    var date: Date { lock.withLock { now } }
    /// Unix milliseconds now.
    var milliseconds: Double { date.timeIntervalSince1970 * 1000 }
    /// Moves the clock on.
    func advance(_ seconds: Double) { lock.withLock { now = now.addingTimeInterval(seconds) } }
}

/// The jukebox over the live channel: ops stamped with the server's clock, a late joiner told where each channel is,
/// the clock probe, and who hears what.
@Suite(.timeLimit(.minutes(2))) struct JukeboxSocketTests {
    /// A session with the audio pack's Tavern Theme; returns its asset digest.
    static func theme(_ fixture: Fixture) async throws -> String {
        _ = try await AudioStreamingTests.importSounds(fixture)
        return try #require(try fixture.hoard.catalog.assets(kind: .audio).first { $0.name == "Tavern Theme" }).digest.description
    }

    /// The `audio` member of the first snapshot a new player of `room` receives.
    static func joiningPlayerHears(port: Int, room: (id: String, code: String), client: some TestClientProtocol) async throws -> [String: Any] {
        let player = try await client.joinSession(code: room.code, name: "Late")
        let texts = try await LiveClient.exchange(port: port, session: room.id, token: player, until: 1, stop: #""type":"snapshot""#)
        let snapshot = try #require(LiveClient.objects(texts).first { $0["type"] as? String == "snapshot" }, "\(texts)")
        #expect(snapshot["serverTime"] as? Double != nil)
        return snapshot["audio"] as? [String: Any] ?? [:]
    }

    @Test func aPlayerJoining30SecondsAfterPlayIsToldPosition30OnTheServersClock() async throws {
        let clock = TestClock()
        try await Fixture.with(packs: false, { $0.clock = { clock.date } }) { fixture in
            let track = try await Self.theme(fixture)
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let room = try await client.makeSession(token: fixture.red)
                let play = #"{"type":"op","opId":"p1","op":{"kind":"play","channel":"music","track":"\#(track)","loop":true,"serverTime":1}}"#
                let echoed = try await LiveClient.exchange(port: port, session: room.id, token: fixture.red, send: [play], until: 10, stop: #""p1""#)
                let op = try #require(LiveClient.objects(echoed).first { $0["opId"] as? String == "p1" }?["op"] as? [String: Any], "\(echoed)")
                #expect(op["serverTime"] as? Double == clock.milliseconds, "the server's clock, not the client's 1")
                clock.advance(30)
                let music = try #require(try await Self.joiningPlayerHears(port: port, room: room, client: client)["music"] as? [String: Any])
                let position = try #require(music["position"] as? Double)
                #expect(abs(position - 30) <= 0.1, "position \(position) s")
                #expect(music["track"] as? String == track && music["paused"] as? Bool == false && music["loop"] as? Bool == true)

                // Paused 5 s later, it stays at 35 s however long the table waits.
                clock.advance(5)
                let pause = #"{"type":"op","opId":"p2","op":{"kind":"pause","channel":"music"}}"#
                _ = try await LiveClient.exchange(port: port, session: room.id, token: fixture.red, send: [pause], until: 10, stop: #""p2""#)
                clock.advance(100)
                let paused = try #require(try await Self.joiningPlayerHears(port: port, room: room, client: client)["music"] as? [String: Any])
                #expect(abs((paused["position"] as? Double ?? -1) - 35) <= 0.1 && paused["paused"] as? Bool == true, "\(paused)")
            }
        }
    }

    @Test func theClockProbeAnswersWithTheServersTime() async throws {
        let clock = TestClock()
        try await Fixture.with(packs: false, { $0.clock = { clock.date } }) { fixture in
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let room = try await client.makeSession(token: fixture.red)
                let player = try await client.joinSession(code: room.code, name: "Ann")
                let texts = try await LiveClient.exchange(
                    port: port, session: room.id, token: player, send: [#"{"type":"time","t0":12345}"#], until: 10, stop: #""type":"time""#)
                let answer = try #require(LiveClient.objects(texts).first { $0["type"] as? String == "time" }, "\(texts)")
                #expect(answer["t0"] as? Double == 12345 && answer["serverTime"] as? Double == clock.milliseconds)
            }
        }
    }

    @Test func playersMayNotPlayAndAPreviewReachesNoPlayer() async throws {
        try await Fixture.with(packs: false) { fixture in
            let track = try await Self.theme(fixture)
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let room = try await client.makeSession(token: fixture.red)
                let player = try await client.joinSession(code: room.code, name: "Ann")
                let play = #"{"type":"op","opId":"x","op":{"kind":"play","channel":"music","track":"\#(track)"}}"#
                let refused = try await LiveClient.exchange(port: port, session: room.id, token: player, send: [play], until: 10, stop: #""x""#)
                #expect(LiveClient.objects(refused).contains { $0["code"] as? String == "FORBIDDEN" }, "\(refused)")
                let preview = #"{"type":"op","opId":"pv","op":{"kind":"play","channel":"preview","track":"\#(track)","to":["host"]}}"#
                _ = try await LiveClient.exchange(port: port, session: room.id, token: fixture.red, send: [preview], until: 10, stop: #""pv""#)
                #expect(try await Self.joiningPlayerHears(port: port, room: room, client: client).isEmpty, "the host's preview is theirs alone")
            }
        }
    }
}
