import Foundation
import HoardPostgres
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The PostgreSQL server tests run against: `HOARD_TEST_POSTGRES`, the URL scripts/test.sh exports after
/// `tools/postgres.sh start`. Each test makes a database of its own. Without the server these tests fail: they never
/// skip. Calls block their thread (connections run on NIO's shared event loops, never the caller's).
public enum TestPostgres {
    /// Why a test could not use the server.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    static let logger = Logger(label: "hoard.postgres.tests")

    /// The server's URL, or a failure that says how to start one.
    public static func serverURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["HOARD_TEST_POSTGRES"] else {
            throw Failure(description: "HOARD_TEST_POSTGRES is not set: run `export HOARD_TEST_POSTGRES=$(tools/postgres.sh start)` first")
        }
        return url
    }

    /// Creates a new, empty database on the test server and gives its URL.
    public static func newDatabase() throws -> String {
        let server = try PostgresCatalogDatabase(url: serverURL(), logger: logger)
        let name = "hoard_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try execute(server.displayURL, "CREATE DATABASE \(name)")
        let configuration = server.configuration
        return "postgres://\(configuration.username)@\(configuration.host ?? "127.0.0.1"):\(configuration.port ?? 5432)/\(name)"
    }

    /// Runs one statement in the database `url` names.
    public static func execute(_ url: String, _ sql: String) throws {
        _ = try rows(url, sql)
    }

    /// The rows a query gives, each column as text (cast other columns in the query: `count(*)::text`; any other type
    /// throws); NULL is nil.
    public static func rows(_ url: String, _ sql: String) throws -> [[String?]] {
        let database = try PostgresCatalogDatabase(url: url, logger: logger)
        let connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: database.configuration, id: 0, logger: logger
        ).wait()
        defer { _ = try? (connection.close() as EventLoopFuture<Void>).wait() }
        let result = try connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait()
        return try result.rows.map { row in try row.map { cell in try cell.decode(String?.self) } }
    }

    /// The first column of the first row (see ``rows(_:_:)``).
    public static func value(_ url: String, _ sql: String) throws -> String? {
        try rows(url, sql).first?.first ?? nil
    }
}
