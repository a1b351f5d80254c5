import Foundation
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// Who hears an ambient sound, decided again as tokens move and doors open: a player who starts hearing one is sent it
/// with its position on the server's clock, one who stops is told so, and one who cannot hear it never receives it.
@Suite(.timeLimit(.minutes(2))) struct HearingSocketTests {
    /// Ann's session on an 8 × 6 map, her token `t1` at (1, 1).
    struct Room: Sendable {
        let client: any TestClientProtocol
        let port: Int
        let id: String
        let host: String
        let ann: String
        let track: String

        /// Sends `ops` as `token`, each paced by its echo, and returns what arrived until the one that says `stop`.
        func send(_ ops: [String], as token: String, stop: String) async throws -> [String] {
            try await LiveClient.exchange(port: port, session: id, token: token, send: ops, until: 40, stop: "\"\(stop)\"", paced: true)
        }
    }

    /// Runs `body` in Ann's session after the host gave her `t1` and sent `setup` (given the track).
    static func withAnn(
        _ clock: TestClock, setup: @escaping @Sendable (_ track: String) -> [String], _ body: @escaping @Sendable (Room) async throws -> Void
    ) async throws {
        try await Fixture.with(packs: true, { $0.clock = { clock.date } }) { fixture in
            let track = try await JukeboxSocketTests.theme(fixture)
            let art = try #require(try fixture.hoard.catalog.assets(kind: .token).first).digest.description
            let red = fixture.red
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let made = try await client.makeSession(token: red, asset: art)
                let ann = try await client.joinSession(code: made.code, name: "Ann")
                let shown = try await client.json(.get, "/v1/sessions/\(made.id)", token: red)
                let people = try #require(shown.json["participants"] as? [[String: Any]])
                let annId = try #require(people.first { $0["name"] as? String == "Ann" }?["id"] as? String)
                let room = Room(client: client, port: port, id: made.id, host: red, ann: ann, track: track)
                let give = #"{"type":"op","opId":"give","op":{"kind":"assign","token":"t1","owner":"\#(annId)"}}"#
                let done = try await room.send([give] + setup(track) + [Self.message("set")], as: red, stop: "set")
                #expect(!done.contains { $0.contains("\"error\"") }, "\(done)")
                try await body(room)
            }
        }
    }

    static func message(_ id: String) -> String { #"{"type":"op","opId":"\#(id)","op":{"kind":"message","text":"\#(id)"}}"# }

    static func move(_ id: String, _ x: Int, _ y: Int) -> String {
        #"{"type":"op","opId":"\#(id)","op":{"kind":"move","token":"t1","x":\#(x),"y":\#(y)}}"#
    }

    /// What the event with op id `id` among `texts` tells of channel `channel`: the channel, NSNull (stopped), or nil.
    static func heard(_ texts: [String], op id: String, channel: String = "rain") throws -> Any? {
        let event = try #require(LiveClient.objects(texts).first { $0["opId"] as? String == id }, "\(texts)")
        return (event["audio"] as? [String: Any])?[channel]
    }

    @Test func aPlayerIsToldToStartASoundAsTheirTokenMovesIntoItsRadiusAndToStopItAsItLeaves() async throws {
        let clock = TestClock()
        try await Self.withAnn(clock, setup: { track in
            [#"{"type":"op","opId":"rain","op":{"kind":"play","channel":"rain","track":"\#(track)","loop":true,"at":[6.5,1.5],"radius":2}}"#]
        }) { room in
            #expect(try await room.client.fetch("/v1/blobs/\(room.track)", token: room.ann).status == .notFound, "not heard: not hers to fetch")
            clock.advance(12)
            let inside = try await room.send([Self.move("in", 5, 1)], as: room.ann, stop: "in")
            let started = try #require(try Self.heard(inside, op: "in") as? [String: Any], "\(inside)")
            let position = try #require(started["position"] as? Double)
            #expect(abs(position - 12) <= 0.1, "position \(position) s on the server's clock")
            #expect(started["track"] as? String == room.track && started["loop"] as? Bool == true)
            let event = try #require(LiveClient.objects(inside).first { $0["opId"] as? String == "in" })
            #expect(event["serverTime"] as? Double == clock.milliseconds && (event["op"] as? [String: Any])?["kind"] as? String == "move")
            #expect(try await room.client.fetch("/v1/blobs/\(room.track)", token: room.ann).status == .ok, "heard: hers to fetch")

            clock.advance(3)
            let outside = try await room.send([Self.move("out", 1, 1)], as: room.ann, stop: "out")
            #expect(try Self.heard(outside, op: "out") is NSNull, "\(outside)")
            let still = try await room.send([Self.move("far", 1, 2)], as: room.ann, stop: "far")
            #expect(try Self.heard(still, op: "far") == nil, "no change, nothing said")
        }
    }

    /// A closed door at x = 4 between Ann's side and the rain at (6.5, 1.5), radius 4.
    static func doorAndRain(_ track: String) -> [String] {
        [
            #"{"type":"op","opId":"door","op":{"kind":"wall","add":{"id":"d","from":[4,0],"to":[4,6],"door":true}}}"#,
            #"{"type":"op","opId":"rain","op":{"kind":"play","channel":"rain","track":"\#(track)","at":[6.5,1.5],"radius":4}}"#,
        ]
    }

    static func door(_ id: String, open: Bool) -> String { #"{"type":"op","opId":"\#(id)","op":{"kind":"door","wall":"d","open":\#(open)}}"# }

    @Test func aDoorOpeningStartsTheSoundForAPlayerBehindItAndClosingItStopsIt() async throws {
        let clock = TestClock()
        try await Self.withAnn(clock, setup: Self.doorAndRain) { room in
            // Within the radius, behind the closed door: not heard.
            let behind = try await room.send([Self.move("behind", 3, 1)], as: room.ann, stop: "behind")
            #expect(try Self.heard(behind, op: "behind") == nil, "\(behind)")
            async let told = LiveClient.exchange(port: room.port, session: room.id, token: room.ann, until: 20, stop: #""shut""#)
            try await Task.sleep(for: .milliseconds(300))
            clock.advance(5)
            _ = try await room.send([Self.door("open", open: true), Self.door("shut", open: false)], as: room.host, stop: "shut")
            let texts = try await told
            let started = try #require(try Self.heard(texts, op: "open") as? [String: Any], "\(texts)")
            #expect(abs((started["position"] as? Double ?? -1) - 5) <= 0.1 && started["track"] as? String == room.track)
            #expect(try Self.heard(texts, op: "shut") is NSNull, "\(texts)")
        }
    }

    @Test func aPlayThatReplacesTheTrackTellsThoseWhoHeardItAndCannotHearTheNewOneToStop() async throws {
        let clock = TestClock()
        try await Self.withAnn(clock, setup: { track in
            [#"{"type":"op","opId":"rain","op":{"kind":"play","channel":"rain","track":"\#(track)","loop":true,"at":[6.5,1.5],"radius":2}}"#]
        }) { room in
            let inside = try await room.send([Self.move("in", 5, 1)], as: room.ann, stop: "in")
            #expect(try Self.heard(inside, op: "in") is [String: Any], "Ann hears the rain: \(inside)")
            async let told = LiveClient.exchange(port: room.port, session: room.id, token: room.ann, until: 20, stop: #""end""#)
            try await Task.sleep(for: .milliseconds(300))
            clock.advance(4)
            // The host plays another sound on the rain's channel, far from Ann's token; then one near it again.
            let far = #"{"type":"op","opId":"far","op":{"kind":"play","channel":"rain","track":"\#(room.track)","at":[0.5,5.5],"radius":1}}"#
            let near = #"{"type":"op","opId":"near","op":{"kind":"play","channel":"rain","track":"\#(room.track)","at":[5.5,1.5],"radius":1}}"#
            _ = try await room.send([far, near, Self.message("end")], as: room.host, stop: "end")
            let ops = LiveClient.objects(try await told).compactMap { $0["op"] as? [String: Any] }.filter { $0["channel"] as? String == "rain" }
            #expect(ops.count == 2, "\(ops)")
            let stop = try #require(ops.first)
            #expect(stop["kind"] as? String == "stop" && stop["serverTime"] as? Double == clock.milliseconds, "\(stop)")
            #expect(stop["at"] == nil && stop["track"] == nil, "nothing of the sound she cannot hear: \(stop)")
            let again = try #require(ops.last)
            #expect(again["kind"] as? String == "play" && again["at"] as? [Double] == [5.5, 1.5], "she hears the next one: \(again)")
            // Replayed from the log, she is told the same.
            let replayed = try await LiveClient.exchange(port: room.port, session: room.id, token: room.ann, since: 0, until: 60, stop: #""end""#)
            let kinds = LiveClient.objects(replayed).compactMap { $0["op"] as? [String: Any] }.filter { $0["channel"] as? String == "rain" }
            #expect(kinds.compactMap { $0["kind"] as? String }.suffix(2) == ["stop", "play"], "\(kinds)")
        }
    }

    @Test func aPlayerNeverReceivesASoundTheyCannotHear() async throws {
        let clock = TestClock()
        try await Self.withAnn(clock, setup: Self.doorAndRain) { room in
            async let live = LiveClient.exchange(port: room.port, session: room.id, token: room.ann, until: 60, stop: #""end""#)
            try await Task.sleep(for: .milliseconds(300))
            // Ann wanders on her side of the door (in the radius and out of it) while the host plays with the rain.
            _ = try await room.send([Self.move("wander1", 3, 1), Self.move("wander2", 3, 4), Self.move("wander3", 0, 5)], as: room.ann, stop: "wander3")
            let jukebox = ["volume\",\"volume\":0.5", "pause\"", "play\"", "stop\"", "play\",\"track\":\"\(room.track)\",\"at\":[7,5],\"radius\":3"]
            let ops = jukebox.enumerated().map { #"{"type":"op","opId":"j\#($0.offset)","op":{"channel":"rain","kind":"\#($0.element)}}"# }
            _ = try await room.send(ops + [Self.door("open", open: true), Self.message("end")], as: room.host, stop: "end")
            let replayed = try await LiveClient.exchange(port: room.port, session: room.id, token: room.ann, since: 0, until: 60, stop: #""end""#)
            let shown = try await room.client.json(.get, "/v1/sessions/\(room.id)", token: room.ann)
            for text in try await live + replayed + ["\(shown.json)"] {
                #expect(!text.contains("rain") && !text.contains(room.track), "\(text)")
            }
            #expect(try await room.client.fetch("/v1/blobs/\(room.track)", token: room.ann).status == .notFound)
        }
    }
}
