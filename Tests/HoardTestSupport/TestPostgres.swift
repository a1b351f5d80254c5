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
        let server = try PostgresCatalogDatabase(url: serverURL())
        let connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: server.configuration, id: 0, logger: server.logger
        ).wait()
        defer { _ = try? (connection.close() as EventLoopFuture<Void>).wait() }
        for statement in statements {
            _ = try connection.query(PostgresQuery(unsafeSQL: statement), logger: server.logger).wait()
        }
    }

    /// The test server's URL.
    public static func serverURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["HOARD_TEST_POSTGRES"] else { throw Missing() }
        return url
    }
}
