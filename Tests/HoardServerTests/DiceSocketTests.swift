import Foundation
import HTTPTypes
import NIOCore
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// Rolls on the live channel: the server rolls from a sealed seed, the seed and blind rolls reach no player before
/// they are revealed, and a session's rolls are audited after its end.
@Suite(.timeLimit(.minutes(2))) struct DiceSocketTests {
    @Test func aSessionsRollsAreVerifiedAfterItsEndAndNothingSecretReachedThePlayerBefore() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let rolls = [
                    #"{"type":"op","opId":"r0","op":{"kind":"roll","formula":"1000000000d6"}}"#,
                    #"{"type":"op","opId":"r1","op":{"kind":"roll","formula":"4d6kh3+2","label":"Stealth"}}"#,
                    #"{"type":"op","opId":"r2","op":{"kind":"roll","formula":"2d6","to":["host"]}}"#,
                    #"{"type":"op","opId":"r3","op":{"kind":"roll","formula":"1d20+5","blind":true,"label":"Perception"}}"#,
                ]
                async let received = LiveClient.exchange(
                    port: port, session: room.id, token: ann, send: rolls, until: 1000, stop: #""type":"revealed""#, timeout: .seconds(60),
                    paced: true)
                #expect(try await Fixture.eventually(seconds: 30) { try fixture.hoard.catalog.diceRolls(session: room.id).count == 3 })
                let seal = try #require(try fixture.hoard.catalog.diceSeal(session: room.id))
                let seed = seal.seed.description
                // What the player may read over HTTP before the reveal: the commitment, no seed, no rolls.
                let shown = try await client.json(.get, "/v1/sessions/\(room.id)", token: ann)
                let dice = try #require(shown.json["dice"] as? [String: Any])
                #expect(dice["commitment"] as? String == seal.seed.commitment && dice["seed"] == nil)
                let early = try await client.json(.get, "/v1/sessions/\(room.id)/dice", token: ann)
                #expect(early.status == .ok && early.json["seed"] == nil && (early.json["rolls"] as? [Any])?.isEmpty == true)
                var httpBytes = ""
                for path in ["/v1/sessions/\(room.id)", "/v1/sessions/\(room.id)/dice"] {
                    httpBytes += try await client.execute(uri: path, method: .get, headers: auth(ann)) { String(buffer: $0.body) }
                }
                // A reconnection's replay of the log, as the player's views.
                let replay = try await LiveClient.exchange(
                    port: port, session: room.id, token: ann, since: 0, until: 1000, stop: #""opId":"r3""#, timeout: .seconds(20))
                #expect(replay.contains { $0.contains(#""opId":"r3""#) }, "\(replay)")
                httpBytes += replay.joined()
                let blindBody = try #require(try fixture.hoard.catalog.diceRolls(session: room.id).last)
                let blindRoll = try #require(try JSONValue(parsing: Data(blindBody.utf8))["roll"])
                let blindText = String(decoding: try CanonicalJSON.encode(blindRoll), as: UTF8.self)

                #expect(try await client.json(.delete, "/v1/sessions/\(room.id)", token: fixture.red).status == .noContent)
                let texts = try await received
                let revealedAt = try #require(texts.firstIndex { $0.contains(#""type":"revealed""#) }, "\(texts)")
                let before = texts[..<revealedAt].joined() + httpBytes
                #expect(!before.contains(seed), "the seed reached the player before it was revealed")
                #expect(!before.contains(blindText), "the blind roll reached its roller before it was revealed")
                let events = LiveClient.objects(texts)
                #expect(events.contains { $0["code"] as? String == "DICE_LIMIT" && $0["opId"] as? String == "r0" })
                let blindSeen = try #require(events.first { $0["opId"] as? String == "r3" })
                #expect(blindSeen["roll"] == nil && blindSeen["formula"] as? String == "1d20+5" && blindSeen["blind"] as? Bool == true)

                // From what the player received: the revealed seed, the rolls they saw and the blind ones revealed.
                let revealed = try JSONValue(parsing: Data(texts[revealedAt].utf8))
                #expect(revealed["seed"]?.stringValue == seed)
                guard case .array(let blindRevealed)? = revealed["blind"] else { Issue.record("no blind rolls revealed"); return }
                let seen = try texts.map { try JSONValue(parsing: Data($0.utf8)) }.filter { $0["type"] == .string("rolled") && $0["roll"] != nil }
                #expect(seen.count == 2 && blindRevealed.count == 1)
                let ownSeed = try #require(DiceSeed(seed))
                #expect(DiceAudit.verify(seed: ownSeed, commitment: seal.seed.commitment, rolls: seen + blindRevealed).isEmpty)

                // After the end: the group's members read every roll and audit them; a changed die is caught.
                let audited = try await client.execute(uri: "/v1/sessions/\(room.id)/dice", method: .get, headers: auth(fixture.red)) {
                    try JSONDecoder().decode(SessionDice.self, from: Data(buffer: $0.body))
                }
                #expect(audited.seed == seed && audited.rolls.count == 3 && audited.audit().isEmpty)
                var tampered = audited
                tampered.rolls[0] = try Self.changingFirstFace(of: tampered.rolls[0])
                #expect(tampered.audit().map(\.index) == [audited.rolls[0]["seq"].flatMap { if case .number(let n) = $0 { UInt64(n) } else { nil } }])
                #expect(try await client.json(.get, "/v1/sessions/\(room.id)/dice", token: fixture.blue).status == .notFound)
                // The group's statistics count the revealed session's dice, the blind d20 included.
                let statistics = try await client.execute(uri: "/v1/dice/statistics", method: .get, headers: auth(fixture.red)) {
                    try JSONDecoder().decode(DiceStatistics.self, from: Data(buffer: $0.body))
                }
                #expect(statistics.dice.map(\.die) == ["d6", "d20"], "\(statistics)")
                #expect(statistics.dice.map { $0.rollers.map(\.count) } == [[6], [1]])
            }
        }
    }

    /// Dice that are someone's: the table is offered its group's `dice` assets (not another group's table), a player
    /// chooses one (never another asset, never for someone else), every roll of theirs names it and their name, and its
    /// pictures are theirs to fetch. The group's statistics keep a member's record across sessions (by member id) and a
    /// player's under their player id, with their names.
    @Test func aPlayerChoosesTheGroupsDiceAndTheStatisticsKeepAMembersRecordAcrossSessions() async throws {
        try await Fixture.with(packs: false) { fixture in
            let path = temporaryFile()
            defer { try? FileManager.default.removeItem(atPath: path) }
            try BrowseListingTests().writeZip(at: path, side: 64, pictures: ["dice/ember.png", "tokens/imp.png"], packJSON: #"{"name": "bones"}"#)
            let archive = try ByteBuffer(bytes: Array(Data(contentsOf: URL(fileURLWithPath: path))))
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                #expect(try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: archive).status == .created)
                let imp = try #require(try fixture.hoard.catalog.assets(kind: .token).first).digest.description
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let offered = try await client.execute(uri: "/v1/sessions/\(room.id)/dice/choices", method: .get, headers: auth(ann)) {
                    try JSONDecoder().decode([String: [AssetListing]].self, from: Data(buffer: $0.body))["dice"] ?? []
                }
                let ember = try #require(offered.first)
                #expect(offered.map(\.name) == ["ember"] && ember.kind == .dice)
                #expect(try await client.json(.get, "/v1/sessions/\(room.id)/dice/choices", token: fixture.blue).status == .notFound)
                let ops = [
                    #"{"type":"op","opId":"imp","op":{"kind":"dice","asset":"\#(imp)"}}"#,
                    #"{"type":"op","opId":"mine","op":{"kind":"dice","asset":"\#(ember.digest)","by":"host:someone"}}"#,
                    #"{"type":"op","opId":"r1","op":{"kind":"roll","formula":"3d6"}}"#,
                ]
                let texts = try await LiveClient.exchange(
                    port: port, session: room.id, token: ann, send: ops, until: 1000, stop: #""type":"rolled""#, paced: true)
                let events = LiveClient.objects(texts)
                let refused = try #require(events.first { $0["opId"] as? String == "imp" }, "\(texts)")
                #expect(refused["code"] as? String == "BAD_OP" && (refused["message"] as? String)?.contains("none of the dice") == true, "\(refused)")
                let chosen = try #require(events.first { $0["opId"] as? String == "mine" }?["op"] as? [String: Any], "\(texts)")
                let rolled = try #require(events.first { $0["type"] as? String == "rolled" }, "\(texts)")
                let annId = try #require(rolled["from"] as? String)
                #expect(chosen["by"] as? String == annId, "the server says who chose")
                #expect(rolled["dice"] as? String == ember.digest.description && rolled["name"] as? String == "Ann")
                let picture = try #require(ember.variants.first).digest
                #expect(try await client.json(.get, "/v1/blobs/\(picture)", token: ann).status == .ok, "the chosen dice' picture is the table's")
                let shown = try await client.json(.get, "/v1/sessions/\(room.id)", token: ann)
                #expect(((shown.json["map"] as? [String: Any])?["dice"] as? [String: String])?[annId] == ember.digest.description)

                // The host rolls in this session and in the next: one record, over both.
                for (index, session) in [room, try await client.makeSession(token: fixture.red, name: "Crypt II")].enumerated() {
                    _ = try await LiveClient.exchange(
                        port: port, session: session.id, token: fixture.red, send: [#"{"type":"op","opId":"h\#(index)","op":{"kind":"roll","formula":"2d6"}}"#],
                        until: 100, stop: #""type":"rolled""#, name: "Red")
                    #expect(try await client.json(.delete, "/v1/sessions/\(session.id)", token: fixture.red).status == .noContent)
                }
                let statistics = try await client.execute(uri: "/v1/dice/statistics", method: .get, headers: auth(fixture.red)) {
                    try JSONDecoder().decode(DiceStatistics.self, from: Data(buffer: $0.body))
                }
                let d6 = try #require(statistics.dice.first { $0.die == "d6" }, "\(statistics)")
                let host = try #require(d6.rollers.first { $0.who.hasPrefix("host:") }, "\(d6)")
                #expect(host.count == 4 && host.name == "Red", "a member's dice add up across sessions: \(host)")
                // Ann joined without a key: the server gave her one, and her rolls count for that player, not her seat.
                let annPlayer = try #require(rolled["player"] as? String)
                #expect(annPlayer.hasPrefix("player:") && !d6.rollers.contains { $0.who == annId })
                #expect(d6.rollers.first { $0.who == annPlayer }.map { ($0.count, $0.name) } ?? (0, nil) == (3, "Ann"))
            }
        }
    }

    @Test func theHostRevealsTheSeedAndNoMoreRollsAreMade() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                #expect(try await client.json(.post, "/v1/sessions/\(room.id)/dice/reveal", token: ann).status == .forbidden)
                let revealed = try await client.json(.post, "/v1/sessions/\(room.id)/dice/reveal", token: fixture.red)
                let seal = try #require(try fixture.hoard.catalog.diceSeal(session: room.id))
                #expect(revealed.status == .ok && revealed.json["seed"] as? String == seal.seed.description && seal.isRevealed)
                let shown = try await client.json(.get, "/v1/sessions/\(room.id)", token: ann)
                #expect((shown.json["dice"] as? [String: Any])?["seed"] as? String == seal.seed.description)
                let texts = try await LiveClient.exchange(
                    port: port, session: room.id, token: ann, send: [#"{"type":"op","opId":"late","op":{"kind":"roll","formula":"d6"}}"#],
                    until: 100, stop: #""opId":"late""#)
                #expect(LiveClient.objects(texts).contains { $0["code"] as? String == "FORBIDDEN" && $0["opId"] as? String == "late" })
                #expect(try fixture.hoard.catalog.diceRolls(session: room.id).isEmpty)
            }
        }
    }

    @Test func theSeedSurvivesARestartAndRollsBeforeAndAfterItVerify() async throws {
        try await Fixture.with(packs: false) { fixture in
            let (room, ann) = try await fixture.run(.live) { client in
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                _ = try await LiveClient.exchange(
                    port: try #require(client.port), session: room.id, token: ann,
                    send: [#"{"type":"op","opId":"a","op":{"kind":"roll","formula":"3d6"}}"#], until: 100, stop: #""opId":"a""#)
                return (room, ann)
            }
            let commitment = try #require(try fixture.hoard.catalog.diceSeal(session: room.id)).seed.commitment
            try await fixture.run(.live) { client in
                let shown = try await client.json(.get, "/v1/sessions/\(room.id)", token: ann)
                #expect((shown.json["dice"] as? [String: Any])?["commitment"] as? String == commitment, "the same seal after a restart")
                // The first roll sent again under its op id is answered, not rolled again.
                let answers = try await LiveClient.exchange(
                    port: try #require(client.port), session: room.id, token: ann,
                    send: [
                        #"{"type":"op","opId":"a","op":{"kind":"roll","formula":"3d6"}}"#,
                        #"{"type":"op","opId":"b","op":{"kind":"roll","formula":"2d20kh1"}}"#,
                    ], until: 100, stop: #""opId":"b""#)
                #expect(answers.contains(#"{"opId":"a","type":"ack"}"#), "\(answers)")
                #expect(try await client.json(.post, "/v1/sessions/\(room.id)/dice/reveal", token: fixture.red).status == .ok)
                let dice = try await client.execute(uri: "/v1/sessions/\(room.id)/dice", method: .get, headers: auth(ann)) {
                    try JSONDecoder().decode(SessionDice.self, from: Data(buffer: $0.body))
                }
                #expect(dice.commitment == commitment && dice.rolls.count == 2 && dice.audit().isEmpty)
            }
        }
    }

    /// The roll with its first die's face one higher (and nothing else changed).
    static func changingFirstFace(of event: JSONValue) throws -> JSONValue {
        guard case .object(var body) = event, case .object(var roll)? = body["roll"], case .array(var terms)? = roll["terms"],
            case .object(var term)? = terms.first, case .array(var dice)? = term["dice"], case .object(var die)? = dice.first,
            case .number(let face)? = die["face"]
        else { throw CancellationError() }
        die["face"] = .number(face + 1)
        dice[0] = .object(die)
        term["dice"] = .array(dice)
        terms[0] = .object(term)
        roll["terms"] = .array(terms)
        body["roll"] = .object(roll)
        return .object(body)
    }
}
