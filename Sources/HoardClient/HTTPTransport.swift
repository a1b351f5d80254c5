import Foundation
import HoardCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a client's requests go over the wire. ``URLSessionExchange`` unless ``HoardClient/Configuration/exchange``
/// brings another: the `hoard` command line brings SwiftNIO, where URLSession on Linux spends more per received chunk
/// than a small blob costs.
public protocol HTTPExchange: Sendable {
    /// Sends `request` (with the bytes of `uploadFile` as its body, if given) and returns once the response head
    /// arrived; the body follows as chunks. A body left unread before its end must not hold a connection forever.
    func stream(_ request: URLRequest, uploadFile: URL?) async throws -> HTTPStreamedResponse
}

/// A response whose body is still arriving.
public struct HTTPStreamedResponse: Sendable {
    /// Status and headers.
    public var response: HTTPURLResponse
    /// The body, chunk by chunk.
    public var body: AsyncThrowingStream<Data, any Error>

    /// A response.
    public init(response: HTTPURLResponse, body: AsyncThrowingStream<Data, any Error>) {
        self.response = response
        self.body = body
    }
}

/// What every request of a client (and of the clients sharing its connections) goes through: the exchange, the
/// request counter and the observer.
final class HTTPTransport: Sendable {
    typealias Streamed = HTTPStreamedResponse

    private let exchange: any HTTPExchange
    private let observer: (@Sendable (URLRequest) -> Void)?
    private let counter = Locked(0)

    init(exchange: any HTTPExchange, observer: (@Sendable (URLRequest) -> Void)?) {
        self.exchange = exchange
        self.observer = observer
    }

    /// Requests sent so far.
    var requestCount: Int { counter.current }

    /// Sends a request (with the body of `uploadFile`, if given) and returns once the response head arrived.
    func stream(_ request: URLRequest, uploadFile: URL? = nil) async throws -> Streamed {
        counter.withLock { $0 += 1 }
        observer?(request)
        do {
            return try await exchange.stream(request, uploadFile: uploadFile)
        } catch {
            throw Self.wrap(error, request)
        }
    }

    /// Sends a request and collects the whole body.
    func send(_ request: URLRequest, uploadFile: URL? = nil) async throws -> (HTTPURLResponse, Data) {
        let streamed = try await stream(request, uploadFile: uploadFile)
        var data = Data()
        do {
            for try await chunk in streamed.body { data.append(chunk) }
        } catch {
            throw Self.wrap(error, request)
        }
        return (streamed.response, data)
    }

    /// Cancellation stays cancellation; other transport failures become ``HoardClientError`` with code `network`.
    static func wrap(_ error: any Error, _ request: URLRequest) -> any Error {
        if error is HoardClientError || error is CancellationError { return error }
        if let urlError = error as? URLError, urlError.code == .cancelled, Task.isCancelled { return CancellationError() }
        let target = request.url.map { "\($0.host ?? "?"):\($0.port.map(String.init) ?? "default")" } ?? "the server"
        return HoardClientError(.network, "the request \(request.httpMethod ?? "GET") \(request.url?.path ?? "") to \(target) failed; check the "
            + "server address and the network, then retry", cause: SendableError(error))
    }
}

/// The default exchange: one `URLSession` per client family (keep-alive connections, a bounded number per host),
/// bodies handed over chunk by chunk so that large blobs go straight to disk and batches are parsed as they come.
public final class URLSessionExchange: HTTPExchange {
    private let session: URLSession
    private let delegate: Delegate

    /// An exchange with at most `maxConnections` connections per host, failing a request after `timeout` seconds
    /// without data.
    public init(maxConnections: Int, timeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = maxConnections
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = timeout
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        delegate = Delegate()
        // The session holds the delegate, never the other way round: deinit below can end the session.
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    public func stream(_ request: URLRequest, uploadFile: URL?) async throws -> HTTPStreamedResponse {
        let task = uploadFile.map { session.uploadTask(with: request, fromFile: $0) } ?? session.dataTask(with: request)
        let (body, bodyContinuation) = AsyncThrowingStream.makeStream(of: Data.self, throwing: (any Error).self)
        bodyContinuation.onTermination = { _ in task.cancel() }
        return try await withTaskCancellationHandler {
            let response = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPURLResponse, any Error>) in
                delegate.register(task.taskIdentifier, head: continuation, body: bodyContinuation)
                task.resume()
            }
            return HTTPStreamedResponse(response: response, body: body)
        } onCancel: {
            task.cancel()
        }
    }

    /// Dispatches URLSession's callbacks to the request that owns each task.
    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        struct Pending {
            var head: CheckedContinuation<HTTPURLResponse, any Error>?
            var body: AsyncThrowingStream<Data, any Error>.Continuation
        }

        private let pending = Locked([Int: Pending]())

        func register(_ task: Int, head: CheckedContinuation<HTTPURLResponse, any Error>, body: AsyncThrowingStream<Data, any Error>.Continuation) {
            pending.withLock { $0[task] = Pending(head: head, body: body) }
        }

        /// Hands the response head to the waiting request, once.
        private func deliverHead(_ task: URLSessionTask, _ response: URLResponse?) -> Bool {
            let head = pending.withLock { table -> CheckedContinuation<HTTPURLResponse, any Error>? in
                defer { table[task.taskIdentifier]?.head = nil }
                return table[task.taskIdentifier]?.head
            }
            guard let head else { return true }
            guard let http = response as? HTTPURLResponse else {
                head.resume(throwing: HoardClientError(.badResponse, "the server's answer is not HTTP"))
                return false
            }
            head.resume(returning: http)
            return true
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            completionHandler(deliverHead(dataTask, response) ? .allow : .cancel)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            // Should the head callback not have run (it is optional for a delegate), the task's response stands in.
            _ = deliverHead(dataTask, dataTask.response)
            _ = pending.withLock { $0[dataTask.taskIdentifier] }?.body.yield(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            if error == nil, task.response != nil { _ = deliverHead(task, task.response) }
            guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            if let error {
                entry.head?.resume(throwing: error)
                entry.body.finish(throwing: error)
            } else {
                entry.head?.resume(throwing: HoardClientError(.badResponse, "the server closed the connection without an answer"))
                entry.body.finish()
            }
        }
    }
}

/// Any error carried as a `Sendable` cause (Foundation's errors are not all marked `Sendable`).
public struct SendableError: Error, @unchecked Sendable, CustomStringConvertible {
    /// The wrapped error.
    public let error: any Error
    /// Wraps an error.
    public init(_ error: any Error) { self.error = error }
    public var description: String { "\(error)" }
}
