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
        guard let url = ProcessInfo.processInfo.environment["HOARD_TEST_POSTGRES"] else { throw Missing() }
        let server = try PostgresCatalogDatabase(url: url)
        let name = "hoard_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: server.configuration, id: 0, logger: server.logger
        ).wait()
        defer { _ = try? (connection.close() as EventLoopFuture<Void>).wait() }
        _ = try connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: server.logger).wait()
        let configuration = server.configuration
        return "postgres://\(configuration.username)@\(configuration.host ?? "127.0.0.1"):\(configuration.port ?? 5432)/\(name)"
    }
}
