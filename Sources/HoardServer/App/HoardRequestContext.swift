import HoardCatalog
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The context of one request: Hummingbird's core storage plus who the request acts for.
public struct HoardRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``HoardMiddleware`` from the bearer token; nil for anonymous requests (public packs only).
    public var principal: Principal?
    /// Where the WebSocket router keeps the handler of an upgraded request.
    public let webSocket = WebSocketHandlerReference<HoardRequestContext>()

    /// The connection the request came on (the live channel aborts a WebSocket that does not read through it).
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        principal = nil
        channel = source.channel
    }

    /// JSON bodies are small; archives and blobs are streamed and bounded by their own limits, maps by
    /// ``SessionRoutes/maxMapBody``.
    public var maxUploadSize: Int { Self.maxJSONBody }
    /// The largest JSON body but a map's.
    static let maxJSONBody = 4 << 20

    /// A path parameter, percent-decoded (Hummingbird hands them over still encoded: `my%20map`, `sha256%3A…`).
    func parameter(_ name: String) -> String {
        Self.percentDecoded(parameters.get(name) ?? "")
    }

    /// `text` with every `%XX` replaced by its byte; `text` itself when it has no `%`, or when the decoded bytes
    /// are not UTF-8 or an escape is malformed. Not Foundation's `removingPercentEncoding`: on Linux that goes
    /// through an NSString and UTF-16, and cost 7 % of a blob GET's CPU (perf) for parameters that rarely hold a `%`.
    static func percentDecoded(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        let input = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            guard input[index] == UInt8(ascii: "%") else {
                output.append(input[index])
                index += 1
                continue
            }
            guard index + 2 < input.count, let high = hex(input[index + 1]), let low = hex(input[index + 2]) else { return text }
            output.append(high << 4 | low)
            index += 3
        }
        return String(validating: output, as: UTF8.self) ?? text
    }

    /// The principal, or 401 when the request has none.
    func requireMember() throws -> Principal {
        guard let principal else { throw APIError.unauthorized("this needs a member's token: send Authorization: Bearer <token>") }
        guard principal.isMember else { throw APIError.forbidden("a participant token can only read its own session") }
        return principal
    }
}

/// The one middleware every request passes: reads the bearer token, maps every error to the JSON error body and
/// counts the request in the metrics. One middleware rather than three keeps the per-request cost down.
struct HoardMiddleware: RouterMiddleware {
    typealias Context = HoardRequestContext
    let access: AccessIndex
    let metrics: ServerMetrics
    /// The operations served, for the answer to a method no path is served with.
    let endpoints: Endpoints

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            var context = context
            context.principal = try access.principal(authorization: AccessIndex.authorization(
                header: request.headers[.authorization], webSocketProtocols: request.headers[values: .secWebSocketProtocol]))
            let response = try await next(request, context)
            metrics.record(method: request.method.rawValue, status: response.status.code, since: start)
            return response
        } catch {
            let mapped = ErrorMapping.apiError(for: error, request: request, logger: context.logger, endpoints: endpoints)
            metrics.record(method: request.method.rawValue, status: mapped.status.code, since: start)
            throw mapped
        }
    }
}
