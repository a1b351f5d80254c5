import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird
import NIOCore

/// `/v1/uploads`: a participant's or member's photo or drawing, readable only inside the scope it was uploaded to.
///
/// A participant's upload goes into its session; a member's goes into their own space, or into a session of their
/// group with `?session=<id>`. A session upload may be fetched by that session's participants and the members who
/// may see the session (also through `GET /v1/blobs/{digest}`, like the session's art, so a map may reference it);
/// a member's upload only by that member (the same group and token name). Others get 404, even knowing the digest.
struct UploadRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let reader: BlobReader
    let limits: RateLimiter
    let configuration: ServerConfiguration
    let hub: SessionHub

    /// Picture types an upload may be.
    static let pictureTypes: Set<HoardCore.MediaType> = [.png, .jpeg, .webp]

    func register(on endpoints: Endpoints) {
        endpoints.on(.post, "/v1/uploads") { request, context in try await upload(request, context) }
        endpoints.on(.get, "/v1/uploads") { request, context in try list(request, context) }
        endpoints.on(.get, "/v1/uploads/{digest}") { _, context in try await fetch(context) }
        endpoints.on(.delete, "/v1/uploads/{digest}") { request, context in try await forget(request, context) }
    }

    /// An upload as answered: stored (`POST`) or listed (`GET /v1/uploads`, with `uploadedAt`).
    struct Stored: Encodable {
        var digest: Digest
        var size: Int64
        var mediaType: String
        var scope: String
        var session: String?
        var uploadedAt: Date?
    }

    func upload(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try Self.requirePrincipal(context)
        try limits.admit(principal)
        let (scope, groupId, session) = try self.scope(for: principal, sessionParameter: request.uri.queryParameters["session"].map(String.init))
        let limit = configuration.maxPictureUpload
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw APIError.tooLarge("the picture is \(declared) bytes; the limit is \(limit)")
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge("the picture is over the limit of \(limit) bytes")
        }
        let received = Array(body.readableBytesView)
        guard let header = try? ImageHeader.read(received), Self.pictureTypes.contains(header.mediaType) else {
            throw APIError.notAPicture()
        }
        let bytes = try await configuration.uploadSanitizer.sanitize(received, mediaType: header.mediaType)
        // A participant's upload is theirs by id (names repeat); a member's by token name, like the rest of their space.
        let uploader = principal.participantId ?? principal.owner
        var isInScope = false
        let blob = try await hoard.write(.bytes(bytes)) { incoming in
            // 200 only for the uploader's own picture again: another's copy answers 201 like a new one (no oracle).
            isInScope = try hoard.catalog.privateUpload(incoming.digest, scope: scope)?.isUploaded(by: principal) == true
            // Another's copy is judged against the quota as a new picture is, so a full group cannot tell them apart.
            if !isInScope, let usage = try hoard.catalog.quota(groupId: groupId), let quota = usage.quota,
                usage.used + incoming.size > quota
            {
                throw APIError.quotaExceeded(
                    "group '\(usage.name)' holds \(usage.used) of its \(quota) bytes; this picture needs \(incoming.size) more")
            }
        } record: { incoming in
            let blob = BlobRecord(digest: incoming.digest, size: incoming.size, mediaType: header.mediaType.rawValue)
            try hoard.catalog.recordPrivateUpload(
                blob, PrivateUploadRecord(scope: scope, digest: blob.digest, groupId: groupId, uploader: uploader), session: session)
            return blob
        }
        if let session {
            // Withheld first: until the table shows it, a participant's picture is the host's and theirs alone.
            if let participant = principal.participantId { try await hub.announceUpload(session: session, blob: blob, by: participant) }
            access.addReachable(session: session, [blob.digest], blobs: [blob])
        }
        context.logger.info("picture uploaded", metadata: ["digest": "\(blob.digest)", "size": "\(blob.size)", "scope": "\(scope)"])
        let stored = Stored(digest: blob.digest, size: blob.size, mediaType: blob.mediaType, scope: session == nil ? "member" : "session", session: session)
        return try JSONBody.response(stored, status: isInScope ? .ok : .created)
    }

    /// The participant or member the request acts for; 401 without a token.
    static func requirePrincipal(_ context: HoardRequestContext) throws -> Principal {
        guard let principal = context.principal else { throw APIError.unauthorized("send a participant's or member's token") }
        return principal
    }

    /// Where an upload goes: a participant's session, the session a member names, or the member's own space.
    func scope(for principal: Principal, sessionParameter: String?) throws -> (UploadScope, groupId: Int64, session: String?) {
        if let id = principal.sessionId ?? sessionParameter {
            guard let session = try hoard.catalog.session(id: id), Self.maySee(session, principal) else {
                throw APIError.notFound("no session \(id.prefix(100))")
            }
            return (.session(session.id), session.groupId, session.id)
        }
        return (.member(groupId: principal.groupId, id: principal.memberId), principal.groupId, nil)
    }

    static func maySee(_ session: SessionRecord, _ principal: Principal) -> Bool {
        principal.sessionId == session.id || (principal.isMember && (principal.isAdmin || principal.groupId == session.groupId))
    }

    /// Whether `principal` may read a blob through one of its private-upload scopes.
    static func mayRead(scopes: [String], _ principal: Principal, catalog: Catalog) throws -> Bool {
        for scope in scopes {
            if principal.isMember, scope == UploadScope.member(groupId: principal.groupId, id: principal.memberId).description { return true }
            if let id = UploadScope.session(of: scope), let session = try catalog.session(id: id), maySee(session, principal) {
                return true
            }
        }
        return false
    }

    func fetch(_ context: HoardRequestContext) async throws -> Response {
        let digest = try BlobRoutes.digest(context)
        let principal = try Self.requirePrincipal(context)
        guard let upload = try hoard.catalog.privateUpload(digest),
              try Self.mayRead(scopes: upload.scopes, principal, catalog: hoard.catalog),
              // A participant reads what their view of the table shows, as through the blob API.
              principal.participantId == nil || access.readable(digest, by: principal) != nil
        else { throw APIError.notFound("no upload \(digest) you may read") }
        let body = try await reader.body(digest, size: upload.blob.size, range: nil, context: context)
        return Response(
            status: .ok,
            headers: [.contentType: upload.blob.mediaType, .eTag: "\"\(digest)\"", .cacheControl: "private, max-age=31536000, immutable"],
            body: body)
    }

    struct Page: Encodable {
        var uploads: [Stored]
        var total: Int
        var nextOffset: Int?
    }

    /// `GET /v1/uploads?offset=&limit=`: the uploads the caller made, newest first — a member's in their own space
    /// and into sessions, a participant's in its session.
    func list(_ request: Request, _ context: HoardRequestContext) throws -> Response {
        let principal = try Self.requirePrincipal(context)
        let offset = try request.queryNumber("offset", default: 0, range: 0...Int(Int32.max))
        let limit = try request.queryNumber("limit", default: 100, range: 1...1000)
        let (page, total) = try hoard.catalog.uploads(by: principal, offset: offset, limit: limit)
        let listed = page.map {
            Stored(digest: $0.digest, size: $0.size, mediaType: $0.mediaType, scope: $0.session == nil ? "member" : "session",
                   session: $0.session, uploadedAt: $0.uploadedAt)
        }
        let next = offset + page.count < total ? offset + page.count : nil
        return try JSONBody.response(Page(uploads: listed, total: total, nextOffset: next))
    }

    /// `DELETE /v1/uploads/{digest}?session=`: forgets the upload in the scope a `POST` with the same parameters would
    /// use — a participant's session, the session a member names, or the member's own space. Its uploader, and for a
    /// session upload the session's host or an admin, may; anyone else gets 404, as for an absent upload.
    func forget(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let digest = try BlobRoutes.digest(context)
        let principal = try Self.requirePrincipal(context)
        let notFound = APIError.notFound("no upload \(digest) you may delete")
        let (scope, _, session) = try self.scope(for: principal, sessionParameter: request.uri.queryParameters["session"].map(String.init))
        guard let upload = try hoard.catalog.privateUpload(digest, scope: scope) else { throw notFound }
        if let session, let participant = principal.participantId, !upload.isUploaded(by: principal) {
            // The same picture uploaded after another participant: theirs to forget, the other's stays.
            guard try await hub.hasUploaded(session: session, digest: digest, participant: participant) else { throw notFound }
            try await hub.forgetUpload(session: session, digest: digest, by: participant)
            return Response(status: .noContent)
        }
        if let session, let participant = principal.participantId, upload.isUploaded(by: principal),
            let heir = try await hub.uploaders(session: session, digest: digest).subtracting([participant]).min(),
            let blob = try hoard.catalog.privateUpload(digest)?.blob
        {
            // Another participant uploaded the same picture: it passes to them, and stays theirs.
            guard try hoard.catalog.forgetUpload(digest, scope: scope) != nil else { throw notFound }
            try hoard.catalog.recordPrivateUpload(
                blob, PrivateUploadRecord(scope: scope, digest: digest, groupId: upload.groupId, uploader: heir), session: session)
            try await hub.forgetUpload(session: session, digest: digest, by: participant)
            return Response(status: .noContent)
        }
        if !upload.isUploaded(by: principal) {
            guard let session, let record = try hoard.catalog.session(id: session), SessionRoutes.isHost(principal, of: record) else {
                throw notFound
            }
        }
        guard let forgotten = try hoard.catalog.forgetUpload(digest, scope: scope) else { throw notFound }
        if let session = forgotten.unreachableIn { access.removeReachable(session: session, [digest]) }
        if let session { try await hub.forgetUpload(session: session, digest: digest) }
        context.logger.info("upload forgotten", metadata: ["digest": "\(digest)", "scope": "\(scope)"])
        return Response(status: .noContent)
    }
}
