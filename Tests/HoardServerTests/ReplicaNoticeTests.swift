import Foundation
import HoardCatalog
import HoardCore
import HoardPostgres
import HoardRepository
import HoardServer
import HoardTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Access changes reach a replica by the catalog's notices: B polls the change log every ten minutes (never, in a
/// test), and learns of none of these changes from a miss (the pack and the token are ones it holds).
extension ReplicaTests {
    static func pollingAlmostNeverOnB(_ replica: String, _ configuration: inout ServerConfiguration) {
        if replica == "b" { configuration.refreshInterval = .seconds(600) }
    }

    /// What a replica answers an anonymous GET of a picture of the sample pack.
    static func anonymousRead(through replica: Replica) async throws -> HTTPResponse.Status {
        let digest = try #require(try replica.hoard.catalog.assets(pack: "dungeon-basics").flatMap(\.variants).first?.digest)
        return try await replica.client.execute(uri: "/v1/blobs/\(digest)", method: .get) { $0.status }
    }

    @Test func aPackPublishedThroughOneReplicaIsServedByTheOtherOnItsNotice() async throws {
        try await Self.withReplicas(configure: Self.pollingAlmostNeverOnB) { a, b, token in
            #expect(try await Self.anonymousRead(through: b) == .notFound, "B holds the pack as private")
            let patched = try await a.client.json(.patch, "/v1/packs/dungeon-basics", token: token, body: ["isPublic": true])
            #expect(patched.status == .ok, "\(patched.json)")
            #expect(try await Fixture.eventually(seconds: 10) { try await Self.anonymousRead(through: b) == .ok })
        }
    }

    @Test func aTokenRevokedThroughOneReplicaIsRefusedByTheOtherOnItsNotice() async throws {
        try await Self.withReplicas(configure: Self.pollingAlmostNeverOnB) { a, b, token in
            let tablet = try a.hoard.createToken(group: "table", label: "tablet", role: .member)
            #expect(try await b.client.json(.get, "/v1/packs", token: tablet).status == .ok, "B knows the token")
            let listed = try await a.client.json(.get, "/v1/tokens", token: token).json["tokens"] as? [[String: Any]]
            let id = try #require(listed?.first { $0["name"] as? String == "tablet" }?["id"] as? Int)
            #expect(try await a.client.json(.delete, "/v1/tokens/\(id)", token: token).status == .noContent)
            #expect(try await Fixture.eventually(seconds: 10) {
                try await b.client.json(.get, "/v1/packs", token: tablet).status == .unauthorized
            })
        }
    }

    /// Issue 43: revocation ends a live socket on every replica, not only on the one that revoked.
    @Test func aHostRevokedThroughOneReplicaHasItsSocketOnTheOtherClosedWith4401() async throws {
        try await Self.withReplicas(configure: Self.pollingAlmostNeverOnB) { a, b, token in
            let host = try a.hoard.createToken(group: "table", label: "second gm", role: .member)
            let session = try await b.createSession("Crypt", token: host)
            let socket = try await RawWebSocket.open(port: b.port, session: session.id, token: host)
            let listed = try await a.client.json(.get, "/v1/tokens", token: token).json["tokens"] as? [[String: Any]]
            let id = try #require(listed?.first { $0["name"] as? String == "second gm" }?["id"] as? Int)
            #expect(try await a.client.json(.delete, "/v1/tokens/\(id)", token: token).status == .noContent)
            #expect(try await socket.closeCode() == 4401)
        }
    }

    @Test func aReplicaWhoseListenerWasCutCatchesUpOnReconnectingAndHearsNoticesAgain() async throws {
        let url = try TestPostgres.newDatabase()
        try await Self.withReplicas(url: url, configure: Self.pollingAlmostNeverOnB) { _, b, _ in
            let listener = try #require(b.hoard.catalog.accessChangeFeed as? SessionEventListener)
            #expect(await Fixture.eventually { await listener.connectionCount == 1 })
            #expect(try await Self.anonymousRead(through: b) == .notFound)
            // The listeners are cut and the pack published (as another replica would) before B's listener is back.
            try TestPostgres.execute(
                in: url,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
                #"UPDATE pack SET "isPublic" = true WHERE name = 'dungeon-basics'"#)
            #expect(await Fixture.eventually(seconds: 10) { await listener.connectionCount >= 2 }, "it connected again")
            #expect(try await Fixture.eventually(seconds: 10) { try await Self.anonymousRead(through: b) == .ok }, "and read the log")
            try TestPostgres.execute(in: url, #"UPDATE pack SET "isPublic" = false WHERE name = 'dungeon-basics'"#)
            #expect(try await Fixture.eventually(seconds: 10) { try await Self.anonymousRead(through: b) == .notFound }, "its new LISTEN hears")
        }
    }
}
