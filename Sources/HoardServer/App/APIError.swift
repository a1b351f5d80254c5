import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird
import NIOCore
import NIOHTTP1
import Logging

/// Every error the HTTP API answers with, registered once as (code, status); the body is always
/// `{"error":{"code":"UPPER_SNAKE","message":"…"}}`, with `problems` added for refused packs.
public struct APIError: HTTPResponseError, Sendable {
    /// The wire code.
    public var code: String
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// What went wrong and what to do.
    public var message: String
    /// Per-file findings of a refused pack.
    public var problems: [Problem]?
    /// Digests the server lacks (MISSING_BLOBS): upload them, then retry.
    public var missing: [String]?
    /// Extra response headers (e.g. Content-Range on 416).
    public var headers: HTTPFields = [:]

    /// Creates an error.
    public init(_ code: String, _ status: HTTPResponse.Status, _ message: String, problems: [Problem]? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.problems = problems
    }

    /// The request is malformed (bad JSON, bad parameter).
    public static func badRequest(_ message: String) -> APIError { APIError("BAD_REQUEST", .badRequest, message) }
    /// A path or body digest is not `sha256:<64 lowercase hex>`.
    public static func invalidDigest(_ text: String) -> APIError {
        APIError("INVALID_DIGEST", .badRequest, "'\(text.prefix(100))' is not a digest; write sha256:<64 lowercase hex>")
    }
    /// Uploaded bytes do not hash to the digest in the URL.
    public static func digestMismatch(expected: Digest, actual: Digest) -> APIError {
        APIError("DIGEST_MISMATCH", .badRequest, "the bytes hash to \(actual), not \(expected); nothing was stored")
    }
    /// A token is required, or the one given is unknown.
    public static func unauthorized(_ message: String) -> APIError { APIError("UNAUTHORIZED", .unauthorized, message) }
    /// The caller may see the thing but not change it.
    public static func forbidden(_ message: String) -> APIError { APIError("FORBIDDEN", .forbidden, message) }
    /// Absent, or not visible to the caller (the two are not told apart, so digests do not leak).
    public static func notFound(_ message: String) -> APIError { APIError("NOT_FOUND", .notFound, message) }
    /// The request body is larger than allowed.
    public static func tooLarge(_ message: String) -> APIError { APIError("PAYLOAD_TOO_LARGE", .contentTooLarge, message) }
    /// The Range header cannot be satisfied.
    public static func rangeNotSatisfiable(size: Int64) -> APIError {
        var error = APIError("RANGE_NOT_SATISFIABLE", .rangeNotSatisfiable, "the range starts past the end of the \(size)-byte blob")
        error.headers[.contentRange] = "bytes */\(size)"
        return error
    }
    /// The group's byte quota would be exceeded.
    public static func quotaExceeded(_ message: String) -> APIError { APIError("QUOTA_EXCEEDED", .init(code: 507, reasonPhrase: "Insufficient Storage"), message) }
    /// Too many requests from this caller; `Retry-After` says in how many seconds to try again.
    public static func rateLimited(_ message: String, retryAfter seconds: Int? = nil) -> APIError {
        var error = APIError("RATE_LIMITED", .tooManyRequests, message)
        if let seconds { error.headers[.retryAfter] = "\(seconds)" }
        return error
    }
    /// The method is not allowed on this path.
    public static func methodNotAllowed(_ message: String) -> APIError { APIError("METHOD_NOT_ALLOWED", .methodNotAllowed, message) }
    /// A method no path of this server is served with (`PROPFIND`, `TRACE`, …).
    public static func notImplemented(_ method: String) -> APIError {
        APIError(
            "NOT_IMPLEMENTED", .notImplemented,
            "this server does not implement \(method.prefix(40)); it serves GET, HEAD, POST, PUT, PATCH and DELETE")
    }
    /// A map references blobs the server lacks or the caller cannot read.
    public static func missingBlobs(_ digests: [Digest]) -> APIError {
        var error = APIError(
            "MISSING_BLOBS", .conflict, "the map references \(digests.count) blob(s) the server lacks; upload them (PUT /v1/blobs/{digest}) and retry")
        error.missing = digests.map(\.description)
        return error
    }
    /// A map the server cannot keep: a place off the grid, an id used twice, a floor or fog not in a form it reads.
    public static func badMap(_ message: String) -> APIError { APIError("BAD_MAP", .badRequest, "the map is refused: " + message) }
    /// A session whose stored map no longer passes the map door (stored by an older server): it cannot be loaded.
    public static func unloadableSession(_ id: String, _ problem: String) -> APIError {
        APIError(
            "BAD_MAP", .badRequest,
            "session \(id)'s stored map cannot be loaded (\(problem)); end the session and create it again from a corrected map")
    }
    /// No session has this join code.
    public static func unknownCode() -> APIError { APIError("UNKNOWN_CODE", .notFound, "no session has that join code; check it with the host") }
    /// A saved map with this name exists.
    public static func mapExists(_ name: String) -> APIError {
        APIError("MAP_EXISTS", .conflict, "a map named '\(name)' is already saved; delete it or choose another name (saving never overwrites)")
    }
    /// A name chosen for a new member is one the group already uses for someone (under ``NameRule``).
    public static func nameTaken(_ message: String) -> APIError { APIError("NAME_TAKEN", .conflict, message) }
    /// An upload is not a PNG, JPEG or WebP picture (by its bytes).
    public static func notAPicture() -> APIError {
        APIError("NOT_A_PICTURE", .unsupportedMediaType, "the body is not a PNG, JPEG or WebP picture (checked by its bytes); send one of those")
    }
    /// A ref was not where the request's precondition expected it.
    public static func refConflict(_ name: String, current: Digest?) -> APIError {
        APIError(
            "REF_CONFLICT", .preconditionFailed,
            "ref '\(name)' " + (current.map { "points at \($0)" } ?? "does not exist")
                + "; another device moved it. Read it again (GET /v1/refs/{name}) and retry with its ETag in If-Match")
    }
    /// The disk or the catalog failed (full, read-only, busy past its timeout): nothing was stored.
    public static func storageFailure(
        _ message: String = "the server's storage failed (disk full, read-only or busy); nothing was stored; "
            + "retry later or tell an admin, the error was logged"
    ) -> APIError {
        APIError(ProblemCode.storageFailure.rawValue, .init(code: 507, reasonPhrase: "Insufficient Storage"), message)
    }
    /// The blob store cannot be reached, or refuses the server's credentials (an S3 service down or misconfigured):
    /// nothing was stored.
    public static func storageUnavailable(
        _ code: String = "STORAGE_UNAVAILABLE",
        _ message: String = "the server's blob store cannot be reached right now; nothing was stored; retry later or tell an admin, "
            + "the error was logged"
    ) -> APIError {
        var error = APIError(code, .serviceUnavailable, message)
        error.headers[.retryAfter] = "5"
        return error
    }
    /// The catalog's database cannot be reached (a PostgreSQL server down): nothing was stored.
    public static func catalogUnavailable() -> APIError {
        storageUnavailable(
            "CATALOG_UNAVAILABLE",
            "the server's catalog database cannot be reached right now; nothing was stored; retry later or tell an admin, the error was logged")
    }
    /// A WebSocket upgrade to a version other than 13: the answer names the version the server speaks.
    public static func upgradeRequired() -> APIError {
        var error = APIError(
            "UPGRADE_REQUIRED", .init(code: 426, reasonPhrase: "Upgrade Required"), "this server speaks WebSocket version 13")
        error.headers[HTTPField.Name("Sec-WebSocket-Version")!] = "13"
        return error
    }
    /// The server failed; the message says nothing internal.
    public static func internalError(_ message: String = "the server failed; the error was logged") -> APIError {
        APIError("INTERNAL", .internalServerError, message)
    }

    /// Every code above plus the import problem codes, with their statuses: what Schemas/openapi.yaml lists.
    public static let registry: [(code: String, status: Int)] = [
        ("BAD_REQUEST", 400), ("INVALID_DIGEST", 400), ("DIGEST_MISMATCH", 400), ("UNAUTHORIZED", 401), ("FORBIDDEN", 403),
        ("NOT_FOUND", 404), ("METHOD_NOT_ALLOWED", 405), ("PACK_CONFLICT", 409), ("PAYLOAD_TOO_LARGE", 413),
        ("RANGE_NOT_SATISFIABLE", 416), ("RATE_LIMITED", 429), ("INTERNAL", 500), ("QUOTA_EXCEEDED", 507),
        ("MISSING_BLOBS", 409), ("BAD_MAP", 400), ("UNKNOWN_CODE", 404), ("MAP_EXISTS", 409), ("CORRUPT_BLOB", 500),
        ("NOT_A_PICTURE", 415), ("REF_CONFLICT", 412), ("NAME_TAKEN", 409),
        ("UNREADABLE_BLOB", 500), ("UPGRADE_REQUIRED", 426), ("NOT_IMPLEMENTED", 501),
        ("STORAGE_UNAVAILABLE", 503),
    ] + ProblemCode.allCases.map { ($0.rawValue, [.packConflict, .importCancelled].contains($0) ? 409 : $0 == .storageFailure ? 507 : 422) }

    struct Body: Encodable {
        struct Inner: Encodable {
            var code: String
            var message: String
            var problems: [Problem]?
            var missing: [String]?
        }
        var error: Inner
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(Body(error: .init(code: code, message: message, problems: problems, missing: missing)))
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Turns every error into the one JSON error body: ours as they are, Hummingbird's by status, anything else as a
/// logged 500 that reveals nothing.
enum ErrorMapping {
    /// The methods some path is served with; the router's 404 for any other method becomes 501.
    static let servedMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete]

    /// `endpoints` tells which methods a path is served with, for the router's 404 to a method no path is served
    /// with: 405 with `Allow` on a served path, 501 on any other.
    static func apiError(for error: any Error, request: Request, logger: Logger, endpoints: Endpoints) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as HTTPError:
            let message = error.body ?? error.status.reasonPhrase.lowercased()
            switch error.status {
            case .notFound where !servedMethods.contains(request.method):
                let allowed = endpoints.methods(at: request.uri.path)
                guard !allowed.isEmpty else { return .notImplemented(request.method.rawValue) }
                var refusal = APIError.methodNotAllowed("\(request.method.rawValue.prefix(40)) is not allowed on \(request.uri.path)")
                refusal.headers[.allow] = allowed.joined(separator: ", ")
                return refusal
            case .notFound: return .notFound("no such resource: \(request.method) \(request.uri.path)")
            case .methodNotAllowed: return .methodNotAllowed("\(request.method) is not allowed on \(request.uri.path)")
            case .contentTooLarge: return .tooLarge(message)
            case .badRequest: return .badRequest(message)
            default: return APIError(error.status.code >= 500 ? "INTERNAL" : "BAD_REQUEST", error.status, message)
            }
        case let error as DecodingError:
            return .badRequest("the JSON body does not match the schema: \(describe(error))")
        case let error as JSONParseError:
            return .badRequest("the body is not JSON: \(error)")
        case is NIOTooManyBytesError:
            return .tooLarge("the JSON body is over its limit of \(HoardRequestContext.maxJSONBody >> 20) MiB (a map's: \(SessionRoutes.maxMapBody >> 20) MiB)")
        case let error as CatalogError where error.code == .invalid:
            return .badRequest(error.message)
        case let error as CatalogError where error.code == .unavailable:
            logger.error("the catalog is unavailable", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return .catalogUnavailable()
        case let error as CatalogError where error.code == .database:
            logger.error("catalog failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return .storageFailure()
        case let error as StorageError where error.code == .unavailable || error.code == .misconfigured:
            logger.error("the blob store is unavailable", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return .storageUnavailable()
        case is StorageError:
            logger.error("storage failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return .storageFailure()
        case let error as HTTPParserError where error == .invalidEOFState:
            // The connection closed inside the body: the client went away, or was closed for sending too slowly.
            logger.debug("request body cut short", metadata: ["path": "\(request.uri.path)"])
            return .badRequest("the connection closed before the request's body ended")
        default:
            logger.error("request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return .internalError()
        }
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "missing field '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            (context.codingPath.map(\.stringValue).joined(separator: ".") + " " + context.debugDescription).trimmingCharacters(in: .whitespaces)
        @unknown default: "\(error)"
        }
    }
}

extension NameRule {
    /// ``canonical(_:as:)`` for a route: the name as stored, or 400 `BAD_REQUEST` saying what to change.
    static func checked(_ raw: String, as kind: Kind) throws(APIError) -> String {
        do {
            return try canonical(raw, as: kind)
        } catch {
            throw APIError.badRequest(error.message)
        }
    }
}
