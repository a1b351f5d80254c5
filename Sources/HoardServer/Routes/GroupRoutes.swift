import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird

/// `/v1/tokens` and `/v1/invites`: a group's owners manage who belongs to it. An owner (or an operator) lists the
/// group's tokens and revokes them, and invites people with a one-time code that anyone holding it redeems, once,
/// for a token of the group; the secret is shown to them only.
struct GroupRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex

    /// How long an invitation works unless its maker says otherwise, and at most.
    static let defaultInviteHours = 7 * 24
    static let maxInviteHours = 30 * 24

    func register(on endpoints: Endpoints) {
        endpoints.on(.get, "/v1/tokens") { request, context in try listTokens(request, context) }
        endpoints.on(.delete, "/v1/tokens/{id}") { _, context in try await revoke(context) }
        endpoints.on(.post, "/v1/invites") { request, context in try await invite(request, context) }
        endpoints.on(.get, "/v1/invites") { _, context in try listInvites(context) }
        endpoints.on(.delete, "/v1/invites/{id}") { _, context in try cancelInvite(context) }
        endpoints.on(.post, "/v1/invites/accept") { request, context in try await accept(request, context) }
    }

    /// The caller, when it manages its group (an owner or an operator).
    static func requireOwner(_ context: HoardRequestContext) throws -> Principal {
        let principal = try context.requireMember()
        guard principal.managesGroup else { throw APIError.forbidden("only the group's owners manage its members; ask one of them") }
        return principal
    }

    struct Listed: Encodable {
        var id: Int64
        /// The member whose device it is.
        var member: Int64
        var name: String
        var role: String
        var createdAt: Date
        /// Whether it is the token that asked.
        var isCaller: Bool
    }

    func listTokens(_ request: Request, _ context: HoardRequestContext) throws -> Response {
        let principal = try Self.requireOwner(context)
        let bearer = request.headers[.authorization].flatMap { try? AccessIndex.bearerToken($0) }.map(Hoard.hashToken)
        let tokens = try hoard.catalog.tokens(groupId: principal.groupId).map { token in
            Listed(id: token.id ?? 0, member: token.memberId ?? 0, name: token.name, role: token.role, createdAt: token.createdAt, isCaller: token.secretHash == bearer)
        }
        return try JSONBody.response(["group": JSONValue.string(principal.group), "tokens": try JSONValue.encoded(tokens)])
    }

    /// Revokes one of the group's tokens: it answers 401 from this answer on. An owner cannot revoke an operator's.
    func revoke(_ context: HoardRequestContext) async throws -> Response {
        let principal = try Self.requireOwner(context)
        let text = context.parameter("id")
        let notFound = APIError.notFound("your group has no token \(text.prefix(40)); list them with GET /v1/tokens")
        guard let id = Int64(text), let token = try hoard.catalog.tokens(groupId: principal.groupId).first(where: { $0.id == id }) else {
            throw notFound
        }
        guard token.role != TokenRole.operator.rawValue || principal.isAdmin else {
            throw APIError.forbidden("an operator's token is revoked by an operator")
        }
        guard try hoard.catalog.deleteToken(id: id, groupId: principal.groupId) else { throw notFound }
        try await access.catchUp()
        context.logger.info("token revoked", metadata: ["group": "\(principal.groupId)", "token": "\(id)", "by": "\(principal.memberId)"])
        return Response(status: .noContent)
    }

    struct InviteRequest: Decodable {
        var role: String?
        var hours: Int?
        /// The name of the member it creates (the redeemer's choice when absent).
        var name: String?
        /// The member it adds a device to, instead of creating one.
        var member: Int64?
    }

    struct Invited: Encodable {
        /// What lists and cancels it (its code's hash; not the code).
        var id: String
        var code: String
        var group: String
        var role: String
        var expiresAt: Date
        /// The page that redeems it, relative to the server.
        var path: String
        /// The member it adds a device to, if it does.
        var member: Int64?
        /// The name of the member it creates, if the inviter chose it.
        var name: String?
    }

    func invite(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try Self.requireOwner(context)
        let body = try await request.decode(as: InviteRequest.self, context: context)
        guard var role = TokenRole(rawValue: body.role ?? "member"), role != .operator else {
            throw APIError.badRequest("role must be 'member' or 'owner' (operators are made with `hoard token create --role operator`)")
        }
        let hours = body.hours ?? Self.defaultInviteHours
        guard (1...Self.maxInviteHours).contains(hours) else { throw APIError.badRequest("hours must be 1 to \(Self.maxInviteHours)") }
        let memberName = try body.name.map { try NameRule.checked($0, as: .member) }
        if let id = body.member {
            guard memberName == nil else { throw APIError.badRequest("give either 'member' (a device of theirs) or 'name' (a new member)") }
            let target = try MemberRoutes.member(id, of: principal, in: hoard.catalog)
            role = TokenRole(rawValue: target.role) ?? .member
        }
        let code = "hoard_i_" + Hoard.randomSecret()
        let expiresAt = Date(timeIntervalSinceNow: TimeInterval(hours * 3600))
        let codeHash = Hoard.hashToken(code)
        try MemberRoutes.refusingTakenNames { () throws(CatalogError) in
            try hoard.catalog.addInvite(InviteRecord(
                codeHash: codeHash, groupId: principal.groupId, role: role, createdBy: principal.memberName, inviterId: principal.memberId,
                expiresAt: expiresAt, memberId: body.member, memberName: memberName))
        }
        context.logger.info("invitation made", metadata: ["group": "\(principal.groupId)", "role": "\(role.rawValue)", "by": "\(principal.memberId)"])
        return try JSONBody.response(
            Invited(
                id: codeHash, code: code, group: principal.group, role: role.rawValue, expiresAt: expiresAt, path: "/#/invite/\(code)",
                member: body.member, name: memberName),
            status: .created)
    }

    struct Pending: Encodable {
        var id: String
        var role: String
        var createdBy: String
        var expiresAt: Date
        var member: Int64?
        var name: String?
    }

    /// The group's pending invitations (for its owners and operators): who made each, its role, when it ends.
    func listInvites(_ context: HoardRequestContext) throws -> Response {
        let principal = try Self.requireOwner(context)
        let pending = try hoard.catalog.invites(groupId: principal.groupId, now: Date()).map {
            Pending(id: $0.codeHash, role: $0.role, createdBy: $0.createdBy, expiresAt: $0.expiresAt, member: $0.memberId, name: $0.memberName)
        }
        return try JSONBody.response(["group": JSONValue.string(principal.group), "invites": try JSONValue.encoded(pending)])
    }

    /// Cancels a pending invitation of the group: its code is unknown from this answer on.
    func cancelInvite(_ context: HoardRequestContext) throws -> Response {
        let principal = try Self.requireOwner(context)
        let id = context.parameter("id")
        guard id.utf8.count == 64, try hoard.catalog.cancelInvite(codeHash: id, groupId: principal.groupId) else {
            throw APIError.notFound("your group has no pending invitation \(id.prefix(64)); list them with GET /v1/invites")
        }
        context.logger.info("invitation cancelled", metadata: ["group": "\(principal.groupId)", "by": "\(principal.memberId)"])
        return Response(status: .noContent)
    }

    struct AcceptRequest: Decodable {
        var code: String
        var name: String
    }

    struct Accepted: Encodable {
        var token: String
        var group: String
        var role: String
        /// The member whose device the token is.
        var member: Int64
    }

    /// Redeems an invitation (no token needed: the code is the secret, 256 bits): a new token of its group and role.
    func accept(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let body = try await request.decode(as: AcceptRequest.self, context: context)
        let name = try NameRule.checked(body.name, as: .member)
        let token = Hoard.tokenPrefix + Hoard.randomSecret()
        let unknown = APIError.notFound("no such invitation: it was used, it expired, it was cancelled, or the code is mistyped; ask for a new one")
        guard body.code.count <= 100 else { throw unknown }
        let codeHash = Hoard.hashToken(body.code)
        let secretHash = Hoard.hashToken(token)
        let redeemed = try MemberRoutes.refusingTakenNames { () throws(CatalogError) in
            try hoard.catalog.redeemInvite(codeHash: codeHash, label: name, secretHash: secretHash)
        }
        guard let (record, group) = redeemed else { throw unknown }
        try await access.catchUp()
        context.logger.info("invitation redeemed", metadata: ["group": "\(record.groupId)", "role": "\(record.role)"])
        return try JSONBody.response(Accepted(token: token, group: group, role: record.role, member: record.memberId ?? 0), status: .created)
    }
}
