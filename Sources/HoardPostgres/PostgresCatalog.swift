import Foundation
import HoardCatalog
import HoardCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// The catalog in PostgreSQL: ``CatalogBackend``'s contract on one database that several replicas share.
///
/// Calls are synchronous, as the contract asks: each takes a connection from a small pool, runs its statements on
/// postgres-nio's own event loop and blocks its thread until the answer (as a read of SQLite's file does). The pool's
/// loop is never a caller's thread, so a wait cannot deadlock it. Every call is one transaction (`BEGIN` … `COMMIT`,
/// read committed); a statement that breaks the connection closes it and the next call opens another.
///
/// The queries follow ``PostgresSchema``'s mapping of SQLite's constructs, one file per area as in HoardCatalog.
public final class PostgresCatalog: Sendable {
    /// Where it connects, for messages.
    public let database: PostgresCatalogDatabase
    let pool: PostgresPool
    let logger: Logger
    /// What other replicas log in sessions: a LISTEN on its own connection, run by the server.
    public let sessionEventFeed: (any SessionEventFeed)?
    /// When other replicas change access: notices on the same connection, while the session event feed runs.
    public let accessChangeFeed: (any AccessChangeFeed)?

    /// Connects to `database`, migrating its schema when it lacks migrations; at most `connections` at once.
    public init(_ database: PostgresCatalogDatabase, connections: Int = 8) throws(PostgresCatalogError) {
        self.database = database
        self.logger = database.logger
        self.pool = PostgresPool(database, size: connections)
        let listener = SessionEventListener(database: database)
        self.sessionEventFeed = listener
        self.accessChangeFeed = listener
        try pool.migrate()
    }

    /// Opens the catalog a `postgres://` URL names (``PostgresCatalogDatabase/init(url:logger:)``'s errors).
    public convenience init(url: String, logger: Logger = Logger(label: "hoard.postgres")) throws(PostgresCatalogError) {
        try self.init(PostgresCatalogDatabase(url: url, logger: logger))
    }

    /// Closes every connection; calls after it fail.
    public func close() { pool.close() }

    /// Runs `body` in a read-only transaction, mapping failures to ``CatalogError`` (`what` says what was being read).
    func read<T>(_ what: String, _ body: (PostgresTransaction) throws -> T) throws(CatalogError) -> T {
        try pool.transaction(what, readOnly: true, body)
    }

    /// Runs `body` in one read-write transaction, mapping failures to ``CatalogError``.
    @discardableResult
    func write<T>(_ what: String, _ body: (PostgresTransaction) throws -> T) throws(CatalogError) -> T {
        try pool.transaction(what, readOnly: false, body)
    }
}

/// One transaction's connection, for synchronous statements.
struct PostgresTransaction {
    let connection: PostgresConnection
    let logger: Logger

    /// Runs a statement and gives every row; fails with ``ConnectionClosed`` when the connection closes first.
    @discardableResult
    func query(_ query: PostgresQuery) throws -> PostgresQueryResult {
        try connection.query(query, logger: logger).blockingValue(failingWhenClosed: { connection.isClosed })
    }

    /// Runs a statement and gives how many rows it inserted, updated or deleted.
    @discardableResult
    func execute(_ query: PostgresQuery) throws -> Int {
        try self.query(query).metadata.rows ?? 0
    }

    /// Runs a statement and decodes each row as `types`.
    func rows<each T: PostgresDecodable>(_ query: PostgresQuery, as types: (repeat each T).Type) throws -> [(repeat each T)] {
        try self.query(query).rows.map { try $0.decode((repeat each T).self) }
    }

    /// The first column of every row, as `type`.
    func values<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type) throws -> [T] {
        try self.query(query).rows.map { try $0.decode(T.self) }
    }

    /// The first row's first column as `type`, nil when there is no row.
    func value<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type) throws -> T? {
        try self.query(query).rows.first.map { try $0.decode(T.self) }
    }

    /// The first row's columns as `types`, nil when there is no row.
    func row<each T: PostgresDecodable>(_ query: PostgresQuery, as types: (repeat each T).Type) throws -> (repeat each T)? {
        try self.query(query).rows.first.map { try $0.decode((repeat each T).self) }
    }
}

/// A fixed number of connections to one database, handed to one transaction at a time; callers wait when all are
/// busy. Connections live on the pool's own event loop.
final class PostgresPool: Sendable {
    private struct State {
        var idle: [PostgresConnection] = []
        var opened = 0
        var isClosed = false
    }

    /// The pools' event loop: never a thread of the server's, whose handlers may call the catalog and wait.
    static let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    let database: PostgresCatalogDatabase
    private let size: Int
    private let loop = PostgresPool.loops.any()
    private let state: NIOLockedValueBox<State>
    private let available = NSCondition()

    init(_ database: PostgresCatalogDatabase, size: Int) {
        self.database = database
        self.size = max(1, size)
        self.state = NIOLockedValueBox(State())
    }

    /// Applies missing migrations (``PostgresSchema/migrate(_:logger:)``) on a connection of its own.
    func migrate() throws(PostgresCatalogError) {
        let connection = try open()
        defer { connection.closeBlocking() }
        try PostgresSchema.migrate(connection, logger: database.logger)
    }

    /// Runs `body` in a transaction on a pooled connection. A read whose connection broke under it (the backend was
    /// terminated, PostgreSQL restarted: its `ROLLBACK` fails too) is run once more on another connection: it wrote
    /// nothing, so nothing is done twice; a write is not, as its caller is told it may retry.
    func transaction<T>(
        _ what: String, readOnly: Bool, _ body: (PostgresTransaction) throws -> T
    ) throws(CatalogError) -> T {
        var outcome = try transactionOnce(what, readOnly: readOnly, body)
        if readOnly, case .closed = outcome { outcome = try transactionOnce(what, readOnly: readOnly, body) }
        switch outcome {
        case .done(let value): return value
        case .closed(let error): throw error
        }
    }

    /// A transaction's end: its value, or the failure of a connection that broke under it.
    private enum Outcome<T> {
        case done(T)
        case closed(CatalogError)
    }

    private func transactionOnce<T>(
        _ what: String, readOnly: Bool, _ body: (PostgresTransaction) throws -> T
    ) throws(CatalogError) -> Outcome<T> {
        let (connection, transaction) = try begin(readOnly: readOnly)
        var healthy = true
        defer { checkIn(connection, healthy: healthy) }
        do {
            let value = try body(transaction)
            try transaction.query("COMMIT")
            return .done(value)
        } catch {
            if (try? transaction.query("ROLLBACK")) == nil { healthy = false }
            let failure = error as? CatalogError ?? Self.catalogError(what, error)
            if !healthy { return .closed(failure) }
            throw failure
        }
    }

    /// A pooled connection with a transaction begun on it. A connection that broke while idle (PostgreSQL restarted,
    /// the backend was terminated) fails at `BEGIN`, before anything is done: it is closed and another one tried, so
    /// a restart of the server costs the callers nothing once it is back.
    private func begin(readOnly: Bool) throws(CatalogError) -> (PostgresConnection, PostgresTransaction) {
        var lastError: (any Error)?
        for _ in 0...size {
            let connection: PostgresConnection
            do {
                connection = try checkOut()
            } catch {
                throw CatalogError(.unavailable, error.message, cause: error.cause)
            }
            let transaction = PostgresTransaction(connection: connection, logger: database.logger)
            do {
                try transaction.query(readOnly ? "BEGIN READ ONLY" : "BEGIN")
                return (connection, transaction)
            } catch {
                checkIn(connection, healthy: false)
                lastError = error
            }
        }
        throw Self.catalogError("cannot begin a transaction", lastError ?? CancellationError())
    }

    /// A statement's failure as the contract names it: a lost connection or server says so; a serialization or
    /// deadlock failure asks for a retry; anything else says what could not be done, with PostgreSQL's words.
    static func catalogError(_ what: String, _ error: any Error) -> CatalogError {
        let psql = error as? PSQLError
        let state = psql?.serverInfo?[.sqlState] ?? ""
        let words = PostgresCatalogDatabase.words(error)
        switch state {
        case "40001", "40P01":
            return CatalogError(.database, "\(what): another writer got in the way; nothing was written, retry", cause: words)
        case "55P03", "57014":
            return CatalogError(.database, "\(what): the catalog stayed busy; nothing was written, retry", cause: words)
        case "", "57P01", "57P02", "57P03":  // no answer; the backend ended by an administrator, a crash, a start-up
            return CatalogError(.unavailable, "\(what): the connection to PostgreSQL broke; retry when it is back", cause: words)
        default:
            return CatalogError(.database, what, cause: words)
        }
    }

    private func checkOut() throws(PostgresCatalogError) -> PostgresConnection {
        while true {
            enum Next { case use(PostgresConnection), open, wait }
            let next: Next = state.withLockedValue { state in
                if let connection = state.idle.popLast() { return .use(connection) }
                if state.opened < size { state.opened += 1; return .open }
                return .wait
            }
            switch next {
            case .use(let connection):
                if !connection.isClosed { return connection }
                state.withLockedValue { $0.opened -= 1 }
            case .open:
                do {
                    return try open()
                } catch {
                    state.withLockedValue { $0.opened -= 1 }
                    signal()
                    throw error
                }
            case .wait:
                available.lock()
                _ = available.wait(until: Date().addingTimeInterval(0.05))
                available.unlock()
            }
        }
    }

    private func checkIn(_ connection: PostgresConnection, healthy: Bool) {
        let closeIt = state.withLockedValue { state -> Bool in
            if healthy, !state.isClosed, !connection.isClosed {
                state.idle.append(connection)
                return false
            }
            state.opened -= 1
            return true
        }
        if closeIt { Self.closeLater(connection) }
        signal()
    }

    /// Closes a connection without waiting, keeping it alive until it is closed (postgres-nio asserts that a
    /// connection is closed before it goes).
    private static func closeLater(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// A catalog dropped without ``close()`` (tests drop many) closes its idle connections.
    deinit {
        for connection in state.withLockedValue({ $0.idle }) { Self.closeLater(connection) }
    }

    private func signal() {
        available.lock()
        available.signal()
        available.unlock()
    }

    /// A new connection outside the pool's count: the pool's own, or one for a session-long state such as an advisory
    /// lock, which its caller closes.
    func open() throws(PostgresCatalogError) -> PostgresConnection {
        do {
            return try PostgresConnection.connect(
                on: loop, configuration: database.configuration, id: PostgresCatalogDatabase.nextConnectionID(),
                logger: database.logger
            ).blockingValue()
        } catch {
            throw database.connectionError(error)
        }
    }

    /// Closes the idle connections when the last catalog using the pool goes (postgres-nio requires every connection
    /// closed before it is released; tests make a catalog each).
    func close() {
        let idle = state.withLockedValue { state in
            state.isClosed = true
            defer { state.idle = [] }
            return state.idle
        }
        for connection in idle { connection.closeBlocking() }
    }
}

extension PostgresCatalog: CatalogBackend {}

extension PostgresCatalog {
    /// The collection lock: a session advisory lock on a connection of its own, released when it closes (also when
    /// this process dies, as PostgreSQL ends its session).
    public func collectionLock() throws(CatalogError) -> CatalogLock? {
        let connection: PostgresConnection
        do {
            connection = try pool.open()
        } catch {
            throw CatalogError(.unavailable, error.message, cause: error.cause)
        }
        let taken: Bool
        do {
            taken = try PostgresTransaction(connection: connection, logger: logger)
                .value("SELECT pg_try_advisory_lock(\(PostgresCatalog.collectionLockKey))", as: Bool.self) ?? false
        } catch {
            connection.closeBlocking()
            throw PostgresPool.catalogError("cannot take the garbage collection lock", error)
        }
        guard taken else {
            connection.closeBlocking()
            throw CatalogError(.conflict, "another replica is collecting garbage now; run gc again when it is done")
        }
        return AdvisoryLock(connection: connection)
    }

    /// The advisory lock key of garbage collection ("hoardgc" in ASCII).
    static let collectionLockKey: Int64 = 0x68_6F61_7264_6763

    /// A held session advisory lock: closing its connection releases it.
    struct AdvisoryLock: CatalogLock {
        let connection: PostgresConnection

        func release() {
            connection.closeBlocking()
        }
    }

    /// PostgreSQL keeps no catalog file: a backup is `pg_dump`'s job.
    public func backup(to path: String) throws(CatalogError) {
        throw CatalogError(.invalid, "the catalog is in PostgreSQL (\(database.displayURL)): back it up with pg_dump")
    }
}

extension PostgresConnection {
    /// Closes the connection and waits until it is closed (postgres-nio asserts that a connection is closed before it
    /// is released); a failure to close is a connection already gone.
    func closeBlocking() {
        _ = try? (close() as EventLoopFuture<Void>).blockingValue()
    }
}

extension EventLoopFuture where Value: Sendable {
    /// The future's value, blocking the calling thread until it completes. Unlike NIO's `wait()`, it may be called on
    /// an event loop's thread (a server handler reading the catalog blocks its loop as a read of SQLite's file does),
    /// as long as it is not the future's own loop: the pool's loop runs no one else's code.
    ///
    /// With `isClosed`, the wait also ends, with ``ConnectionClosed``, when the connection has been closed for a second
    /// without the value. A closing connection fails its statements at once; postgres-nio 1.33.2 sometimes loses one
    /// sent as the server terminates the backend (seen under load: a server thread waited forever on a closed
    /// connection). The check is a timed wait, not a callback on the connection's close, which would pile up one
    /// closure per statement for the connection's whole life.
    func blockingValue(failingWhenClosed isClosed: (() -> Bool)? = nil) throws -> Value {
        precondition(!eventLoop.inEventLoop, "blockingValue() on the future's own event loop would never return")
        let done = DispatchSemaphore(value: 0)
        let outcome = NIOLockedValueBox<Result<Value, any Error>?>(nil)
        @Sendable func settle(_ result: Result<Value, any Error>) {
            let first = outcome.withLockedValue { settled in
                guard settled == nil else { return false }
                settled = result
                return true
            }
            if first { done.signal() }
        }
        whenComplete { settle($0) }
        if let isClosed {
            var closedFor = 0
            while done.wait(timeout: .now() + .seconds(1)) == .timedOut {
                closedFor = isClosed() ? closedFor + 1 : 0
                if closedFor == 2 { settle(.failure(ConnectionClosed())) }
            }
        } else {
            done.wait()
        }
        guard let result = outcome.withLockedValue({ $0 }) else { Swift.preconditionFailure("a completed future has a result") }
        return try result.get()
    }
}

/// A statement's connection closed before PostgreSQL answered it: nothing more is known of what it did.
struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the connection to PostgreSQL closed before it answered" }
}
