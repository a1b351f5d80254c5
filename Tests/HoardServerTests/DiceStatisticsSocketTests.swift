import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// The group's high-score list at the table: its players read it (never another group's), and a player who is no
/// member keeps one record across the group's sessions by the key their first join answered, never by their name.
@Suite(.timeLimit(.minutes(2))) struct DiceStatisticsSocketTests {
    /// Rolls `formula` as `token` in a session and waits for its `rolled` event; gives the roller's participant id.
    static func roll(_ formula: String, as token: String, in session: String, port: Int, opId: String) async throws -> String {
        let texts = try await LiveClient.exchange(
            port: port, session: session, token: token, send: [#"{"type":"op","opId":"\#(opId)","op":{"kind":"roll","formula":"\#(formula)"}}"#],
            until: 100, stop: #""opId":"\#(opId)""#)
        let rolled = try #require(LiveClient.objects(texts).first { $0["opId"] as? String == opId && $0["type"] as? String == "rolled" }, "\(texts)")
        return try #require(rolled["from"] as? String)
    }

    static func statistics(_ client: some TestClientProtocol, session: String, token: String) async throws -> (HTTPResponse.Status, DiceStatistics?) {
        try await client.execute(uri: "/v1/sessions/\(session)/dice/statistics", method: .get, headers: auth(token)) { response in
            (response.status, try? JSONDecoder().decode(DiceStatistics.self, from: Data(buffer: response.body)))
        }
    }

    @Test func playersReadTheirGroupsHighScoresAndNotAnotherGroups() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let red = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: red.code, name: "Ann")
                let annId = try await Self.roll("3d6", as: ann, in: red.id, port: port, opId: "a1")
                let (before, unrevealed) = try await Self.statistics(client, session: red.id, token: ann)
                #expect(before == .ok && unrevealed?.dice.isEmpty == true, "a roll counts once its seed is revealed: \(String(describing: unrevealed))")
                #expect(try await client.json(.post, "/v1/sessions/\(red.id)/dice/reveal", token: fixture.red).status == .ok)
                let (status, shown) = try await Self.statistics(client, session: red.id, token: ann)
                let d6 = try #require(shown?.dice.first { $0.die == "d6" }, "\(String(describing: shown))")
                #expect(status == .ok && d6.rollers.map(\.count) == [3] && d6.rollers.first?.name == "Ann")
                #expect(d6.rollers.first?.kind == "player" && d6.rollers.first?.who.hasPrefix("player:") == true, "\(d6)")
                #expect(d6.rollers.first?.who != annId, "a player with a key is recorded as the player, not the seat")

                // Blue's player reads blue's list (empty), and red's answers 404 as a session that does not exist.
                let blue = try await client.makeSession(token: fixture.blue)
                let bob = try await client.joinSession(code: blue.code, name: "Bob")
                let (own, blueList) = try await Self.statistics(client, session: blue.id, token: bob)
                #expect(own == .ok && blueList?.dice.isEmpty == true, "\(String(describing: blueList))")
                #expect(try await Self.statistics(client, session: red.id, token: bob).0 == .notFound)
                #expect(try await Self.statistics(client, session: "no-such-session", token: bob).0 == .notFound)
                #expect(try await Self.statistics(client, session: red.id, token: fixture.blue).0 == .notFound)
                // The host reads the same list through the session as through the group's route.
                let (_, host) = try await Self.statistics(client, session: red.id, token: fixture.red)
                let group = try await client.execute(uri: "/v1/dice/statistics", method: .get, headers: auth(fixture.red)) {
                    try JSONDecoder().decode(DiceStatistics.self, from: Data(buffer: $0.body))
                }
                #expect(host == group && host == shown)
            }
        }
    }

    @Test func aPlayersKeyKeepsTheirRecordAcrossSessionsAndANameClaimsNothing() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let first = try await client.makeSession(token: fixture.red)
                let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": first.code, "name": "Ann"])
                let key = try #require(joined.json["playerKey"] as? String)
                #expect(PlayerKey(key) != nil, "\(key)")
                let ann = try #require(joined.json["participantToken"] as? String)
                _ = try await Self.roll("3d6", as: ann, in: first.id, port: port, opId: "f1")
                #expect(try await client.json(.delete, "/v1/sessions/\(first.id)", token: fixture.red).status == .noContent)

                let second = try await client.makeSession(token: fixture.red, name: "Crypt II")
                // A key that is not one the server makes is refused, and nobody joins.
                for bad in ["player:" + String(repeating: "0", count: 32), key + "x", key.uppercased(), ""] {
                    let refused = try await client.json(.post, "/v1/sessions/join", body: ["code": second.code, "name": "Ann", "playerKey": bad])
                    let message = (refused.json["error"] as? [String: Any])?["message"] as? String
                    #expect(refused.status == .badRequest && message?.contains("playerKey") == true, "\(bad): \(refused)")
                }
                #expect(try fixture.hoard.catalog.participantCount(session: second.id) == 0)
                let again = try await client.json(.post, "/v1/sessions/join", body: ["code": second.code, "name": "Ann", "playerKey": key])
                #expect(again.json["playerKey"] as? String == key)
                let annAgain = try #require(again.json["participantToken"] as? String)
                _ = try await Self.roll("2d6", as: annAgain, in: second.id, port: port, opId: "s1")
                // Someone else named Ann (and one named like her, "ANN"), without her key: records of their own.
                for (index, name) in ["Ann", "ANN"].enumerated() {
                    let other = try await client.joinSession(code: second.code, name: name)
                    _ = try await Self.roll("1d6", as: other, in: second.id, port: port, opId: "o\(index)")
                }
                #expect(try await client.json(.post, "/v1/sessions/\(second.id)/dice/reveal", token: fixture.red).status == .ok)

                let (_, shown) = try await Self.statistics(client, session: second.id, token: annAgain)
                let d6 = try #require(shown?.dice.first { $0.die == "d6" }, "\(String(describing: shown))")
                let player = PlayerKey(key)?.player(inGroup: try #require(try fixture.hoard.catalog.session(id: second.id)).groupId)
                let record = try #require(d6.rollers.first { $0.who == player }, "\(d6)")
                #expect(record.count == 5 && record.kind == "player" && record.name == "Ann", "her dice add up across sessions: \(record)")
                #expect(d6.rollers.count == 3 && d6.rollers.filter { $0.who != player }.map(\.count) == [1, 1], "\(d6)")
                #expect(!(shown.map { String(describing: $0) } ?? "").contains(key), "the key is never shown")
            }
        }
    }
}
