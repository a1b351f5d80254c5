import Foundation
import HoardCore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// An error of the PostgreSQL catalog: a code, a message that says what to do, and the cause.
public typealias PostgresCatalogError = CodedError<PostgresCatalogFailure>

/// What failed when speaking to PostgreSQL (``PostgresCatalogError``'s codes).
public enum PostgresCatalogFailure: String, Sendable, Hashable {
    /// The `--catalog` URL is not a `postgres://USER@HOST:PORT/DB` URL.
    case badURL = "BAD_CATALOG_URL"
    /// Nothing answers at the URL's host and port (PostgreSQL is down or elsewhere).
    case unreachable = "CATALOG_UNAVAILABLE"
    /// PostgreSQL answered but refused the user, the password or the database.
    case refused = "CATALOG_REFUSED"
    /// A statement failed, or the connection broke during it.
    case database = "STORAGE_FAILURE"
    /// A named thing does not exist.
    case notFound = "NOT_FOUND"
}

/// Where the PostgreSQL catalog is and how to connect to it: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (also
/// `postgresql://`; the port defaults to 5432). Each ``connect()`` opens one connection; the caller closes it.
///
/// A failed connection says which of three things is wrong, each with what to do: nothing answers (server down,
/// wrong host or port), the user or password is refused, or the database does not exist.
public struct PostgresCatalogDatabase: Sendable {
    /// The URL as given, without its password (for messages and logs).
    public let displayURL: String
    /// The connection settings the URL names.
    public let configuration: PostgresConnection.Configuration
    /// Where its connections log.
    public let logger: Logger

    /// Reads a `postgres://` URL; throws ``PostgresCatalogFailure/badURL`` saying what is missing.
    public init(url text: String, logger: Logger = Logger(label: "hoard.postgres")) throws(PostgresCatalogError) {
        let usage = "write it as postgres://USER@HOST:PORT/DATABASE"
        guard let url = URLComponents(string: text), let scheme = url.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresCatalogError(.badURL, "'\(text)' is not a PostgreSQL URL; \(usage)")
        }
        guard let host = url.host, !host.isEmpty else {
            throw PostgresCatalogError(.badURL, "the catalog URL '\(text)' names no host; \(usage)")
        }
        guard let user = url.user, !user.isEmpty else {
            throw PostgresCatalogError(.badURL, "the catalog URL '\(text)' names no user; \(usage)")
        }
        let database = String(url.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresCatalogError(.badURL, "the catalog URL '\(text)' names no database; \(usage)")
        }
        if let items = url.queryItems, !items.isEmpty {
            throw PostgresCatalogError(.badURL, "the catalog URL '\(text)' has options Hoard does not read; \(usage)")
        }
        let port = url.port ?? 5432
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: url.password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        self.configuration = configuration
        self.displayURL = "\(scheme)://\(user)@\(host):\(port)/\(database)"
        self.logger = logger
    }

    /// Opens one connection, or says which part of the URL is wrong.
    public func connect() async throws(PostgresCatalogError) -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(
                configuration: configuration, id: Self.nextConnectionID(), logger: logger)
        } catch {
            throw connectionError(error)
        }
    }

    /// What a failure to connect means for the person who gave the URL.
    func connectionError(_ error: any Error) -> PostgresCatalogError {
        let user = configuration.username
        let database = configuration.database ?? ""
        if let error = error as? PSQLError, error.code == .server {
            switch error.serverInfo?[.sqlState] ?? "" {
            case "3D000":
                return PostgresCatalogError(
                    .refused, "PostgreSQL at \(displayURL) has no database '\(database)': create it (createdb \(database))"
                        + " or check --catalog", cause: error.serverInfo?[.message])
            case let state where state.hasPrefix("28"):
                return PostgresCatalogError(
                    .refused, "PostgreSQL at \(displayURL) refused the user '\(user)': check the user and password in"
                        + " --catalog", cause: error.serverInfo?[.message])
            default:
                return PostgresCatalogError(
                    .refused, "PostgreSQL at \(displayURL) refused the connection", cause: error.serverInfo?[.message])
            }
        }
        if let error = error as? PSQLError, error.code == .authMechanismRequiresPassword {
            return PostgresCatalogError(
                .refused, "PostgreSQL at \(displayURL) asks a password of '\(user)': put it in --catalog"
                    + " (postgres://USER:PASSWORD@HOST:PORT/DB)", causedBy: error)
        }
        return PostgresCatalogError(
            .unreachable, "cannot reach PostgreSQL at \(displayURL): start it or check --catalog", cause: Self.words(error))
    }

    /// A statement's failure, with PostgreSQL's own words as the cause.
    static func statementError(_ what: String, _ error: any Error) -> PostgresCatalogError {
        if let error = error as? PostgresCatalogError { return error }
        let psql = (error as? PostgresTransactionError).flatMap { $0.closureError ?? $0.commitError ?? $0.beginError }
            ?? error
        if let psql = psql as? PostgresCatalogError { return psql }
        return PostgresCatalogError(.database, what, cause: words(psql))
    }

    /// A lower layer's words for a cause: PostgreSQL's message, else what broke the connection. (postgres-nio's own
    /// description of its errors is a fixed sentence, so as to leak no query text.)
    static func words(_ error: any Error) -> String {
        guard let psql = error as? PSQLError else { return "\(error)" }
        return psql.serverInfo?[.message] ?? psql.underlying.map { "\($0)" } ?? "\(psql.code)"
    }

    private static let connectionCounter = Atomic<Int>(0)

    /// A process-wide connection number for postgres-nio's logs.
    static func nextConnectionID() -> Int {
        connectionCounter.add(1, ordering: .relaxed).newValue
    }
}
