import Foundation
import HoardCatalog
import HoardCore
import HoardPostgres
import HoardRepository
import HoardServer
import HoardStore
import HoardTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Two servers sharing one PostgreSQL catalog and one blob store, as replicas behind a load balancer: what one is
/// told, the other knows at once, and a live session is one table whichever replica its players reach.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReplicaTests {
    /// Two replicas over a new PostgreSQL database and a shared blob folder, with the sample packs imported through
    /// the first and a host token; `configure` adjusts each one's configuration (given its name, `a` or `b`); `body`
    /// gets both.
    static func withReplicas(
        url: String? = nil, configure: (_ replica: String, _ configuration: inout ServerConfiguration) -> Void = { _, _ in },
        _ body: @Sendable (_ a: Replica, _ b: Replica, _ hostToken: String) async throws -> Void
    ) async throws {
        let url = try url ?? TestPostgres.newDatabase()
        let root = NSTemporaryDirectory() + "hoard-replicas-" + UUID().uuidString.lowercased()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/blobs", withIntermediateDirectories: true)
        func replica(_ name: String) throws -> Hoard {
            try Hoard(
                directory: DataDirectory(path: root + "/" + name), store: FileBlobStore(root: root + "/blobs"),
                catalog: PostgresCatalog(url: url))
        }
        let first = try replica("a")
        let second = try replica("b")
        try first.catalog.createGroup(named: "table")
        var options = Importer.Options()
        options.group = "table"
        _ = try await first.importPack(at: SessionFixture.root.appendingPathComponent("Packs/dungeon-basics.zip").path, options: options)
        let hostToken = try first.createToken(group: "table", label: "gm", role: .owner)
        func configuration(_ hoard: Hoard, _ name: String) -> ServerConfiguration {
            var configuration = ServerConfiguration(dataDirectory: root + "/" + name)
            configuration.hoard = hoard
            configuration.port = 0
            configuration.limits = .forTests
            configure(name, &configuration)
            return configuration
        }
        let appA = try await buildApplication(configuration(first, "a"))
        let appB = try await buildApplication(configuration(second, "b"))
        try await appA.test(.live) { clientA in
            try await appB.test(.live) { clientB in
                try await body(
                    Replica(client: clientA, port: try #require(clientA.port), hoard: first),
                    Replica(client: clientB, port: try #require(clientB.port), hoard: second), hostToken)
            }
        }
    }

    /// One replica: its test client (over a real socket), port and repository.
    struct Replica: Sendable {
        let client: any TestClientProtocol
        let port: Int
        let hoard: Hoard

        /// Makes a session through this replica whose map holds only the token `goblin-1` (players grab only what is
        /// on the table): its id and join code.
        func createSession(_ name: String, token: String) async throws -> (id: String, code: String) {
            let map: [String: Any] = ["tokens": [["id": "goblin-1", "x": 0, "y": 0]]]
            let created = try await client.json(.post, "/v1/sessions", token: token, body: ["name": name, "map": map]).json
            return (try #require(created["id"] as? String), try #require(created["code"] as? String))
        }

        /// Joins a session through this replica: the participant's token and id.
        func join(code: String, as name: String) async throws -> (token: String, id: String) {
            let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": name]).json
            return (try #require(joined["participantToken"] as? String), try #require(joined["participantId"] as? String))
        }
    }

    @Test func aBlobPutThroughOneReplicaIsReadThroughTheOtherAtOnce() async throws {
        try await Self.withReplicas { a, b, token in
            let bytes = Array("a picture only replica A was sent \(UUID())".utf8)
            let digest = BlobHasher.digest(of: bytes)
            try await a.client.execute(uri: "/v1/blobs/\(digest)", method: .put, headers: auth(token), body: buffer(bytes)) { response in
                #expect(response.status == .created, "\(response.text)")
            }
            try await b.client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(token)) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == bytes)
            }
        }
    }

    @Test func aTokenMadeOnOneReplicaWorksOnTheOtherAtOnce() async throws {
        try await Self.withReplicas { a, b, token in
            let invited = try await a.client.json(.post, "/v1/invites", token: token, body: ["role": "member"])
            #expect(invited.status == .created, "\(invited.json)")
            let code = try #require(invited.json["code"] as? String)
            let accepted = try await a.client.json(.post, "/v1/invites/accept", body: ["code": code, "name": "tablet"])
            #expect(accepted.status == .created || accepted.status == .ok, "\(accepted.json)")
            let secret = try #require(accepted.json["token"] as? String)
            #expect(try await b.client.json(.get, "/v1/packs", token: secret).status == .ok)
        }
    }

    @Test func hostOpsOnOneReplicaReachAPlayerOnTheOtherInOrderWithNoGapOrRepeat() async throws {
        try await Self.withReplicas { a, b, token in
            let (session, code) = try await a.createSession("Split", token: token)
            let player = try await b.join(code: code, as: "Ana").token
            let count = 500
            // The player listens on B from the start; the host sends on A, each op paced by its echo.
            async let heard = LiveClient.exchange(
                port: b.port, session: session, token: player, since: 0, until: count + 2, stop: #""n":\#(count - 1)}"#, timeout: .seconds(90))
            try await Task.sleep(for: .milliseconds(300))
            _ = try await LiveClient.exchange(
                port: a.port, session: session, token: token, send: (0..<count).map(LiveChannelTests.op), until: count + 10,
                stop: #""n":\#(count - 1)}"#, timeout: .seconds(90), paced: true, gap: .milliseconds(15))
            let events = LiveClient.objects(try await heard)
            let seqs = events.compactMap { $0["seq"] as? Int }
            #expect(seqs == Array(1...(seqs.last ?? 0)), "every sequence number once, in order")
            #expect(events.compactMap(LiveChannelTests.number) == Array(0..<count), "the host's ops, in order, none lost or repeated")
        }
    }

    @Test func playersOnTwoReplicasGrabbingOneTokenSeeOneWinner() async throws {
        try await Self.withReplicas { a, b, token in
            let (session, code) = try await a.createSession("Grab", token: token)
            let players = [try await a.join(code: code, as: "Ana").token, try await b.join(code: code, as: "Bo").token]
            let grab = #"{"type":"grab","entity":"goblin-1"}"#
            async let seenOnA = LiveClient.exchange(port: a.port, session: session, token: players[0], since: 0, send: [grab], until: 6, timeout: .seconds(10))
            async let seenOnB = LiveClient.exchange(port: b.port, session: session, token: players[1], since: 0, send: [grab], until: 6, timeout: .seconds(10))
            let seen = try await [LiveClient.objects(seenOnA), LiveClient.objects(seenOnB)]
            let winners = seen.map { events in events.filter { $0["type"] as? String == "grab" }.compactMap { $0["by"] as? String } }
            #expect(winners[0].count == 1 && winners[1].count == 1, "exactly one grab event on each replica: \(winners)")
            #expect(winners[0] == winners[1], "both see the same winner")
            #expect(seen.joined().filter { $0["code"] as? String == "GRAB_DENIED" }.count == 1, "the other is refused")
        }
    }

    /// A replica that reads a session after a grab was made elsewhere knows who holds what: a late player's grab of
    /// a held token is refused.
    @Test func aReplicaThatLoadsASessionAfterAGrabKnowsItsHolder() async throws {
        try await Self.withReplicas { a, b, token in
            let (session, code) = try await a.createSession("Late", token: token)
            let ana = try await a.join(code: code, as: "Ana").token
            let grab = #"{"type":"grab","entity":"goblin-1"}"#
            // Ana keeps one socket open (her grab outlives the other) and grabs through another, on A.
            let anaStays = Task { try await LiveClient.exchange(port: a.port, session: session, token: ana, until: 100, stop: "never", timeout: .seconds(60)) }
            defer { anaStays.cancel() }
            try await Task.sleep(for: .milliseconds(300))
            let granted = LiveClient.objects(try await LiveClient.exchange(
                port: a.port, session: session, token: ana, since: 0, send: [grab], until: 20, stop: #""type":"grab""#, timeout: .seconds(10)))
            #expect(granted.contains { $0["type"] as? String == "grab" }, "\(granted)")
            // Bo joins through B only now (B reads the session then) and is refused the held token.
            let bo = try await b.join(code: code, as: "Bo").token
            let refused = LiveClient.objects(try await LiveClient.exchange(
                port: b.port, session: session, token: bo, since: 0, send: [grab], until: 20, stop: "GRAB_DENIED", timeout: .seconds(10)))
            #expect(refused.contains { $0["code"] as? String == "GRAB_DENIED" }, "\(refused)")
            #expect(refused.filter { $0["type"] as? String == "grab" }.count == 1, "only Ana's grab: \(refused)")
        }
    }

    /// Whichever replica is asked, a player connected to the other one is connected; when that replica stops
    /// renewing its leases (it died), they leave, for everyone, once.
    @Test func whoIsConnectedIsAnsweredForEveryReplicaAndAPlayerLeavesWithADeadOne() async throws {
        try await Self.withReplicas(configure: { name, configuration in
            configuration.grabLease = .seconds(2)
            configuration.grabRenewal = name == "b" ? .seconds(3600) : .milliseconds(200)
        }) { a, b, token in
            let (session, code) = try await a.createSession("Who", token: token)
            let (player, ana) = try await b.join(code: code, as: "Ana")
            func isConnected(through replica: Replica) async throws -> Bool {
                let shown = try await replica.client.json(.get, "/v1/sessions/\(session)", token: token).json
                let participants = shown["participants"] as? [[String: Any]] ?? []
                return participants.first { $0["id"] as? String == ana }?["connected"] as? String == "yes"
            }
            // Ana stays on B; the host watches through A.
            async let watched = LiveClient.exchange(
                port: a.port, session: session, token: token, since: 0, until: 30, stop: #""event":"left""#, timeout: .seconds(30))
            let anaStays = Task { try await LiveClient.exchange(port: b.port, session: session, token: player, until: 100, stop: "never", timeout: .seconds(60)) }
            defer { anaStays.cancel() }
            #expect(try await Fixture.eventually(seconds: 10) { try await isConnected(through: a) }, "A knows Ana is on B")
            #expect(try await isConnected(through: b))
            let presence = LiveClient.objects(try await watched).filter { $0["type"] as? String == "presence" }
                .filter { ($0["participant"] as? [String: Any])?["id"] as? String == ana }.map { $0["event"] as? String }
            #expect(presence == ["joined", "left"], "Ana joined, and left once B's lease ended: \(presence)")
            #expect(try await !isConnected(through: a))
        }
    }

    /// B stands for a replica that died: it stops renewing its leases (its sockets stay open, so nothing else releases
    /// the grab). A releases the grab once B's lease has ended, and both replicas' players see it released once.
    @Test func aGrabLeasedByAReplicaThatStopsRenewingIsReleasedByAnother() async throws {
        try await Self.withReplicas(configure: { name, configuration in
            configuration.grabLease = .seconds(1)
            configuration.grabRenewal = name == "b" ? .seconds(3600) : .milliseconds(200)
        }) { a, b, token in
            let (session, code) = try await a.createSession("Lease", token: token)
            let (player, ana) = try await b.join(code: code, as: "Ana")
            let grab = #"{"type":"grab","entity":"goblin-1"}"#
            async let seenByAna = LiveClient.exchange(
                port: b.port, session: session, token: player, since: 0, send: [grab], until: 20, stop: #""type":"release""#,
                timeout: .seconds(30))
            async let seenByHost = LiveClient.exchange(
                port: a.port, session: session, token: token, since: 0, until: 20, stop: #""type":"release""#, timeout: .seconds(30))
            for events in try await [LiveClient.objects(seenByAna), LiveClient.objects(seenByHost)] {
                let grabs = events.filter { ["grab", "release"].contains($0["type"] as? String) }
                #expect(grabs.map { $0["type"] as? String } == ["grab", "release"], "\(events)")
                #expect(grabs.allSatisfy { $0["by"] as? String == ana && $0["entity"] as? String == "goblin-1" }, "\(grabs)")
            }
        }
    }

    /// Issue 34: a lease is enforced when it is read, not only by the timer that releases ended ones. Neither replica
    /// renews or ends leases during the test (every hour), so only the grab itself can see that Ana's lease ended.
    @Test func aGrabWhoseLeaseEndedIsTakenByTheNextGrabBeforeAnyTimerReleasesIt() async throws {
        try await Self.withReplicas(configure: { _, configuration in
            configuration.grabLease = .seconds(1)
            configuration.grabRenewal = .seconds(3600)
        }) { a, b, token in
            let (session, code) = try await a.createSession("Lease read", token: token)
            let (ana, anaId) = try await b.join(code: code, as: "Ana")
            let (bo, boId) = try await a.join(code: code, as: "Bo")
            let grab = #"{"type":"grab","entity":"goblin-1"}"#
            // Ana stays at the table (a socket's end releases what it holds) until she sees Bo's grab.
            async let anaSaw = LiveClient.exchange(
                port: b.port, session: session, token: ana, since: 0, send: [grab], until: 20, stop: "\"by\":\"\(boId)\"",
                timeout: .seconds(15))
            try await Task.sleep(for: .milliseconds(2000))
            let seen = LiveClient.objects(
                try await LiveClient.exchange(
                    port: a.port, session: session, token: bo, since: 0, send: [grab], until: 20, stop: "\"by\":\"\(boId)\"",
                    timeout: .seconds(10)))
            let grabs = seen.filter { ["grab", "release"].contains($0["type"] as? String) }.map { "\($0["type"] ?? "") \($0["by"] ?? "")" }
            #expect(grabs == ["grab \(anaId)", "release \(anaId)", "grab \(boId)"], "\(seen)")
            #expect(!seen.contains { $0["code"] as? String == "GRAB_DENIED" }, "\(seen)")
            let anaGrabs = LiveClient.objects(try await anaSaw).filter { $0["type"] as? String == "grab" }.compactMap { $0["by"] as? String }
            #expect(anaGrabs == [anaId, boId])
        }
    }

    @Test func postgreSQLRefusingConnectionsIs503AndRecordsNothing() async throws {
        let url = try TestPostgres.newDatabase()
        let name = String(url.split(separator: "/").last ?? "")
        try await Self.withReplicas(url: url) { a, _, token in
            let terminate = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()"
            try TestPostgres.execute("ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS false", terminate)
            let bytes = Array("written while the catalog is away \(UUID())".utf8)
            let digest = BlobHasher.digest(of: bytes)
            try await a.client.execute(uri: "/v1/blobs/\(digest)", method: .put, headers: auth(token), body: buffer(bytes)) { response in
                #expect(response.status == .serviceUnavailable, "\(response.text)")
                #expect(response.text.contains("CATALOG_UNAVAILABLE"))
                #expect(response.headers[.retryAfter] != nil)
            }
            try await a.client.execute(uri: "/v1/packs", method: .get, headers: auth(token)) { response in
                #expect(response.status == .serviceUnavailable, "\(response.text)")
            }
            try TestPostgres.execute("ALTER DATABASE \(name) WITH ALLOW_CONNECTIONS true")
            let catalog = try PostgresCatalog(url: url)
            defer { catalog.close() }
            #expect(try catalog.blob(digest) == nil, "nothing was recorded")
            try await a.client.execute(uri: "/v1/packs", method: .get, headers: auth(token)) { response in
                #expect(response.status == .ok, "it works again once PostgreSQL is back")
            }
        }
    }
}
