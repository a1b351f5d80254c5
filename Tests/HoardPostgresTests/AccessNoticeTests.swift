import HoardPostgres
import PostgresNIO
import Testing

/// `pg2-access-notify` and the listener's side of it: what tells a replica to read the access change log.
@Suite(.timeLimit(.minutes(1))) struct AccessNoticeTests {
    @Test func aTransactionAppendingToTheAccessLogSendsOneNoticeAtCommitAndOtherWritesNone() async throws {
        let database = try await PostgresFixture.migratedDatabase()
        let logger = PostgresFixture.logger
        let writer = try await database.connect()
        let reader = try await database.connect()
        defer { Task { try? await writer.close(); try? await reader.close() } }
        let channel = PostgresSchema.accessChangeChannel
        let payloads = try await reader.listen(on: channel) { notifications in
            try await writer.query(#"INSERT INTO "group" (name, "createdAt") VALUES ('Dragons', now())"#, logger: logger)
            for statement in ["BEGIN", #"UPDATE "group" SET name = 'Wyrms'"#, #"UPDATE "group" SET name = 'Drakes'"#, "COMMIT"] {
                try await writer.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            // Notices come in commit order: this one closes the list.
            try await writer.query("SELECT pg_notify(\(channel), 'end')", logger: logger)
            var payloads: [String] = []
            for try await notification in notifications {
                if notification.payload == "end" { break }
                payloads.append(notification.payload)
            }
            return payloads
        }
        let logged = try await writer.query(#"SELECT count(*) FROM "accessChange""#, logger: logger).decode(Int64.self)
            .reduce(into: [Int64]()) { $0.append($1) }
        #expect(logged == [2], "two rows appended")
        #expect(payloads == [""], "one notice for the transaction that appended them; none for the group's insert")
    }

    @Test func aListenerCallsTheAccessHandlerOnEachNoticeAndAfterEachReconnection() async throws {
        let database = try await PostgresFixture.migratedDatabase()
        let logger = PostgresFixture.logger
        let writer = try await database.connect()
        defer { Task { try? await writer.close() } }
        try await writer.query(#"INSERT INTO "group" (name, "createdAt") VALUES ('Dragons', now())"#, logger: logger)
        let listener = SessionEventListener(database: database)
        let (calls, call) = AsyncStream.makeStream(of: Void.self)
        await listener.onAccessChange { call.yield() }
        let listening = Task { await listener.run(retryDelay: .milliseconds(100)) { _ in } }
        defer { listening.cancel() }
        var iterator = calls.makeAsyncIterator()

        _ = await iterator.next()  // connected and LISTENing
        #expect(await listener.connectionCount == 1)
        try await writer.query(#"UPDATE "group" SET name = 'Wyrms'"#, logger: logger)
        _ = await iterator.next()  // the notice
        #expect(await listener.connectionCount == 1)
        try await writer.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """, logger: logger)
        // Nothing was written: the next call is the new connection's, once it LISTENs.
        _ = await iterator.next()
        #expect(await listener.connectionCount == 2)
    }
}
