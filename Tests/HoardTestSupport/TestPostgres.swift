import Foundation
import HoardPostgres
import PostgresNIO

/// The PostgreSQL tests run against: `HOARD_TEST_POSTGRES`, the URL scripts/test.sh exports after
/// `tools/postgres.sh start`. Without it the tests that need it fail: they never skip.
public enum TestPostgres {
    /// Why there is no server to test against, and how to start one.
    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "HOARD_TEST_POSTGRES is not set: run `export HOARD_TEST_POSTGRES=$(tools/postgres.sh start)` first"
        }
    }

    /// Creates a new, empty database on the test server and gives its URL.
    public static func newDatabase() throws -> String {
        let name = "hoard_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try execute("CREATE DATABASE \(name)")
        let configuration = try PostgresCatalogDatabase(url: serverURL()).configuration
        return "postgres://\(configuration.username)@\(configuration.host ?? "127.0.0.1"):\(configuration.port ?? 5432)/\(name)"
    }

    /// Runs statements, one by one, on the test server's own database (as its superuser would: to create databases,
    /// refuse connections to one, terminate backends).
    public static func execute(_ statements: String...) throws {
        _ = try results(of: statements, in: serverURL())
    }

    /// Runs statements, one by one, in the database `url` names.
    public static func execute(in url: String, _ statements: String...) throws {
        _ = try results(of: statements, in: url)
    }

    /// Runs each of `statements` on the database at `url`.
    public static func execute(in url: String, statements: [String]) throws {
        _ = try results(of: statements, in: url)
    }

    /// The rows a query gives in the database `url` names, each column as text (cast other types in the query:
    /// `count(*)::text`; any other type throws); NULL is nil.
    public static func rows(in url: String, _ query: String) throws -> [[String?]] {
        try results(of: [query], in: url)[0].rows.map { row in try row.map { cell in try cell.decode(String?.self) } }
    }

    /// The first column of a query's first row, as ``rows(in:_:)`` gives it.
    public static func value(in url: String, _ query: String) throws -> String? {
        try rows(in: url, query).first?.first ?? nil
    }

    /// Each statement's result, run one by one on a connection of their own.
    private static func results(of statements: [String], in url: String) throws -> [PostgresQueryResult] {
        let database = try PostgresCatalogDatabase(url: url)
        let connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: database.configuration, id: 0, logger: database.logger
        ).wait()
        defer { _ = try? (connection.close() as EventLoopFuture<Void>).wait() }
        return try statements.map { statement in
            try connection.query(PostgresQuery(unsafeSQL: statement), logger: database.logger).wait()
        }
    }

    /// The test server's URL.
    public static func serverURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["HOARD_TEST_POSTGRES"] else { throw Missing() }
        return url
    }
}
