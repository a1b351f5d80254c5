import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default live-channel transport: `URLSessionWebSocketTask`.
///
/// On Apple platforms it always works. On Linux, FoundationNetworking implements it over libcurl, which needs a
/// libcurl built with WebSocket support (8.11 or later, or an earlier one built with `--enable-websockets`);
/// otherwise the first `receive()` throws ``HoardClientError/Code-swift.struct/webSocketUnsupported`` and the
/// channel stops — pass another ``LiveConnector`` in ``LiveOptions/connector``.
public struct URLSessionLiveConnector: LiveConnector {
    private static let session = URLSession(configuration: .ephemeral)

    /// The default transport.
    public init() {}

    public func connect(to url: URL, token: String?) async throws -> any LiveConnection {
        var request = URLRequest(url: url)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let task = Self.session.webSocketTask(with: request)
        task.maximumMessageSize = 16 << 20
        task.resume()
        return Connection(task: task)
    }

    final class Connection: LiveConnection, @unchecked Sendable {
        let task: URLSessionWebSocketTask

        init(task: URLSessionWebSocketTask) { self.task = task }

        func receive() async throws -> String? {
            do {
                let message: URLSessionWebSocketTask.Message = try await withCheckedThrowingContinuation { continuation in
                    task.receive { result in continuation.resume(with: result) }
                }
                switch message {
                case .string(let text): return text
                case .data(let data): return String(decoding: data, as: UTF8.self)
                @unknown default: return ""
                }
            } catch {
                if task.closeCode != .invalid { return nil }
                throw translate(error)
            }
        }

        func send(_ text: String) async throws {
            do {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    task.send(.string(text)) { error in
                        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                    }
                }
            } catch {
                throw translate(error)
            }
        }

        func close() {
            task.cancel(with: .normalClosure, reason: nil)
        }

        private func translate(_ error: any Error) -> HoardClientError {
            let nsError = error as NSError
            if nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorUnsupportedURL {
                return HoardClientError(
                    .webSocketUnsupported, "this platform's URLSession cannot open WebSockets (on Linux, FoundationNetworking needs a "
                        + "libcurl with WebSocket support: 8.11 or later); use another LiveConnector in LiveOptions.connector",
                    cause: SendableError(error))
            }
            if let http = task.response as? HTTPURLResponse, http.statusCode != 101 {
                return HoardClientError(.server, "the server refused the live channel", status: http.statusCode, cause: SendableError(error))
            }
            return HoardClientError(.network, "the live channel dropped", cause: SendableError(error))
        }
    }
}
