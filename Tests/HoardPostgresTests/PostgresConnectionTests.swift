import HoardCatalog
import HoardTestSupport
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import HoardPostgres

@Suite struct PostgresConnectionTests {
    @Test func aURLWithoutSchemeUserOrDatabaseIsRefusedSayingHowToWriteIt() throws {
        for url in ["http://hoard@127.0.0.1/hoard", "postgres://127.0.0.1:5432/hoard", "postgres://hoard@127.0.0.1:5432/",
                    "postgres://hoard@127.0.0.1/hoard?sslmode=require"] {
            let error = #expect(throws: PostgresCatalogError.self) { try PostgresCatalogDatabase(url: url) }
            #expect(error?.code == .badURL)
            #expect(error?.message.contains("postgres://USER@HOST:PORT/DATABASE") == true, "\(url)")
        }
        let database = try PostgresCatalogDatabase(url: "postgresql://me:secret@db.example:6000/catalog")
        #expect(database.displayURL == "postgresql://me@db.example:6000/catalog")
        #expect(database.configuration.password == "secret")
    }

    @Test func aServerThatIsDownIsAClearError() async throws {
        // Port 1 on loopback: nothing listens there.
        let server = try PostgresCatalogDatabase(url: PostgresFixture.serverURL())
        let down = try PostgresCatalogDatabase(url: PostgresFixture.url(of: server, port: 1))
        let error = await #expect(throws: PostgresCatalogError.self) { try await down.connect() }
        #expect(error?.code == .unreachable)
        #expect(error?.message == "cannot reach PostgreSQL at \(down.displayURL): start it or check --catalog")
    }

    @Test func aMissingDatabaseOrUnknownUserIsAClearError() async throws {
        let server = try PostgresCatalogDatabase(url: PostgresFixture.serverURL())
        let missing = try PostgresCatalogDatabase(url: PostgresFixture.url(of: server, database: "no_such_catalog"))
        let noDatabase = await #expect(throws: PostgresCatalogError.self) { try await missing.connect() }
        #expect(noDatabase?.code == .refused)
        #expect(noDatabase?.message.contains("has no database 'no_such_catalog': create it") == true)

        let stranger = try PostgresCatalogDatabase(url: PostgresFixture.url(of: server, user: "no_such_user"))
        let refused = await #expect(throws: PostgresCatalogError.self) { try await stranger.connect() }
        #expect(refused?.code == .refused)
        #expect(refused?.message.contains("refused the user 'no_such_user'") == true)
    }

    /// postgres-nio 1.33.2 can lose a statement sent as the server ends its backend: the connection closes and the
    /// statement's future never completes. A thread waiting for it is let go by the close.
    @Test func aStatementWhoseConnectionClosesUnansweredFailsInsteadOfWaitingForever() throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let unanswered = loop.makePromise(of: Int.self)
        let started = ContinuousClock.now
        #expect(throws: ConnectionClosed.self) { try unanswered.futureResult.blockingValue(failingWhenClosed: { true }) }
        #expect(ContinuousClock.now - started < .seconds(10))
        unanswered.fail(ConnectionClosed())
        // An answer is the answer, also one that takes longer than the checks of an open connection.
        let answered = loop.makePromise(of: Int.self)
        loop.scheduleTask(in: .milliseconds(2500)) { answered.succeed(7) }
        #expect(try answered.futureResult.blockingValue(failingWhenClosed: { false }) == 7)
    }

    /// A read whose backend is terminated mid-transaction is read again on another connection; a write is not.
    @Test func aReadWhoseConnectionBreaksIsReadAgainAndAWriteIsNot() throws {
        let catalog = try PostgresCatalog(url: try TestPostgres.newDatabase())
        defer { catalog.close() }
        let attempts = Mutex(0)
        let pid = try catalog.read("a read") { (transaction: PostgresTransaction) throws -> Int32? in
            let attempt = attempts.withLock { count -> Int in
                count += 1
                return count
            }
            if attempt == 1 { try transaction.query("SELECT pg_terminate_backend(pg_backend_pid())") }
            return try transaction.rows("SELECT pg_backend_pid()", as: Int32.self).first
        }
        #expect(attempts.withLock { $0 } == 2)
        #expect(pid != nil)
        attempts.withLock { $0 = 0 }
        let error = #expect(throws: CatalogError.self) {
            try catalog.write("a write") { (transaction: PostgresTransaction) throws in
                attempts.withLock { $0 += 1 }
                try transaction.query("SELECT pg_terminate_backend(pg_backend_pid())")
            }
        }
        #expect(attempts.withLock { $0 } == 1)
        #expect(error?.code == .unavailable, "\(String(describing: error))")
    }
}
