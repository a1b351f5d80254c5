import HoardPostgres
import PostgresNIO
import Testing

@Suite struct SessionEventLogTests {
    @Test func fiveHundredEventsAppendedOnOneConnectionReachAListenerOnAnotherInOrderOnce() async throws {
        let database = try await PostgresFixture.migratedDatabase()
        let writer = try await database.connect()
        defer { Task { try? await writer.close() } }
        let session = try await PostgresFixture.makeSession(writer)
        let listener = SessionEventListener(database: database, following: [session: 0])
        let (delivered, deliver) = AsyncStream.makeStream(of: SessionEvent.self)
        let listening = Task { await listener.run { deliver.yield($0) } }
        defer { listening.cancel() }

        let log = SessionEventLog(connection: writer)
        var seqs: [Int64] = []
        for index in 1...500 {
            seqs.append(try await log.append(session: session, body: #"{"op":\#(index)}"#))
        }
        #expect(seqs == Array(1...500))
        let events = try await PostgresFixture.collect(500, from: delivered)
        #expect(events.map(\.seq) == Array(1...500))
        #expect(events.map(\.body) == (1...500).map { #"{"op":\#($0)}"# })
        #expect(events.allSatisfy { $0.session == session })
        #expect(await listener.position(of: session) == 500)
        #expect(await listener.connectionCount == 1)
    }

    @Test func twoAppendersOnOneSessionGetDistinctConsecutiveNumbers() async throws {
        let database = try await PostgresFixture.migratedDatabase()
        let first = try await database.connect()
        let second = try await database.connect()
        defer { Task { try? await first.close(); try? await second.close() } }
        let session = try await PostgresFixture.makeSession(first)
        async let one = Self.append(100, to: session, through: SessionEventLog(connection: first), tag: "a")
        async let two = Self.append(100, to: session, through: SessionEventLog(connection: second), tag: "b")
        let (a, b) = try await (one, two)
        #expect(a == a.sorted() && b == b.sorted(), "each appender's numbers grow")
        #expect((a + b).sorted() == Array(1...200))
        let events = try await SessionEventLog(connection: first).events(session: session, after: 0)
        #expect(events.map(\.seq) == Array(1...200))
        #expect(Set(events.map(\.body)).count == 200)
        let last = try await first.query(
            #"SELECT "lastSeq" FROM session WHERE id = \#(session)"#, logger: PostgresFixture.logger
        ).decode(Int64.self).reduce(into: [Int64]()) { $0.append($1) }
        #expect(last == [200])
    }

    @Test func aListenerWhoseBackendIsTerminatedReconnectsAndCatchesUpFromTheTable() async throws {
        let database = try await PostgresFixture.migratedDatabase()
        let writer = try await database.connect()
        defer { Task { try? await writer.close() } }
        let session = try await PostgresFixture.makeSession(writer)
        let log = SessionEventLog(connection: writer)
        let listener = SessionEventListener(database: database, following: [session: 0])
        let (delivered, deliver) = AsyncStream.makeStream(of: SessionEvent.self)
        let listening = Task { await listener.run(retryDelay: .milliseconds(300)) { deliver.yield($0) } }
        defer { listening.cancel() }

        _ = try await Self.append(50, to: session, through: log, tag: "before")
        var events = try await PostgresFixture.collect(50, from: delivered)
        let killed = try await writer.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """, logger: PostgresFixture.logger).decode(Bool.self).reduce(into: [Bool]()) { $0.append($1) }
        // The listener's backend among them (a closed connection's may still be exiting); connectionCount shows it.
        #expect(!killed.isEmpty && killed.allSatisfy { $0 })
        // Appended while the listener is down or reconnecting: it finds them in the table.
        _ = try await Self.append(50, to: session, through: log, tag: "after")
        events += try await PostgresFixture.collect(50, from: delivered)
        #expect(events.map(\.seq) == Array(1...100))
        #expect(await listener.connectionCount >= 2)
    }

    @Test func aSessionFollowedLaterIsDeliveredFromThePositionGivenAndAnUnfollowedOneIsNot() async throws {
        let database = try await PostgresFixture.migratedDatabase()
        let writer = try await database.connect()
        defer { Task { try? await writer.close() } }
        let followed = try await PostgresFixture.makeSession(writer)
        let other = try await PostgresFixture.makeSession(writer)
        let log = SessionEventLog(connection: writer)
        let listener = SessionEventListener(database: database)
        let (delivered, deliver) = AsyncStream.makeStream(of: SessionEvent.self)
        let listening = Task { await listener.run { deliver.yield($0) } }
        defer { listening.cancel() }

        _ = try await Self.append(3, to: followed, through: log, tag: "early")
        await listener.follow(session: followed, after: 1)
        var events = try await PostgresFixture.collect(2, from: delivered)
        _ = try await Self.append(5, to: other, through: log, tag: "other")
        _ = try await Self.append(2, to: followed, through: log, tag: "late")
        events += try await PostgresFixture.collect(2, from: delivered)
        #expect(events.map(\.seq) == [2, 3, 4, 5])
        #expect(events.allSatisfy { $0.session == followed })
        #expect(await listener.position(of: other) == nil)
    }

    @Test func appendingToASessionThatDoesNotExistIsNotFoundAndUsesNoNumber() async throws {
        let database = try await PostgresFixture.migratedDatabase()
        try await PostgresFixture.withConnection(database) { connection in
            let log = SessionEventLog(connection: connection)
            let error = await #expect(throws: PostgresCatalogError.self) {
                try await log.append(session: "no-such-session", body: "{}")
            }
            #expect(error?.code == .notFound)
            let events = try await log.events(session: "no-such-session", after: 0)
            #expect(events.isEmpty)
        }
    }

    /// Appends `count` events one after the other; returns their numbers.
    static func append(_ count: Int, to session: String, through log: SessionEventLog, tag: String) async throws -> [Int64] {
        var seqs: [Int64] = []
        for index in 0..<count {
            seqs.append(try await log.append(session: session, body: #"{"\#(tag)":\#(index)}"#))
        }
        return seqs
    }
}
