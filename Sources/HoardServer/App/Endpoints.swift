import HTTPTypes
import Hummingbird

/// Registers routes on a router and remembers each (method, path), so tests can prove the API and
/// Schemas/openapi.yaml describe the same operations.
public final class Endpoints: @unchecked Sendable {
    /// One registered operation, its path in OpenAPI form (`/v1/blobs/{digest}`).
    public struct Operation: Hashable, Sendable, CustomStringConvertible {
        /// HTTP method, uppercase.
        public var method: String
        /// Path with `{parameter}` placeholders.
        public var path: String
        public var description: String { "\(method) \(path)" }

        /// Creates an operation.
        public init(method: String, path: String) {
            self.method = method
            self.path = path
        }
    }

    let router: Router<HoardRequestContext>
    /// Every operation registered so far.
    public private(set) var operations: [Operation] = []

    init(router: Router<HoardRequestContext>) { self.router = router }

    /// Records an operation registered directly on the router (the WebSocket upgrade).
    func record(_ method: HTTPRequest.Method, _ path: String) {
        operations.append(Operation(method: method.rawValue, path: path))
    }

    /// The methods a request's path is served with (a `{parameter}` matches any one non-empty segment), sorted;
    /// empty when no operation has that path.
    func methods(at path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let methods = operations.filter { operation in
            let template = operation.path.split(separator: "/", omittingEmptySubsequences: false)
            return template.count == segments.count && zip(template, segments).allSatisfy { part, segment in
                part == segment || (part.hasPrefix("{") && part.hasSuffix("}") && !segment.isEmpty)
            }
        }.map(\.method)
        return Set(methods).sorted()
    }

    /// Registers a handler for a method and a path written `/v1/blobs/{digest}`.
    func on(
        _ method: HTTPRequest.Method, _ path: String,
        _ handler: @escaping @Sendable (Request, HoardRequestContext) async throws -> Response
    ) {
        operations.append(Operation(method: method.rawValue, path: path))
        let routerPath = path.split(separator: "/", omittingEmptySubsequences: false).map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? ":" + part.dropFirst().dropLast() : part
        }.joined(separator: "/")
        router.on(RouterPath(routerPath), method: method, use: handler)
    }
}
