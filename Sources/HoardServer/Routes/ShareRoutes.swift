import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird

/// `/v1/shares`: a member shares one picture or asset through a link with an unguessable id (never the digest),
/// which anyone holding it may open (`/s/{id}`, a page that shows the picture) until the member revokes it.
struct ShareRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let reader: BlobReader

    func register(on endpoints: Endpoints) {
        endpoints.on(.post, "/v1/shares") { request, context in try await create(request, context) }
        endpoints.on(.get, "/v1/shares") { _, context in try list(context) }
        endpoints.on(.get, "/v1/shares/{id}") { _, context in try show(context) }
        endpoints.on(.delete, "/v1/shares/{id}") { _, context in try revoke(context) }
        endpoints.on(.get, "/v1/shares/{id}/picture") { _, context in try await picture(context) }
    }

    struct CreateRequest: Decodable {
        var blob: String?
        var asset: String?
        var name: String?
    }

    /// What a share shows, to anyone with its id: no digest, so a private blob's name does not leak.
    struct Shown: Encodable {
        var id: String
        var url: String
        var name: String?
        var kind: String
        var pictureURL: String
        var createdAt: Date

        init(_ record: ShareRecord, kind: String) {
            id = record.id
            url = "/s/\(record.id)"
            name = record.name
            self.kind = kind
            pictureURL = "/v1/shares/\(record.id)/picture"
            createdAt = record.createdAt
        }
    }

    /// 128 random bits as 26 lowercase base-32 characters (no padding): unguessable and safe in a URL.
    static func makeID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var generator = SystemRandomNumberGenerator()
        return String((0..<26).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }

    func create(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try context.requireMember()
        let body = try await request.decode(as: CreateRequest.self, context: context)
        guard (body.blob == nil) != (body.asset == nil) else { throw APIError.badRequest("give exactly one of blob and asset") }
        var given: String?
        if let raw = body.name { given = try NameRule.checked(raw, as: .share) }
        let text = body.blob ?? body.asset ?? ""
        guard let digest = Digest(text) else { throw APIError.invalidDigest(text) }
        let picture: Digest
        var name = given
        if body.asset != nil {
            guard access.readable(digest, by: principal)?.mediaType == AssetRoutes.descriptorMediaType,
                  let asset = try hoard.catalog.resolve([digest]).assets.first, let largest = asset.variants.last
            else { throw APIError.notFound("no asset \(digest) you may read") }
            picture = largest.digest
            name = name ?? asset.name
        } else {
            guard let mediaType = try readableMediaType(digest, principal), mediaType.hasPrefix("image/") else {
                throw APIError.notFound("no picture \(digest) you may read")
            }
            picture = digest
        }
        let record = ShareRecord(
            id: Self.makeID(), groupId: principal.groupId, member: principal.owner, digest: digest, pictureDigest: picture, name: name)
        try hoard.catalog.createShare(record)
        context.logger.info("share created", metadata: ["share": "\(record.id)"])
        return try JSONBody.response(Shown(record, kind: body.asset == nil ? "blob" : "asset"), status: .created)
    }

    /// The media type of a blob the member may read: visible through the access index or one of their uploads.
    func readableMediaType(_ digest: Digest, _ principal: Principal) throws -> String? {
        if let entry = access.readable(digest, by: principal) { return entry.mediaType }
        guard let upload = try hoard.catalog.privateUpload(digest),
              try UploadRoutes.mayRead(scopes: upload.scopes, principal, catalog: hoard.catalog)
        else { return nil }
        return upload.blob.mediaType
    }

    func list(_ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        let shares = try hoard.catalog.shares(group: principal.groupId, member: principal.owner)
        return try JSONBody.response(["shares": shares.map { Shown($0, kind: $0.digest == $0.pictureDigest ? "blob" : "asset") }])
    }

    func record(_ context: HoardRequestContext) throws -> ShareRecord {
        let id = context.parameter("id")
        guard id.utf8.count <= 64, let record = try hoard.catalog.share(id: id) else {
            throw APIError.notFound("no share link '\(id.prefix(64))'; it may have been revoked")
        }
        return record
    }

    /// The share, while the member who made it may still read what it shares: a share of another group's pack
    /// ends when that group unpublishes or deletes it, and a share of an upload when the upload is taken back
    /// (issue 43). Otherwise 404, as for a revoked link.
    func liveRecord(_ context: HoardRequestContext) throws -> ShareRecord {
        let record = try record(context)
        let sharer = Principal(
            groupId: record.groupId, group: "", role: .member, member: Int64(record.member) ?? -1, memberName: "", tokenName: "")
        guard try readableMediaType(record.digest, sharer) != nil else {
            throw APIError.notFound("no share link '\(record.id)': what it showed is no longer shared with its maker")
        }
        return record
    }

    func show(_ context: HoardRequestContext) throws -> Response {
        let record = try liveRecord(context)
        return try JSONBody.response(Shown(record, kind: record.digest == record.pictureDigest ? "blob" : "asset"))
    }

    func revoke(_ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        let record = try record(context)
        guard principal.isAdmin || (principal.groupId == record.groupId && principal.owner == record.member) else {
            throw APIError.forbidden("only the member who shared it (or an admin) may revoke this link")
        }
        try hoard.catalog.deleteShare(id: record.id)
        context.logger.info("share revoked", metadata: ["share": "\(record.id)"])
        return Response(status: .noContent)
    }

    /// The picture, to anyone with the id. Not cacheable by others, and revalidated, since the link can be revoked.
    func picture(_ context: HoardRequestContext) async throws -> Response {
        let record = try liveRecord(context)
        guard let blob = try hoard.catalog.blob(record.pictureDigest) else { throw APIError.notFound("the shared picture is gone") }
        var headers = WebRoutes.securityHeaders
        headers[.contentType] = blob.mediaType
        headers[.cacheControl] = "private, no-cache"
        return Response(status: .ok, headers: headers, body: try await reader.body(blob.digest, size: blob.size, range: nil, context: context))
    }
}
