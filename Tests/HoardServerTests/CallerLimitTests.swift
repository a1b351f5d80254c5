import Foundation
import HTTPTypes
import HoardServer
import HummingbirdTesting
import Testing

/// Limits per caller: a participant's uploads count against them and their session, never against another session
/// or the group; joins count per session; a session holds at most so many players.
@Suite struct CallerLimitTests {
    @Test func oneSessionsPlayersCannotSpendAnothersUploads() async throws {
        try await Fixture.with(packs: false, { configuration in
            configuration.uploadsPerMinute = 5
            configuration.uploadsPerParticipant = 3
            configuration.limitWindowSeconds = 86_400  // no window turns during the test
        }) { fixture in
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                let other = try await client.makeSession(token: fixture.red, name: "Other room")
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let bob = try await client.joinSession(code: room.code, name: "Bob")
                let eve = try await client.joinSession(code: other.code, name: "Eve")
                var statuses: [HTTPResponse.Status] = []
                for _ in 0..<4 { statuses.append(try await client.uploadPicture(picture, token: ann).status) }
                #expect(statuses.map { $0 == .tooManyRequests } == [false, false, false, true], "three each: \(statuses)")
                statuses = []
                for _ in 0..<3 { statuses.append(try await client.uploadPicture(picture, token: bob).status) }
                #expect(statuses.map { $0 == .tooManyRequests } == [false, false, true], "five for the session: \(statuses)")
                #expect(try await client.uploadPicture(picture, token: eve).status.code < 300, "another session is untouched")
                #expect(try await client.uploadPicture(picture, token: fixture.blue).status.code < 300, "and so is another group")
            }
        }
    }

    @Test func joinsAreCountedPerSessionAndASessionHasACapacity() async throws {
        try await Fixture.with(packs: false, { configuration in
            configuration.joinsPerSession = 4
            configuration.maxParticipants = 3
            configuration.limitWindowSeconds = 86_400
        }) { fixture in
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                let other = try await client.makeSession(token: fixture.red, name: "Other room")
                let join = { @Sendable (code: String, name: String) async throws -> HTTPResponse.Status in
                    try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": name]).status
                }
                var statuses: [HTTPResponse.Status] = []
                for name in ["A", "B", "C", "D", "E"] { statuses.append(try await join(room.code, name)) }
                #expect(statuses == [.ok, .ok, .ok, .forbidden, .tooManyRequests], "three seats, four joins a minute: \(statuses)")
                let elsewhere = try await join(other.code, "F")
                #expect(elsewhere == .ok, "another session's joins are its own")
                // A seat freed by the host can be taken again (joins permitting).
                let shown = try await client.json(.get, "/v1/sessions/\(room.id)", token: fixture.red)
                let first = try #require((shown.json["participants"] as? [[String: Any]])?.first?["id"] as? String)
                let removed = try await client.json(.delete, "/v1/sessions/\(room.id)/participants/\(first)", token: fixture.red).status
                #expect(removed == .noContent)
                #expect(try await client.json(.get, "/v1/sessions/\(room.id)", token: fixture.red).json["participants"].map { ($0 as? [Any])?.count } == 2)
            }
        }
    }
}
