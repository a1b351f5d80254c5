import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOCore
import NIOSSL
import Testing

/// A data directory with the sample packs imported into group "table", a host token and a server configuration.
struct SessionFixture {
    let directory: String
    let hostToken: String
    let configuration: ServerConfiguration

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    init() async throws {
        directory = NSTemporaryDirectory() + "hoard-session-" + UUID().uuidString.lowercased()
        let hoard = try Hoard(dataDirectory: directory)
        try hoard.catalog.createGroup(named: "table")
        var options = Importer.Options()
        options.group = "table"
        _ = try await hoard.importPack(at: Self.root.appendingPathComponent("Packs/dungeon-basics.zip").path, options: options)
        _ = try await hoard.importPack(at: Self.root.appendingPathComponent("Packs/scifi-outpost.zip").path, options: options)
        hostToken = try hoard.createToken(group: "table", label: "gm", role: .owner)
        var configuration = ServerConfiguration(dataDirectory: directory)
        configuration.port = 0
        configuration.limits = .forTests
        self.configuration = configuration
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// Asset digests of one kind from the catalog.
    func assets(_ kind: String) throws -> [String] {
        try Hoard(dataDirectory: directory).catalog.assets(kind: AssetKind(rawValue: kind)).map(\.digest.description)
    }
}

/// JSON helpers over the test client.
extension TestClientProtocol {
    func json(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, body: Any? = nil
    ) async throws -> (status: HTTPResponse.Status, json: [String: Any]) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        return try await execute(uri: uri, method: method, headers: headers, body: data.map { ByteBuffer(bytes: $0) }) { response in
            let object = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any] ?? [:]
            return (response.status, object)
        }
    }
}

/// A scripted WebSocket client: connects to a live channel, sends messages, collects what arrives.
enum LiveClient {
    /// Connects, sends `messages` in order while reading, and returns every text received until `count` arrived, one
    /// containing `stop` arrived, or `timeout` passed. With `tls`, over `wss://`; with `name`, as a member's display name.
    static func exchange(
        port: Int, session: String, token: String, since: Int64? = nil, send messages: [String] = [], until count: Int,
        stop: String? = nil, timeout: Duration = .seconds(15), host: String = "127.0.0.1", tls: TLSConfiguration? = nil,
        paced: Bool = false, gap: Duration? = nil, name: String? = nil
    ) async throws -> [String] {
        let received = Received()
        let query = [since.map { "since=\($0)" }, name.map { "name=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }]
            .compactMap { $0 }.joined(separator: "&")
        let url = "\(tls == nil ? "ws" : "wss")://\(host):\(port)/v1/sessions/\(session)/live" + (query.isEmpty ? "" : "?" + query)
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20, additionalHeaders: [.authorization: "Bearer \(token)"])
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                _ = try await WebSocketClient.connect(url: url, configuration: configuration, tlsConfiguration: tls, logger: Logger(label: "test")) {
                    inbound, outbound, _ in
                    // Reads while it writes, as a real client does: a client that wrote a long burst before reading
                    // anything would fall behind its own echoes and be dropped as a reader that does not read.
                    try await withThrowingTaskGroup(of: Void.self) { writer in
                        writer.addTask {
                            for message in messages {
                                // Paced: the next message waits until something new has arrived (its echo), so a
                                // loaded machine never has this socket's echoes pile up past its byte budget.
                                let before = await received.count
                                try await outbound.write(.text(message))
                                while paced, await received.count == before { try await Task.sleep(for: .milliseconds(2)) }
                                // Within the live channel's message rate: an op over it is dropped without an answer.
                                if let gap { try await Task.sleep(for: gap) }
                            }
                        }
                        for try await frame in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let text) = frame else { continue }
                            if await received.append(text) >= count || stop.map(text.contains) == true { break }
                        }
                        // A paced writer waits for what will no longer be read.
                        if paced { writer.cancelAll() } else { try await writer.next() }
                    }
                    try await outbound.close(.normalClosure, reason: nil)
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw CancellationError()
            }
            _ = try? await group.next()
            group.cancelAll()
        }
        return await received.texts
    }

    actor Received {
        var texts: [String] = []
        var count: Int { texts.count }
        func append(_ text: String) -> Int {
            texts.append(text)
            return texts.count
        }
    }

    /// Parses received texts as JSON objects.
    static func objects(_ texts: [String]) -> [[String: Any]] {
        texts.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }
}
