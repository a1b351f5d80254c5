import Foundation
import HTTPTypes
import HoardServer
import HummingbirdTesting
import Logging
import Testing

/// A method the server does not implement gets 501 — from ``BadRequestAnswerer`` when NIO's decoder does not know
/// it, from the router when no path is served with it (405 with `Allow` on a served path) — and nothing is logged
/// above debug: anyone may send one, without a token, as often as they like.
@Suite(.timeLimit(.minutes(2))) struct UnknownMethodTests {
    @Test(arguments: [true, false])
    func unknownMethodsAnswer501AndLogNoError(fastPath: Bool) async throws {
        try await Fixture.with(packs: false) { fixture in
            var configuration = fixture.configuration
            configuration.hasBlobFastPath = fastPath
            let logs = CapturedLogs()
            let app = try await buildApplication(configuration, logger: Logger(label: "hoard") { _ in CapturingLogHandler(logs: logs) })
            let healthz = Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            let cases: [(bytes: [UInt8], statuses: [Int])] = [
                (Array("BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), [501]),
                (healthz + Array("BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), [200, 501]),
                (Array("GET /healthz HTTP/1.1\nHost: x\n\n".utf8), [400]),
            ]
            try await app.test(.live) { client in
                for (request, statuses) in cases {
                    let responses = try await BlobFastPathTests.responses(port: try #require(client.port), to: request)
                    #expect(responses.map(\.status) == statuses, "\(String(decoding: request.suffix(40), as: UTF8.self))")
                    #expect(responses.last?.headers["connection"] == "close")
                }
                // A method the decoder knows but no path is served with: the router's answer, with the error body:
                // 405 with the path's methods in `Allow` on a served path, 501 on any other.
                for method in ["PROPFIND", "TRACE"] {
                    let verb = try #require(HTTPRequest.Method(method))
                    try await client.execute(uri: "/healthz", method: verb) { response in
                        response.expectError(.methodNotAllowed, "METHOD_NOT_ALLOWED")
                        #expect(response.headers[.allow] == "GET")
                    }
                    try await client.execute(uri: "/v1/packs/some-pack", method: verb) { response in
                        response.expectError(.methodNotAllowed, "METHOD_NOT_ALLOWED")
                        #expect(response.headers[.allow] == "DELETE, GET, PATCH")
                    }
                    try await client.execute(uri: "/no/such/path", method: verb) { $0.expectError(.notImplemented, "NOT_IMPLEMENTED") }
                }
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
            }
            let loud = logs.entries.filter { $0.level > .info }
            #expect(loud.isEmpty, "\(loud)")
        }
    }
}

/// Log entries kept in memory, for tests that check what was logged and at which level.
final class CapturedLogs: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [(level: Logger.Level, message: String)] = []

    var entries: [(level: Logger.Level, message: String)] { lock.withLock { kept } }

    func append(_ level: Logger.Level, _ message: String) { lock.withLock { kept.append((level, message)) } }
}

/// A log handler that keeps every entry in a ``CapturedLogs``.
struct CapturingLogHandler: LogHandler {
    let logs: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { logs.append(event.level, "\(event.message) \(event.metadata ?? [:])") }
}
