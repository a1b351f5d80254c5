import HoardCatalog
import Hummingbird

/// The context of one request: Hummingbird's core storage plus who the request acts for.
public struct HoardRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``AuthMiddleware`` from the bearer token; nil for anonymous requests (public packs only).
    public var principal: Principal?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        principal = nil
    }

    /// JSON bodies are small; archives and blobs are streamed and bounded by their own limits.
    public var maxUploadSize: Int { 4 << 20 }

    /// The principal, or 401 when the request has none.
    func requireMember() throws -> Principal {
        guard let principal else { throw APIError.unauthorized("this needs a member's token: send Authorization: Bearer <token>") }
        return principal
    }
}

/// Reads `Authorization: Bearer <token>`: a known token sets the principal, an unknown one is refused with 401.
struct AuthMiddleware: RouterMiddleware {
    let access: AccessIndex

    func handle(
        _ request: Request, context: HoardRequestContext, next: (Request, HoardRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else { return try await next(request, context) }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw APIError.unauthorized("the Authorization header must be 'Bearer <token>'")
        }
        guard let principal = access.principal(forToken: String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)) else {
            throw APIError.unauthorized("the token is not known; ask an admin for a new one (hoard token create)")
        }
        var context = context
        context.principal = principal
        return try await next(request, context)
    }
}
