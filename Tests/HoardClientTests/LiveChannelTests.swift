import Foundation
import HoardCore
import Testing

@testable import HoardClient

/// A connector that plays scripted connections: each a list of server messages, then a failure, a clean close,
/// or silence until the channel closes it. Once the scripts are used up, every connection plays `fallback`.
final class ScriptedConnector: LiveConnector {
    enum Ending: Sendable {
        case fail, close, hang
    }

    struct Script: Sendable {
        var refusal: HoardClientError?
        var messages: [String] = []
        var ending = Ending.hang
    }

    private let scripts: Locked<[Script]>
    private let fallback: Script
    let urls = Locked([URL]())
    let tokens = Locked([String?]())
    let sent = Locked([String]())

    init(_ scripts: [Script], then fallback: Script = Script()) {
        self.scripts = Locked(scripts)
        self.fallback = fallback
    }

    func connect(to url: URL, token: String?) async throws -> any LiveConnection {
        urls.withLock { $0.append(url) }
        tokens.withLock { $0.append(token) }
        let script = scripts.withLock { $0.isEmpty ? fallback : $0.removeFirst() }
        if let refusal = script.refusal { throw refusal }
        return Connection(script: script, sent: sent)
    }

    final class Connection: LiveConnection {
        let pending: Locked<[String]>
        let ending: Ending
        let sent: Locked<[String]>

        init(script: Script, sent: Locked<[String]>) {
            pending = Locked(script.messages)
            ending = script.ending
            self.sent = sent
        }

        func receive() async throws -> String? {
            if let next = pending.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return next }
            switch ending {
            case .fail: throw HoardClientError(.network, "scripted drop")
            case .close: return nil
            case .hang:
                try await Task.sleep(for: .seconds(3600))
                return nil
            }
        }

        func send(_ text: String) async throws { sent.withLock { $0.append(text) } }
        func close() {}
    }

    /// The `since` query of every connection, in order (nil when absent).
    var sinces: [Int64?] {
        urls.current.map { url in
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "since" }?.value.flatMap { Int64($0) }
        }
    }
}

func fastRetries(_ connector: any LiveConnector) -> LiveOptions {
    var options = LiveOptions()
    options.firstRetryDelay = .milliseconds(10)
    options.maxRetryDelay = .milliseconds(50)
    options.connector = connector
    return options
}

func op(_ seq: Int, _ value: String) -> String {
    #"{"from":"p1","op":{"move":"\#(value)"},"seq":\#(seq),"type":"op"}"#
}

@Suite(.timeLimit(.minutes(1))) struct LiveChannelTests {
    static let client = HoardClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: "hoard_p_secret")

    @Test func theLiveURLCarriesTheSequenceNumberAndTheHostsDisplayName() throws {
        let client = HoardClient(baseURL: URL(string: "https://nas.local:8443/hoard/")!)
        #expect(try client.liveURL(sessionId: "s1", since: 7, displayName: "Greta Ö & co").absoluteString
            == "wss://nas.local:8443/hoard/v1/sessions/s1/live?since=7&name=Greta%20%C3%96%20%26%20co")
        #expect(try client.liveURL(sessionId: "s1", since: nil).absoluteString == "wss://nas.local:8443/hoard/v1/sessions/s1/live")
    }

    @Test func aDroppedChannelReconnectsFromTheLastSequenceNumber() async throws {
        let connector = ScriptedConnector([
            .init(messages: [#"{"event":"joined","participant":{"id":"p2","name":"Bo"},"seq":5,"type":"presence"}"#, op(6, "a")], ending: .fail),
            .init(messages: [op(7, "b")], ending: .close),
            .init(messages: [op(8, "c")]),
        ])
        let channel = Self.client.liveChannel(sessionId: "s1", since: 4, options: fastRetries(connector))
        var seen: [String] = []
        for try await event in channel.events {
            switch event {
            case .connected(let since): seen.append("connected \(since.map(String.init) ?? "-")")
            case .disconnected: seen.append("disconnected")
            case .presence(let seq, let change, let who): seen.append("#\(seq) \(who.name) \(change.rawValue)")
            case .op(let seq, _, let op): seen.append("#\(seq) \(op["move"]?.stringValue ?? "?")")
            default: seen.append("other")
            }
            if event.seq == 8 { break }
        }
        #expect(seen == [
            "connected 4", "#5 Bo joined", "#6 a", "disconnected", "connected 6", "#7 b", "disconnected", "connected 7", "#8 c",
        ])
        #expect(connector.sinces == [4, 6, 7])
        #expect(connector.tokens.current == ["hoard_p_secret", "hoard_p_secret", "hoard_p_secret"])
        #expect(connector.urls.current.first?.absoluteString == "ws://127.0.0.1:9/v1/sessions/s1/live?since=4")
        #expect(channel.lastSeq == 8)
    }

    @Test func aSnapshotMovesTheSequenceNumberOn() async throws {
        let digest = digest(of: Data("map".utf8))
        let connector = ScriptedConnector([
            .init(messages: [#"{"map":{"a":1},"mapDigest":"\#(digest)","seq":40,"type":"snapshot"}"#], ending: .fail),
            .init(messages: [op(41, "x")]),
        ])
        let events = Self.client.live(sessionId: "s1", since: nil, options: fastRetries(connector))
        for try await event in events {
            if case .snapshot(let seq, let mapDigest, let map) = event {
                #expect(seq == 40)
                #expect(mapDigest == digest)
                #expect(map["a"] == .number(1))
            }
            if event.seq == 41 { break }
        }
        #expect(connector.sinces == [nil, 40])
    }

    @Test func aRefusedChannelStopsWithTheServersAnswer() async throws {
        let connector = ScriptedConnector([.init(refusal: HoardClientError(.server, "no session", status: 404, serverCode: "NOT_FOUND"))])
        var events: [LiveEvent] = []
        await #expect {
            for try await event in Self.client.live(sessionId: "gone", since: 0, options: fastRetries(connector)) { events.append(event) }
        } throws: { error in (error as? HoardClientError)?.status == 404 }
        #expect(connector.urls.current.count == 1, "a 404 is not retried")
        #expect(events.isEmpty)
    }

    @Test func aChannelGivesUpAfterTooManyFailuresInARow() async throws {
        let connector = ScriptedConnector(Array(repeating: .init(refusal: HoardClientError(.network, "unreachable")), count: 10))
        var options = fastRetries(connector)
        options.maxConsecutiveFailures = 3
        var disconnections = 0
        await #expect(throws: HoardClientError.self) {
            for try await event in Self.client.live(sessionId: "s1", since: 0, options: options) {
                if case .disconnected = event { disconnections += 1 }
            }
        }
        #expect(disconnections == 3)
        #expect(connector.urls.current.count == 4)
    }

    @Test func messagesAreSentOnlyWhileConnected() async throws {
        let connector = ScriptedConnector([.init(messages: [op(1, "a")])])
        let channel = Self.client.liveChannel(sessionId: "s1", since: 0, options: fastRetries(connector))
        // Refused every time, not just once: a single refusal let the channel connect after the 10 ms back-off, and
        // on a loaded machine the grab below could come later than that and find it connected.
        let unreachable = HoardClient(baseURL: URL(string: "http://127.0.0.1:9")!).liveChannel(
            sessionId: "s1", since: 0, options: fastRetries(ScriptedConnector([], then: .init(refusal: HoardClientError(.network, "down")))))
        await #expect { try await unreachable.grab("door") } throws: { ($0 as? HoardClientError)?.code == .notConnected }
        unreachable.close()
        for try await event in channel.events where event.seq == 1 { break }
        let opId = try await channel.send(.move(token: "t1", x: 2, y: 3))
        try await channel.grab("t1")
        try await channel.release("t1")
        let sent = try connector.sent.current.map { try JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
        #expect(sent == [
            .object([
                "type": .string("op"), "opId": .string(opId),
                "op": .object(["kind": .string("move"), "token": .string("t1"), "x": .number(2), "y": .number(3)]),
            ]),
            .object(["type": .string("grab"), "entity": .string("t1")]),
            .object(["type": .string("release"), "entity": .string("t1")]),
        ])
        channel.close()
    }

    @Test func everyServerEventDecodes() throws {
        let asset = digest(of: Data("asset".utf8)), blob = digest(of: Data("blob".utf8)), map = digest(of: Data("map".utf8))
        let manifest = #""assets":[{"digest":"\#(asset)","kind":"token","name":"goblin","pack":"p","footprint":{"width":1,"height":1},"#
            + #""variants":[{"scale":1,"digest":"\#(blob)","width":64,"height":64,"size":10,"mediaType":"image/png"}]}],"#
            + #""blobs":[{"digest":"\#(blob)","size":10,"mediaType":"image/png"}]"#
        let cases: [(String, (LiveEvent) -> Bool)] = [
            (op(3, "x"), { if case .op(3, "p1", _) = $0 { true } else { false } }),
            (#"{"event":"left","participant":{"id":"p","name":"N"},"seq":4,"type":"presence"}"#,
             { if case .presence(4, .left, let who) = $0 { who.name == "N" } else { false } }),
            (#"{\#(manifest),"seq":5,"type":"assets"}"#,
             { if case .assets(5, let m) = $0 { m.assets.first?.smallestVariant?.digest == blob && m.blobs.count == 1 } else { false } }),
            (#"{"by":"p","entity":"t1","seq":6,"type":"grab"}"#, { if case .grab(6, "t1", "p") = $0 { true } else { false } }),
            (#"{"by":"p","entity":"t1","seq":7,"type":"release"}"#, { if case .release(7, "t1", "p") = $0 { true } else { false } }),
            (#"{\#(manifest),"map":[],"mapDigest":"\#(map)","seq":8,"type":"map"}"#,
             { if case .map(8, map, _, let m) = $0 { m.assets.count == 1 } else { false } }),
            (#"{"map":{},"mapDigest":"\#(map)","seq":9,"type":"snapshot"}"#, { if case .snapshot(9, map, _) = $0 { true } else { false } }),
            (#"{"code":"GRAB_DENIED","message":"held","type":"error"}"#, { if case .error("GRAB_DENIED", "held") = $0 { true } else { false } }),
            (#"{"seq":10,"type":"dice","roll":6}"#, { if case .unknown("dice", 10, _) = $0 { true } else { false } }),
            (#"{"from":"p1","roll":{"formula":"d6","index":11,"terms":[],"total":4},"seq":11,"type":"rolled"}"#,
             { if case .rolled(11, "p1", let event) = $0 { event["roll"]?["total"] == .number(4) } else { false } }),
            (#"{"blind":[],"commitment":"c","seed":"\#(String(repeating: "0a", count: 32))","seq":12,"type":"revealed"}"#,
             { if case .revealed(12, let seed, []) = $0 { seed.bytes == [UInt8](repeating: 10, count: 32) } else { false } }),
        ]
        for (text, matches) in cases {
            let event = try LiveEvent.decode(text)
            #expect(matches(event), "\(text) → \(event)")
        }
        #expect(throws: HoardClientError.self) { try LiveEvent.decode(#"{"seq":1}"#) }
        #expect(throws: HoardClientError.self) { try LiveEvent.decode(#"{"type":"op","seq":1}"#) }
        #expect(throws: HoardClientError.self) { try LiveEvent.decode("not json") }
    }
}
