import Foundation
import HoardRepository
import HummingbirdWebSocket
import NIOCore
import Testing

@testable import HoardServer

/// The live channel against clients that break the rules: fragment floods, broken frames, readers that stop reading,
/// floods of messages, too many sockets, a long log.
@Suite("Live channel under abuse", .timeLimit(.minutes(3)))
struct LiveAbuseTests {
    // MARK: The assembler

    static func assemble(_ frames: [(WebSocketDataFrame.Opcode, Bool, [UInt8])], maxBytes: Int = 100, maxFrames: Int = 4)
        -> [LiveMessageAssembler.Outcome]
    {
        var assembler = LiveMessageAssembler(maxBytes: maxBytes, maxFrames: maxFrames)
        return frames.map { assembler.take($0.0, fin: $0.1, data: ByteBuffer(bytes: $0.2)) }
    }

    @Test func theAssemblerPutsFragmentsTogether() {
        let outcomes = Self.assemble([
            (.text, false, Array("he".utf8)), (.continuation, false, []), (.continuation, true, Array("llo".utf8)),
            (.binary, true, [1, 2, 3]), (.text, true, Array("é".utf8)),
        ])
        #expect(outcomes == [.partial, .partial, .text("hello"), .binary(3), .text("é")])
    }

    @Test func theAssemblerCountsFramesAsWellAsBytes() {
        let empty = (WebSocketDataFrame.Opcode.continuation, false, [UInt8]())
        let frames = Self.assemble([(.text, false, [])] + Array(repeating: empty, count: 4))
        #expect(frames.last == .close(.policyViolation, "a message is at most 4 frames"))
        let bytes = Self.assemble([
            (.text, false, [UInt8](repeating: 65, count: 60)), (.continuation, true, [UInt8](repeating: 65, count: 41)),
        ])
        #expect(bytes.last == .close(.messageTooLarge, "a message is at most 100 bytes"))
        #expect(Self.assemble([(.text, true, [UInt8](repeating: 65, count: 100))]) == [.text(String(repeating: "A", count: 100))])
    }

    @Test func theAssemblerRefusesBrokenSequencesAndInvalidText() {
        #expect(
            Self.assemble([(.continuation, true, [])]).last == .close(.protocolError, "a continuation frame without a message to continue"))
        #expect(
            Self.assemble([(.text, false, []), (.text, true, [])]).last == .close(.protocolError, "a new message inside a fragmented one"))
        #expect(
            Self.assemble([(.text, false, [0xC3]), (.continuation, true, [0x28])]).last
                == .close(.dataInconsistentWithMessage, "a text message must be UTF-8"))
        #expect(Self.assemble([(.text, true, [0xFF])]).last == .close(.dataInconsistentWithMessage, "a text message must be UTF-8"))
    }

    @Test func theRateIsPerParticipantAndASustainedFloodIsClosed() {
        let rates = LiveRates(rate: 50, burst: 100)
        let now = ContinuousClock.now
        let allowed = (0..<150).filter { rates.take($0 % 2 == 0 ? "s a" : "s a", now: now) }.count
        #expect(allowed == 100, "two sockets of one participant share one burst")
        #expect(rates.take("s b", now: now), "another participant has their own")
        var watch = FloodWatch(rate: 50, seconds: 3)
        var verdicts: [FloodWatch.Verdict] = []
        // 500 messages a second, 50 of them allowed, for five seconds.
        for n in 0..<2500 {
            let at = now + .milliseconds(n * 2)
            verdicts.append(watch.admit(n % 10 == 0, now: at))
            if verdicts.last == .close { break }
        }
        #expect(verdicts.filter { $0 == .dropAndWarn }.count <= 4, "one warning a second")
        #expect(verdicts.last == .close)
        #expect(verdicts.count < 2200, "closed after about three seconds: \(verdicts.count) messages")
        var calm = FloodWatch(rate: 50, seconds: 3)
        let calmVerdicts = (0..<1000).map { n in calm.admit(n % 2 == 0, now: now + .milliseconds(n * 10)) }
        #expect(!calmVerdicts.contains(.close), "sending 100/s against 50/s is dropped, not closed")
    }

    // MARK: Over a socket

    @Test func aFragmentFloodIsClosedWith1008AndBrokenFramesWithTheirCodes() async throws {
        try await LiveChannelTests.withSession { live in
            let flood =
                RawWebSocket.frame(0x1, [], fin: false) + RawWebSocket.frame(0x0, [], fin: false).repeated(LiveRoutes.maxFrames + 10)
            let cases: [(String, [UInt8], UInt16)] = [
                ("fragment flood", flood, 1008),
                ("invalid UTF-8", RawWebSocket.frame(0x1, [0x7B, 0xFF, 0x7D]), 1007),
                ("an unmasked frame", RawWebSocket.frame(0x1, Array(#"{"type":"grab","entity":"x"}"#.utf8), masked: false), 1002),
                (
                    "an unmasked frame after a masked one",
                    RawWebSocket.frame(0x9, [1, 2]) + RawWebSocket.frame(0x1, [0x7B, 0x7D], masked: false), 1002
                ),
                ("continuation without a start", RawWebSocket.frame(0x0, Array("{}".utf8)), 1002),
                (
                    "a text frame inside a fragmented message",
                    RawWebSocket.frame(0x1, [0x7B], fin: false) + RawWebSocket.frame(0x1, [0x7D]), 1002
                ),
                (
                    "a message over 1 MiB in fragments",
                    RawWebSocket.frame(0x1, [UInt8](repeating: 0x20, count: 600_000), fin: false)
                        + RawWebSocket.frame(0x0, [UInt8](repeating: 0x20, count: 600_000)), 1009
                ),
            ]
            for (what, bytes, code) in cases {
                let socket = try await RawWebSocket.open(port: live.port, session: live.session, token: live.participant)
                try? await socket.socket.send(bytes)
                let close = try await socket.closeCode()
                #expect(close == code, "\(what): closed with \(close.map(String.init) ?? "no close frame")")
                socket.socket.close()
            }
            // The server is fine.
            let events = LiveClient.objects(
                try await LiveClient.exchange(port: live.port, session: live.session, token: live.participant, until: 1))
            #expect(events.first?["type"] as? String == "snapshot")
        }
    }

    @Test func aReaderThatStopsReadingIsDroppedItsGrabReleasedAndItsMessagesIgnored() async throws {
        // The door is on the table: a player grabs only what they see.
        let door: [String: any Sendable] = ["id": "door", "from": [0, 0], "to": [1, 0], "door": true]
        try await LiveChannelTests.withSession(map: ["drawing": ["walls": [door]] as [String: any Sendable]]) { live in
            let slow = try await RawWebSocket.open(port: live.port, session: live.session, token: live.participant, receiveBuffer: 4096)
            try await slow.socket.send(RawWebSocket.frame(0x1, Array(#"{"type":"grab","entity":"door"}"#.utf8)))
            // Its grab must hold before the flood begins (a fixed pause was not always enough on a loaded machine:
            // a grab read after the drop is rightly ignored, and then there is nothing to release).
            let catalog = try Hoard(dataDirectory: live.fixture.directory).catalog
            let grabbed = await Fixture.eventually(seconds: 20) {
                ((try? catalog.events(session: live.session, after: 0)) ?? []).map(\.body).contains {
                    $0.contains(#""type":"grab""#) && $0.contains(#""entity":"door""#)
                }
            }
            try #require(grabbed, "the slow reader's grab was applied")
            // The host sends 200 KB ops until the reader's queue passes its byte budget.
            let padding = String(repeating: "x", count: 200_000)
            let big = (0..<60).map { n in #"{"type":"op","op":{"kind":"custom","payload":{"n":\#(n),"pad":"\#(padding)"}}}"# }
            // The host's socket stays until it sees the reader leave (a loaded machine applies the ops slowly).
            _ = try await LiveClient.exchange(
                port: live.port, session: live.session, token: live.fixture.hostToken, since: 0, send: big, until: 1000,
                stop: #""event":"left""#, timeout: .seconds(60), paced: true)
            // The log (what every socket is sent) has the release of its grab and its leaving.
            let logged = await Fixture.eventually(seconds: 40) {
                let bodies = ((try? catalog.events(session: live.session, after: 0)) ?? []).map(\.body)
                return bodies.contains { $0.contains(#""type":"release""#) && $0.contains(#""entity":"door""#) }
                    && bodies.contains { $0.contains(#""event":"left""#) && $0.contains(#""name":"Ana""#) }
            }
            #expect(logged, "the dropped reader's grab is released and it has left")
            // Its connection was aborted: reading it now ends (no close handshake was waited for).
            let started = ContinuousClock.now
            _ = try await slow.socket.receiveAll()
            #expect(ContinuousClock.now - started < .seconds(2))
            // Someone else may grab the door now.
            let joined = try await live.client.json(
                .post, "/v1/sessions/join",
                body: ["code": try LiveChannelTests.code(live.client, live.fixture, live.session), "name": "Bo"])
            let bo = try #require(joined.json["participantToken"] as? String)
            let answers = LiveClient.objects(
                try await LiveClient.exchange(
                    port: live.port, session: live.session, token: bo, send: [#"{"type":"grab","entity":"door"}"#], until: 3))
            #expect(answers.contains { $0["type"] as? String == "grab" && $0["entity"] as? String == "door" })
            #expect(!answers.contains { $0["code"] as? String == "GRAB_DENIED" })
        }
    }

    @Test func refusedUpgradesAreAnsweredWithTheStatusTheAPIDeclares() async throws {
        try await LiveChannelTests.withSession { live in
            let (other, _) = try await LiveChannelTests.start(live.client, live.fixture)
            let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            let cases: [(String, String, String, String)] = [
                ("no token", live.session, key + "Sec-WebSocket-Version: 13\r\n", "HTTP/1.1 401"),
                ("an unknown token", live.session, key + "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer nope\r\n", "HTTP/1.1 401"),
                (
                    "another session's participant", other,
                    key + "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer \(live.participant)\r\n", "HTTP/1.1 404"
                ),
                (
                    "an unknown session", "nosuch", key + "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer \(live.participant)\r\n",
                    "HTTP/1.1 404"
                ),
                (
                    "version 8", live.session, key + "Sec-WebSocket-Version: 8\r\nAuthorization: Bearer \(live.participant)\r\n",
                    "HTTP/1.1 426"
                ),
                ("no key", live.session, "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer \(live.participant)\r\n", "HTTP/1.1 400"),
            ]
            for (what, session, headers, status) in cases {
                let socket = try await RawSocket.connect(port: live.port)
                defer { socket.close() }
                let request = "GET /v1/sessions/\(session)/live HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Upgrade: websocket\r\nConnection: Upgrade\r\n\(headers)\r\n"
                try await socket.send(Array(request.utf8))
                let answer = String(decoding: try await socket.receiveAll(), as: UTF8.self)
                #expect(answer.hasPrefix(status), "\(what): \(answer.prefix(200))")
                #expect(answer.contains(#"{"error":{"code":"#), "\(what): the API's error body")
                if status.hasSuffix("426") { #expect(answer.lowercased().contains("sec-websocket-version: 13")) }
            }
        }
    }

    @Test func aParticipantHasAtMostEightSockets() async throws {
        try await LiveChannelTests.withSession { live in
            var open: [RawWebSocket] = []
            for _ in 0..<SessionHub.socketsPerParticipant {
                open.append(try await RawWebSocket.open(port: live.port, session: live.session, token: live.participant))
            }
            try await Task.sleep(for: .milliseconds(200))
            let ninth = try await RawWebSocket.open(port: live.port, session: live.session, token: live.participant)
            #expect(try await ninth.closeCode() == 1008)
            for socket in open + [ninth] { socket.socket.close() }
        }
    }

    @Test func aLongLogIsNotQueuedForAJoiner() async throws {
        try await LiveChannelTests.withSession { live in
            // 30 ops of 200 KB: a 6 MB log after seq 1, more than a socket may have waiting.
            let padding = String(repeating: "y", count: 200_000)
            let big = (0..<30).map { n in #"{"type":"op","op":{"kind":"custom","payload":{"n":\#(n),"pad":"\#(padding)"}}}"# }
            _ = try await LiveClient.exchange(
                port: live.port, session: live.session, token: live.fixture.hostToken, send: big, until: 31, timeout: .seconds(60),
                paced: true)
            // The whole log is written before the joiner comes (a loaded machine may apply the ops after the host's
            // socket gave up waiting for them).
            let logged = await Fixture.eventually(seconds: 30) { ((try? live.fixture.lastSeq(live.session)) ?? 0) >= 31 }
            try #require(logged, "the 30 ops are in the log")
            let events = LiveClient.objects(
                try await LiveClient.exchange(port: live.port, session: live.session, token: live.participant, since: 1, until: 1))
            #expect(events.first?["type"] as? String == "snapshot", "a snapshot instead of 6 MB of replay")
            let last = try #require(try live.fixture.lastSeq(live.session))
            let short = LiveClient.objects(
                try await LiveClient.exchange(
                    port: live.port, session: live.session, token: live.participant, since: last - 3, until: 3))
            #expect(
                short.first?["type"] as? String != "snapshot" && short.first?["seq"] as? Int == Int(last - 2),
                "a short replay is still exact")
        }
    }
}

extension Array {
    func repeated(_ count: Int) -> [Element] { Array(Swift.repeatElement(self, count: count).joined()) }
}

/// A WebSocket client written byte by byte, to send what well-behaved clients never do.
struct RawWebSocket: Sendable {
    let socket: RawSocket
    /// What arrived after the response head in the same reads.
    let early: [UInt8]

    static func open(port: Int, session: String, token: String, receiveBuffer: Int32? = nil) async throws -> RawWebSocket {
        let socket = try await RawSocket.connect(port: port, receiveBuffer: receiveBuffer)
        try await socket.send(
            Array(
                ("GET /v1/sessions/\(session)/live HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n")
                    .utf8))
        let (head, rest) = try await socket.receiveHeadAndRest()
        guard head.hasPrefix("HTTP/1.1 101") else { throw RawSocket.Failure(description: "not upgraded: \(head)") }
        return RawWebSocket(socket: socket, early: rest)
    }

    /// One frame from the client: masked unless told otherwise.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let mask: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126: bytes.append(mask | UInt8(payload.count))
        case ..<65536: bytes += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: bytes += [mask | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
    }

    /// Reads until the server closes the connection; the code of its close frame, nil when it sent none.
    func closeCode() async throws -> UInt16? {
        var bytes = (early + (try await socket.receiveAll()))[...]
        while bytes.count >= 2 {
            let opcode = bytes[bytes.startIndex] & 0x0F
            var length = Int(bytes[bytes.startIndex + 1] & 0x7F)
            var start = bytes.startIndex + 2
            if length == 126, bytes.count >= 4 {
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127, bytes.count >= 10 {
                length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[start + $1]) }
                start += 8
            }
            guard bytes.endIndex - start >= length else { return nil }
            if opcode == 0x8 { return length >= 2 ? UInt16(bytes[start]) << 8 | UInt16(bytes[start + 1]) : 1005 }
            bytes = bytes[(start + length)...]
        }
        return nil
    }
}

extension SessionFixture {
    func lastSeq(_ session: String) throws -> Int64? {
        try Hoard(dataDirectory: directory).catalog.session(id: session)?.lastSeq
    }
}
