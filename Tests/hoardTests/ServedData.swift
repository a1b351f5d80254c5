import Foundation
import HoardTestSupport

/// A data directory with the group "default", a member's token for it and `hoard serve` on a free loopback port: what
/// the tests of commands that talk to a server start from.
struct ServedData {
    let data: String
    let token: String
    let port: Int
    var url: String { "http://127.0.0.1:\(port)" }

    /// Runs `body` while the server answers; the server is stopped and the directory removed after.
    static func with(_ body: (ServedData) async throws -> Void) async throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        _ = try CLI.run(["group", "create", "default", "--data-dir", data])
        let token = try CLI.run(["token", "create", "--group", "default", "--data-dir", data]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines).components(separatedBy: "\n").last ?? ""
        let port = try await freePort()
        let server = try CLI.start(
            ["serve", "--data-dir", data, "--port", "\(port)", "--log-level", "warning"], environment: ProcessInfo.processInfo.environment)
        defer { _ = server.terminate() }
        _ = try await CLI.get(port: port, path: "/healthz", token: token, from: server)
        try await body(ServedData(data: data, token: token, port: port))
    }
}
