import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird

/// `/v1/members`: a group's owners list its members, change their role and remove them. A member is an identity
/// (`member.id`), their tokens their devices; what they own is theirs by id, so a name is display text only.
///
/// Role ceilings as for tokens: an owner acts on members and owners, an operator's member only an operator; roles
/// given are `member` or `owner` (operators are made with `hoard token create --role operator`). A changed role or a
/// removal closes the member's live sockets on every replica (4401) and cancels the invitations they may no longer
/// make; the answer comes once this server's access index has applied it.
struct MemberRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex

    func register(on endpoints: Endpoints) {
        endpoints.on(.get, "/v1/members") { _, context in try list(context) }
        endpoints.on(.patch, "/v1/members/{id}") { request, context in try await change(request, context) }
        endpoints.on(.delete, "/v1/members/{id}") { _, context in try await remove(context) }
    }

    struct Listed: Encodable {
        var id: Int64
        var name: String
        var role: String
        var devices: Int
        var createdAt: Date
        /// Whether it is the caller's member.
        var isCaller: Bool
    }

    func list(_ context: HoardRequestContext) throws -> Response {
        let principal = try GroupRoutes.requireOwner(context)
        let members = try hoard.catalog.members(groupId: principal.groupId).map { listing in
            Self.listed(listing, caller: principal)
        }
        return try JSONBody.response(["group": JSONValue.string(principal.group), "members": try JSONValue.encoded(members)])
    }

    static func listed(_ listing: MemberListing, caller: Principal) -> Listed {
        let member = listing.member
        return Listed(
            id: member.id ?? 0, name: member.name, role: member.role, devices: listing.devices, createdAt: member.createdAt,
            isCaller: member.id == caller.memberId)
    }

    struct Change: Decodable {
        var role: String
    }

    /// Gives a member another role.
    func change(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try GroupRoutes.requireOwner(context)
        let body = try await request.decode(as: Change.self, context: context)
        guard let role = TokenRole(rawValue: body.role), role != .operator else {
            throw APIError.badRequest("role must be 'member' or 'owner' (operators are made with `hoard token create --role operator`)")
        }
        let target = try managed(context, by: principal)
        guard try hoard.catalog.setRole(role, member: target.id ?? 0, groupId: principal.groupId) else { throw Self.notFound(target.id ?? 0) }
        try await access.catchUp()
        context.logger.info(
            "member role changed", metadata: ["group": "\(principal.groupId)", "member": "\(target.id ?? 0)", "role": "\(role.rawValue)"])
        guard let listing = try hoard.catalog.members(groupId: principal.groupId).first(where: { $0.member.id == target.id }) else {
            throw Self.notFound(target.id ?? 0)
        }
        return try JSONBody.response(Self.listed(listing, caller: principal))
    }

    /// Removes a member: every device of theirs is revoked.
    func remove(_ context: HoardRequestContext) async throws -> Response {
        let principal = try GroupRoutes.requireOwner(context)
        let target = try managed(context, by: principal)
        guard try hoard.catalog.removeMember(id: target.id ?? 0, groupId: principal.groupId) else { throw Self.notFound(target.id ?? 0) }
        try await access.catchUp()
        context.logger.info("member removed", metadata: ["group": "\(principal.groupId)", "member": "\(target.id ?? 0)"])
        return Response(status: .noContent)
    }

    /// The member the path names, when `principal` may act on them.
    private func managed(_ context: HoardRequestContext, by principal: Principal) throws -> MemberRecord {
        let text = context.parameter("id")
        guard let id = Int64(text) else { throw APIError.notFound("your group has no member \(text.prefix(40)); list them with GET /v1/members") }
        return try Self.member(id, of: principal, in: hoard.catalog)
    }

    /// Member `id` of `principal`'s group, when `principal`'s role is at least theirs (``MemberRules/rank(_:)``):
    /// 404 when the group has no such member, 403 when they outrank the caller.
    static func member(_ id: Int64, of principal: Principal, in catalog: Catalog) throws -> MemberRecord {
        guard let member = try catalog.members(groupId: principal.groupId).first(where: { $0.member.id == id })?.member else {
            throw notFound(id)
        }
        guard MemberRules.rank(member.role) <= MemberRules.rank(principal.role.rawValue) else {
            throw APIError.forbidden("an operator's member is managed by an operator")
        }
        return member
    }

    static func notFound(_ id: Int64) -> APIError {
        APIError.notFound("your group has no member \(id); list them with GET /v1/members")
    }

    /// Runs `body`, answering 409 NAME_TAKEN for the catalog's `conflict` (a member's name the group uses already).
    static func refusingTakenNames<T>(_ body: () throws(CatalogError) -> T) throws -> T {
        switch Result(catching: body) {
        case .success(let value): return value
        case .failure(let error) where error.code == .conflict: throw APIError.nameTaken(error.message)
        case .failure(let error): throw error
        }
    }
}
