import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird
import Logging
import NIOCore

/// `/v1/packs`: list, read, upload (streamed), publish and delete packs.
struct PackRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let limits: RateLimiter
    let metrics: ServerMetrics
    let configuration: ServerConfiguration
    /// The render workers, woken when an upload queued jobs.
    let renditions: RenditionService?
    /// Imports in flight that the uploader asked to follow.
    let imports = ImportBoard()

    func register(on endpoints: Endpoints) {
        endpoints.on(.get, "/v1/packs") { _, context in try JSONBody.response(["packs": try visiblePacks(context.principal)]) }
        endpoints.on(.post, "/v1/packs") { request, context in try await upload(request, context) }
        endpoints.on(.post, "/v1/pack-name") { request, context in
            _ = try context.requireMember()
            let facts = try await request.decode(as: PackNaming.Facts.self, context: context)
            return try JSONBody.response(PackNaming.predict(facts, kinds: hoard.registry.kinds))
        }
        endpoints.on(.get, "/v1/packs/{name}") { request, context in try JSONBody.response(try await detail(try pack(request, context))) }
        endpoints.on(.get, "/v1/packs/{name}/documents/{file}") { request, context in try await document(request, context) }
        endpoints.on(.patch, "/v1/packs/{name}") { request, context in try await patch(request, context) }
        endpoints.on(.delete, "/v1/packs/{name}") { request, context in try await delete(request, context) }
        endpoints.on(.get, "/v1/imports/{id}") { _, context in try importProgress(context) }
        endpoints.on(.delete, "/v1/imports/{id}") { _, context in try cancelImport(context) }
    }

    /// DELETE: asks the import that named this id to stop; it answers its upload with 409 `IMPORT_CANCELLED` and stores
    /// nothing, unless it was already publishing (then it finishes). 202: asked.
    func cancelImport(_ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        let id = context.parameter("id")
        guard imports.cancel(id, groupId: principal.groupId, isAdmin: principal.isAdmin) else {
            throw APIError.notFound("no import in progress with id '\(id.prefix(64))'; it has finished, or never started")
        }
        context.logger.info("import cancellation asked", metadata: ["import": "\(id)"])
        return Response(status: .accepted)
    }

    /// GET: how far the upload that named this id has got; 404 before its first byte and after its answer.
    func importProgress(_ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        let id = context.parameter("id")
        guard let entry = imports.entry(id, groupId: principal.groupId, isAdmin: principal.isAdmin) else {
            throw APIError.notFound("no import in progress with id '\(id.prefix(64))'; it has finished, or never started")
        }
        return try JSONBody.response(entry)
    }

    static func isVisible(_ pack: PackSummary, to principal: Principal?) -> Bool {
        pack.isPublic || principal.map { $0.isAdmin || ($0.isMember && $0.groupId == pack.groupId) } ?? false
    }

    func visiblePacks(_ principal: Principal?) throws -> [PackSummary] {
        try hoard.catalog.packs().filter { Self.isVisible($0, to: principal) }
    }

    /// The pack the path names, as the caller sees it. Pack names are unique within a group only: `?group=` names the
    /// owner; without it the caller's own group's pack comes first, then the one other visible pack of that name
    /// (several, which only public packs can be: 400 asking for `?group=`). Packs the caller may not see answer 404
    /// like absent ones.
    func pack(_ request: Request, _ context: HoardRequestContext) throws -> PackSummary {
        let name = context.parameter("name").precomposedStringWithCanonicalMapping
        let owner = request.uri.queryParameters.get("group").map(GroupName.key)
        // Names are found as NameRule compares them ("émoi" finds "Émoi"); an exact name (ASCII case aside, as the
        // catalog compares) wins over a look-alike, so an old catalog's "Émoi" and "émoi" are each found by their own.
        let key = NameRule.key(name)
        let alike = try hoard.catalog.packs().filter { pack in
            NameRule.key(pack.name) == key && Self.isVisible(pack, to: context.principal)
                && owner.map { $0 == GroupName.key(pack.group) } != false
        }
        func best(_ packs: [PackSummary]) -> [PackSummary] {
            let exact = packs.filter { NameRule.spelledAlike($0.name, name) }
            return exact.isEmpty ? packs : exact
        }
        if let principal = context.principal, principal.isMember {
            let own = best(alike.filter { $0.groupId == principal.groupId })
            guard own.count < 2 else {
                let names = own.map { "'\($0.name)'" }.joined(separator: ", ")
                throw APIError.badRequest("'\(name.prefix(128))' could be any of the packs \(names); give one of them exactly")
            }
            if let own = own.first { return own }
        }
        let visible = best(alike)
        guard let pack = visible.first else { throw APIError.notFound("no pack named '\(name.prefix(128))'") }
        guard visible.count == 1 else {
            let groups = visible.map { "'\($0.group)'" }.joined(separator: ", ")
            throw APIError.badRequest("the groups \(groups) each publish a pack named '\(pack.name)'; say which with ?group=NAME")
        }
        return pack
    }

    /// The pack with its documents, author and licence.
    func detail(_ summary: PackSummary) async throws -> PackDetail {
        var manifest: PackManifest?
        if let digest = summary.manifestDigest, let bytes = try await hoard.read(digest) {
            manifest = try? JSONDecoder().decode(PackManifest.self, from: Data(bytes))
        }
        let problems = (summary.renditions?.failed ?? 0) > 0 ? try hoard.catalog.jobProblems(pack: summary.name, group: summary.group) : []
        return PackDetail(
            summary: summary, documents: try hoard.catalog.documents(ofPack: summary.name, group: summary.group), author: manifest?.author,
            license: manifest?.license, renditionProblems: problems)
    }

    /// One of the pack's documents (its licence, readme or credits), with its media type.
    func document(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let summary = try pack(request, context)
        let file = context.parameter("file")
        guard let document = try hoard.catalog.documents(ofPack: summary.name, group: summary.group).first(where: { $0.name == file }),
              let bytes = try await hoard.read(document.digest)
        else { throw APIError.notFound("pack '\(summary.name)' has no document named '\(file)'") }
        return Response(
            status: .ok,
            headers: [.contentType: document.mediaType, .eTag: "\"\(document.digest)\"", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The pack, when the caller may change it: its group's owners and operators.
    func ownedPack(_ request: Request, _ context: HoardRequestContext) throws -> PackSummary {
        let principal = try context.requireMember()
        let pack = try pack(request, context)
        guard principal.isAdmin || (principal.groupId == pack.groupId && principal.managesGroup) else {
            throw APIError.forbidden("only an owner of group '\(pack.group)' may delete or publish its pack '\(pack.name)'; ask one of them")
        }
        return pack
    }

    struct Patch: Decodable {
        var isPublic: Bool
    }

    func patch(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let pack = try ownedPack(request, context)
        let change = try await request.decode(as: Patch.self, context: context)
        try hoard.catalog.setPublic(change.isPublic, pack: pack.name, group: pack.group)
        try await access.catchUp()
        context.logger.info("pack visibility changed", metadata: ["pack": "\(pack.name)", "isPublic": "\(change.isPublic)"])
        var changed = pack
        changed.isPublic = change.isPublic
        return try JSONBody.response(try await detail(changed))
    }

    func delete(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let pack = try ownedPack(request, context)
        try hoard.catalog.deletePack(named: pack.name, group: pack.group)
        try await access.catchUp()
        context.logger.info("pack deleted", metadata: ["pack": "\(pack.name)"])
        return Response(status: .noContent)
    }

    /// POST: the archive is the request body, spooled to disk (never held in memory), then imported like the CLI does.
    func upload(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try context.requireMember()
        try limits.admit(principal)
        let query = request.uri.queryParameters
        var options = Importer.Options()
        let named = query["group"].map(String.init) ?? principal.group
        // The import creates the group when it is new: refuse names no one could type or see ("", "\n", NUL…).
        if let problem = GroupName.problem(with: named) { throw APIError.badRequest(problem) }
        // The group is the one the name finds ("ÉCLAIR" finds "éclair"); only an admin may import into another.
        let forbidden = APIError.forbidden("only an admin may import into group '\(named.prefix(128))'")
        let target: GroupRecord?
        switch Result(catching: { () throws(CatalogError) -> GroupRecord? in try hoard.catalog.group(matching: named) }) {
        case .success(let group): target = group
        case .failure(let error) where error.code == .conflict:
            // An older catalog's look-alike groups: an admin is told to spell one exactly, a member is refused.
            throw principal.isAdmin ? APIError.badRequest(error.message) : forbidden
        case .failure(let error): throw error
        }
        guard principal.isAdmin || (target != nil && target?.id == principal.groupId) else { throw forbidden }
        options.group = target?.name ?? named
        options.packName = query["name"].map(String.init)
        // The spool file's name means nothing; the browser may say what the archive was called.
        options.archiveName = query["fileName"].map { String($0.prefix(255)) }
        options.namesFromFileName = options.archiveName != nil
        options.isNewPackOnly = query["newPackOnly"] == "true"
        options.niceness = configuration.importNiceness
        let limit = configuration.maxPackUpload
        if let declared = request.headers[.contentLength].flatMap(Int64.init), declared > limit {
            throw APIError.tooLarge("the archive is \(declared) bytes; the limit is \(limit)")
        }
        let progressID = query["progress"].map(String.init)
        if let progressID, !ImportBoard.isValid(progressID) {
            throw APIError.badRequest("progress must be 8 to 64 letters, digits or dashes")
        }
        let declared = request.headers[.contentLength].flatMap(Int64.init) ?? 0
        let followed = progressID.flatMap { imports.start($0, groupId: principal.groupId, size: declared) }
        defer { if let followed { imports.finish(followed) } }
        let spool = try Spool(directory: hoard.directory.path + "/uploads")
        defer { spool.remove() }
        var size: Int64 = 0
        for try await buffer in request.body {
            size += Int64(buffer.readableBytes)
            guard size <= limit else { throw APIError.tooLarge("the archive is over the limit of \(limit) bytes") }
            try spool.write(buffer)
            if let followed { imports.received(followed, bytes: size) }
        }
        try spool.finish()
        // Conservative: the archive's size before deduplication.
        try hoard.catalog.requireQuota(group: options.group, adding: size, for: "this archive")
        if let followed {
            guard !imports.isCancelled(followed) else {
                let cancelled = Problem(.importCancelled, "the import was cancelled; nothing was stored")
                throw refusal(ImportError(archive: options.archiveName ?? "upload", problems: [cancelled]), context)
            }
            options.isCancelled = { [imports] in imports.isCancelled(followed) }
        }
        let outcome: ImportOutcome
        do {
            outcome = try await hoard.importArchive(at: spool.path, options: options) { [imports] progress in
                if let followed { imports.update(followed, progress) }
            }
        } catch {
            throw refusal(error, context)
        }
        // Its generated pictures were queued with it: the render workers start on them now.
        if outcome.reports.contains(where: { $0.renditionJobs > 0 }) { renditions?.wake() }
        try await access.catchUp()
        switch outcome {
        case .pack(let report):
            recordImport(report, context)
            return try JSONBody.response(report, status: report.outcome == .imported ? .created : .ok)
        case .bundle(let members):
            return try answer(bundle: members, context)
        }
    }

    /// Counts and logs one pack imported.
    func recordImport(_ report: ImportReport, _ context: HoardRequestContext) {
        metrics.imports(outcome: report.outcome.rawValue).increment()
        context.logger.info("pack imported", metadata: [
            "pack": "\(report.pack)", "version": "\(report.version)", "assets": "\(report.assets)", "newBytes": "\(report.newBytes)",
        ])
    }

    /// Counts and logs one archive refused.
    func recordRefusal(_ error: ImportError, _ context: HoardRequestContext) {
        metrics.imports(outcome: "refused").increment()
        context.logger.info("pack refused", metadata: ["code": "\(error.code.rawValue)", "errors": "\(error.errors.count)"])
    }

    /// Records an archive refused and gives its error: the first error's code (``status(refusing:)``) with every problem.
    func refusal(_ error: ImportError, _ context: HoardRequestContext) -> APIError {
        recordRefusal(error, context)
        return APIError(error.code.rawValue, Self.status(refusing: error.code), error.errors.first?.message ?? "the archive was refused", problems: error.problems)
    }

    /// The status of an archive refused with `code`.
    static func status(refusing code: ProblemCode) -> HTTPResponse.Status {
        switch code {
        case .packConflict, .importCancelled: .conflict
        case .storageFailure: .init(code: 507, reasonPhrase: "Insufficient Storage")
        default: .unprocessableContent
        }
    }
}

/// A temporary file an upload is written to before it is read: bytes on disk, never all in memory. Small network
/// chunks are gathered into 1 MiB writes. The file stays open and `flock`ed until it is removed, so `hoard gc`
/// (which removes spool files a killed server left behind) never removes one in use.
final class Spool: @unchecked Sendable {
    let path: String
    private var fd: Int32
    private var pending: ByteBuffer
    private static let flushSize = 1 << 20

    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/" + UUID().uuidString.lowercased() + ".upload"
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw APIError.storageFailure("the server could not create an upload file; its disk may be full or read-only") }
        flock(fd, LOCK_SH)
        pending = ByteBufferAllocator().buffer(capacity: Self.flushSize)
    }

    deinit { if fd >= 0 { Foundation.close(fd) } }

    func write(_ buffer: ByteBuffer) throws {
        var buffer = buffer
        pending.writeBuffer(&buffer)
        if pending.readableBytes >= Self.flushSize { try flush() }
    }

    private func flush() throws {
        while pending.readableBytes > 0 {
            let written = pending.withUnsafeReadableBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw APIError.storageFailure("the server could not store the upload; its disk may be full") }
            pending.moveReaderIndex(forwardBy: written)
        }
        pending.clear()
    }

    /// Writes what is pending; the file stays open (and locked) until `remove()`.
    func finish() throws {
        try flush()
    }

    func remove() {
        if fd >= 0 { Foundation.close(fd); fd = -1 }
        unlink(path)
    }
}
