import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird

/// `/v1/refs`: a member's named pointers (`last-drawing` → digest), moved with compare-and-set so "continue the last
/// drawing" works from any of their devices and two devices never silently overwrite each other.
///
/// A ref's ETag is its digest. `PUT` with `If-Match: "<digest>"` moves it only from that digest, with
/// `If-None-Match: *` only if it does not exist yet; without either it moves unconditionally. A failed precondition
/// is 412 REF_CONFLICT and changes nothing.
struct RefRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex

    func register(on endpoints: Endpoints) {
        endpoints.on(.get, "/v1/refs") { _, context in try list(context) }
        endpoints.on(.get, "/v1/refs/{name}") { _, context in try get(context) }
        endpoints.on(.put, "/v1/refs/{name}") { request, context in try await put(request, context) }
        endpoints.on(.delete, "/v1/refs/{name}") { request, context in try delete(request, context) }
    }

    struct Ref: Encodable {
        var name: String
        var digest: Digest
        var updatedAt: Date
        init(_ record: RefRecord) {
            name = record.name
            digest = record.digest
            updatedAt = record.updatedAt
        }
    }

    struct Move: Decodable {
        var digest: String
    }

    static func name(_ context: HoardRequestContext) throws -> String {
        try NameRule.checked(context.parameter("name"), as: .ref)
    }

    /// The ref the path names, as ``NameRule`` finds names: the member's ref of that name or of a look-alike one
    /// ("émoi" finds "Émoi"), so no second ref that looks the same is made; else the name as it would be stored.
    func refName(_ context: HoardRequestContext, _ principal: Principal) throws -> String {
        let name = try Self.name(context)
        let found = NameRule.matches(name, among: try hoard.catalog.refs(group: principal.groupId, member: principal.owner), name: \.name)
        guard found.count < 2 else {
            let names = found.map { "'\($0.name)'" }.joined(separator: ", ")
            throw APIError.badRequest("'\(name)' could be any of the refs \(names); give one of them exactly")
        }
        return found.first?.name ?? name
    }

    func list(_ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        return try JSONBody.response(["refs": try hoard.catalog.refs(group: principal.groupId, member: principal.owner).map(Ref.init)])
    }

    func get(_ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        let name = try refName(context, principal)
        guard let ref = try hoard.catalog.ref(group: principal.groupId, member: principal.owner, name: name) else {
            throw APIError.notFound("no ref named '\(name)'")
        }
        var response = try JSONBody.response(Ref(ref))
        response.headers[.eTag] = "\"\(ref.digest)\""
        return response
    }

    /// The precondition the request's If-Match / If-None-Match headers state.
    static func expectation(_ request: Request) throws -> RefExpectation {
        if let match = request.headers[.ifMatch] {
            let text = match.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            guard let digest = Digest(text) else { throw APIError.badRequest("If-Match must be the ref's ETag: \"sha256:<64 hex>\"") }
            return .pointing(at: digest)
        }
        if let none = request.headers[.ifNoneMatch] {
            guard none.trimmingCharacters(in: .whitespaces) == "*" else { throw APIError.badRequest("If-None-Match may only be *") }
            return .absent
        }
        return .any
    }

    func put(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try context.requireMember()
        let name = try refName(context, principal)
        let expected = try Self.expectation(request)
        let body = try await request.decode(as: Move.self, context: context)
        guard let digest = Digest(body.digest) else { throw APIError.invalidDigest(body.digest) }
        guard try mayPoint(at: digest, principal) else {
            throw APIError.notFound("no blob \(digest) you may read; upload it first (POST /v1/uploads)")
        }
        switch try hoard.catalog.moveRef(group: principal.groupId, member: principal.owner, name: name, to: digest, expected: expected) {
        case .moved(let record):
            var response = try JSONBody.response(Ref(record))
            response.headers[.eTag] = "\"\(record.digest)\""
            return response
        case .conflict(let current):
            throw APIError.refConflict(name, current: current)
        }
    }

    func delete(_ request: Request, _ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        let name = try refName(context, principal)
        switch try hoard.catalog.deleteRef(group: principal.groupId, member: principal.owner, name: name, expected: try Self.expectation(request)) {
        case nil: throw APIError.notFound("no ref named '\(name)'")
        case .moved: return Response(status: .noContent)
        case .conflict(let current): throw APIError.refConflict(name, current: current)
        }
    }

    /// A member may point a ref at what they may read: their group's and public blobs, and their private uploads.
    func mayPoint(at digest: Digest, _ principal: Principal) throws -> Bool {
        if access.readable(digest, by: principal) != nil { return true }
        guard let upload = try hoard.catalog.privateUpload(digest) else { return false }
        return try UploadRoutes.mayRead(scopes: upload.scopes, principal, catalog: hoard.catalog)
    }
}
