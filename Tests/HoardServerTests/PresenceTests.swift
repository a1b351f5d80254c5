import Foundation
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// Who a table shows as there: the host from a player's first look, by a display name; who left, away and then gone.
@Suite("Presence at the table")
struct PresenceTests {
    /// A live server (away grace `grace`) with a fresh session and one participant, Ana.
    static func withSession(grace: Duration = .seconds(60), _ body: @Sendable (LiveChannelTests.Live) async throws -> Void) async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        var configuration = fixture.configuration
        configuration.awayGrace = grace
        let app = try await buildApplication(configuration)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let (session, participant) = try await LiveChannelTests.start(client, fixture)
            try await body(LiveChannelTests.Live(client: client, fixture: fixture, port: port, session: session, participant: participant))
        }
    }

    /// The session as `token` sees it.
    static func seen(_ live: LiveChannelTests.Live, by token: String) async throws -> [String: Any] {
        try await live.client.json(.get, "/v1/sessions/\(live.session)", token: token).json
    }

    @Test func aPlayerWhoJustJoinedSeesTheHostConnectedByTheNameTheHostGave() async throws {
        try await Self.withSession { live in
            // The host's table is open (its socket held for a few seconds) before the player looks.
            let host = Task {
                try await LiveClient.exchange(
                    port: live.port, session: live.session, token: live.fixture.hostToken, until: 1000, timeout: .seconds(4), name: "Greta")
            }
            defer { host.cancel() }
            let connected = try await Fixture.eventually {
                (try await Self.seen(live, by: live.participant)["hostSeat"] as? [String: Any])?["connected"] as? String == "yes"
            }
            #expect(connected, "the host is shown connected at once, before they act")
            let seat = try #require(try await Self.seen(live, by: live.participant)["hostSeat"] as? [String: Any])
            // The host's seat is `host:<member id>` (a member is an identity, issue 43), never the token's label "gm".
            let hostId = try #require(seat["id"] as? String)
            #expect(seat["name"] as? String == "Greta" && hostId.hasPrefix("host:") && hostId != "host:gm", "\(seat)")
            // The presence event the player's page reads names the host the same way, never by the token's label ("gm").
            let events = LiveClient.objects(try await LiveClient.exchange(
                port: live.port, session: live.session, token: live.participant, since: 0, until: 1, stop: "Greta"))
            let joined = events.first { ($0["participant"] as? [String: Any])?["id"] as? String == hostId }
            #expect((joined?["participant"] as? [String: Any])?["name"] as? String == "Greta", "\(events)")
        }
    }

    @Test func aHostWhoGaveNoNameIsShownAsHostNeverByTheirTokensLabel() async throws {
        try await Self.withSession { live in
            let before = try #require(try await Self.seen(live, by: live.participant)["hostSeat"] as? [String: Any])
            #expect(before["name"] as? String == "Host" && before["connected"] as? String == "no")
            _ = try await LiveClient.exchange(port: live.port, session: live.session, token: live.fixture.hostToken, until: 1)
            let events = LiveClient.objects(try await LiveClient.exchange(
                port: live.port, session: live.session, token: live.participant, since: 0, until: 1))
            let names = events.compactMap { ($0["participant"] as? [String: Any])?["name"] as? String }
            #expect(names.first == "Host" && !names.contains("gm"), "\(events)")
        }
    }

    @Test func aPlayerWhoLeftIsShownAwayThenLeavesTheListAfterTheGracePeriod() async throws {
        try await Self.withSession(grace: .seconds(2)) { live in
            func ana() async throws -> [String: Any]? {
                let participants = try await Self.seen(live, by: live.fixture.hostToken)["participants"] as? [[String: Any]] ?? []
                return participants.first { $0["name"] as? String == "Ana" }
            }
            #expect(try await Self.seen(live, by: live.fixture.hostToken)["awaySeconds"] as? Int == 2)
            try await Task.sleep(for: .seconds(2.5))
            #expect(try await ana() == nil, "joined more than the grace period ago and never connected: not listed")
            _ = try await LiveClient.exchange(port: live.port, session: live.session, token: live.participant, until: 1)
            let away = try await Fixture.eventually { try await ana()?["connected"] as? String == "no" }
            #expect(away, "just left: listed, away")
            let gone = try await Fixture.eventually(seconds: 6) { try await ana() == nil }
            #expect(gone, "gone from the list after the grace period")
        }
    }
}
