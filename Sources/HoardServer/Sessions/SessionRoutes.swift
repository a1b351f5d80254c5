import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird
import NIOCore

/// `/v1/sessions` and `/v1/maps`: game sessions whose maps reference art by digest, join codes, and saved maps.
struct SessionRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let hub: SessionHub
    let reader: BlobReader
    /// Encoded manifests by map digest (``encodedManifest(of:map:)``).
    let manifests: BlobCache
    /// Joins per session and minute.
    let limits: RateLimiter
    /// Most participants a session holds at once: a leaked code fills one session's table, not the catalog.
    let maxParticipants: Int
    /// Encoded views of tables, by session, sequence number and what the viewer does not see.
    var views: TableViews { hub.views }

    /// Media type of map blobs.
    static let mapMediaType = "application/vnd.hoard.map+json"
    /// Deepest map document accepted.
    static let maxDepth = 64
    /// Largest body that carries a map (create, replace, save): a 512 × 512 map painted tile by tile in the v1 form is
    /// about 26 MB. Every other JSON body stops at 4 MiB.
    static let maxMapBody = 32 << 20

    /// Reads a body that carries a map, up to ``maxMapBody`` (413 past it), with Hoard's JSON parser (a map of
    /// 260,000 tiles is read in a fraction of the time `JSONDecoder` takes).
    static func decodeMapBody<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        let body = try await request.body.collect(upTo: maxMapBody)
        return try JSONValueDecoder.decode(type, from: Data(buffer: body))
    }

    func register(on endpoints: Endpoints) {
        endpoints.on(.post, "/v1/sessions") { request, context in try await create(request, context) }
        endpoints.on(.get, "/v1/sessions") { _, context in try await lobby(context) }
        endpoints.on(.post, "/v1/sessions/join") { request, context in try await join(request, context) }
        endpoints.on(.get, "/v1/sessions/{id}") { request, context in try await show(request, context) }
        endpoints.on(.put, "/v1/sessions/{id}/map") { request, context in try await replaceMap(request, context) }
        endpoints.on(.delete, "/v1/sessions/{id}") { _, context in try await end(context) }
        endpoints.on(.delete, "/v1/sessions/{id}/participants/{participant}") { _, context in try await removeParticipant(context) }
        endpoints.on(.post, "/v1/sessions/{id}/code") { _, context in try await rotateCode(context) }
        registerDice(on: endpoints)
        endpoints.on(.post, "/v1/maps") { request, context in try await saveMap(request, context) }
        endpoints.on(.get, "/v1/maps") { _, context in try listMaps(context) }
        endpoints.on(.get, "/v1/maps/{name}") { _, context in try await loadMap(context) }
        endpoints.on(.delete, "/v1/maps/{name}") { _, context in try deleteMap(context) }
    }

    // MARK: Maps as blobs

    /// Checks a map's references are readable by `principal` (or already reached by `session`, such as its
    /// participants' pictures) and writes it as a canonical-JSON blob; `record` writes what refers to it.
    func store<Recorded: Sendable>(
        map: JSONValue, for principal: Principal, session: String? = nil,
        record: (_ blob: BlobRecord, _ resolved: ResolvedReferences) async throws -> Recorded
    ) async throws -> Recorded {
        guard map.depth <= Self.maxDepth else { throw APIError.badRequest("the map is nested deeper than \(Self.maxDepth) levels") }
        let references = map.referencedDigests
        // The manifest names packs as the session's group (the host's) sees them.
        let resolved = try hoard.catalog.resolve(references, group: principal.isMember ? principal.groupId : nil)
        let unreadable = references.filter { digest in
            access.readable(digest, by: principal) == nil && !(session.map { access.isReachable(digest, session: $0) } ?? false)
        }
        let missing = Set(resolved.missing).union(unreadable).sorted()
        guard missing.isEmpty else { throw APIError.missingBlobs(missing) }
        if let problem = Self.placeProblem(map, footprints: resolved) { throw APIError.badMap(problem) }
        return try await hoard.write(.bytes(try CanonicalJSON.encode(map))) { incoming in
            try await record(BlobRecord(digest: incoming.digest, size: incoming.size, mediaType: Self.mapMediaType), resolved)
        }
    }

    /// On a hex map, the first token or object whose footprint's hexes (its art's footprint, as resolved) leave the
    /// grid, as a move there would be refused; nil on a square map (``MapCheck`` judged its tiles).
    static func placeProblem(_ map: JSONValue, footprints resolved: ResolvedReferences) -> String? {
        var table = Table(map: map)
        guard case .hex = table.grid else { return nil }
        for asset in resolved.assets { table.footprints[asset.digest] = asset.footprint }
        return table.placeProblem()
    }

    func loadMapDocument(_ digest: Digest) async throws -> JSONValue {
        guard let bytes = try await hoard.read(digest) else { throw APIError.internalError("the map blob \(digest) is missing") }
        return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    // MARK: Sessions

    struct CreateRequest: Decodable {
        var name: String
        var visibility: String?
        var map: JSONValue?
        var fromMap: String?
    }

    struct Created: Encodable {
        var id: String
        var code: String
        var name: String
        var mapDigest: Digest
    }

    func create(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try context.requireMember()
        let body = try await Self.decodeMapBody(CreateRequest.self, request)
        let visibility = body.visibility ?? "group"
        guard ["group", "private"].contains(visibility) else { throw APIError.badRequest("visibility must be 'group' or 'private'") }
        let name = try NameRule.checked(body.name, as: .session)
        var map = body.map
        if let saved = body.fromMap {
            let record = try savedMap(named: saved, group: principal.groupId)
            map = try await loadMapDocument(record.digest)
        }
        guard let map else { throw APIError.badRequest("give a map, or fromMap with the name of a saved map") }
        let upgraded = try Self.storedForm(map)
        let (session, blob, resolved) = try await store(map: upgraded, for: principal) { blob, resolved in
            let session = SessionRecord(
                id: UUID().uuidString.lowercased(), name: name, groupId: principal.groupId, host: principal.owner,
                visibility: visibility, code: Self.makeCode(), mapDigest: blob.digest, baseSeq: 0, lastSeq: 0, createdAt: Date())
            try hoard.catalog.createSession(session, mapBlob: blob, reachable: resolved.reachable)
            return (session, blob, resolved)
        }
        access.addReachable(session: session.id, resolved.reachable, blobs: [blob])
        _ = try await hub.current(session: session.id)
        context.logger.info("session created", metadata: ["session": "\(session.id)"])
        return try JSONBody.response(Created(id: session.id, code: session.code, name: session.name, mapDigest: session.mapDigest), status: .created)
    }

    /// Eight characters from 32 that cannot be confused (no 0/O, 1/I), shown as XXXX-XXXX: 40 bits.
    static func makeCode() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        let chars = (0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] }
        return String(chars[0..<4]) + "-" + String(chars[4..<8])
    }

    static func normalize(code: String) -> String {
        let letters = code.uppercased().filter { $0.isLetter || $0.isNumber }
        guard letters.count == 8 else { return code }
        return String(letters.prefix(4)) + "-" + String(letters.suffix(4))
    }

    struct LobbyEntry: Encodable {
        var id: String
        var name: String
        var host: String
        var visibility: String
        var participants: [String]
        var connected: Int
        var createdAt: Date
    }

    /// A group's members' names by what sessions' `host` holds (``MemberRules/owner(_:)``): the host shown is a name.
    func memberNames(group: Int64) throws -> [String: String] {
        Dictionary(
            try hoard.catalog.members(groupId: group).map { (MemberRules.owner($0.member.id ?? 0), $0.member.name) }, uniquingKeysWith: { a, _ in a })
    }

    func lobby(_ context: HoardRequestContext) async throws -> Response {
        let principal = try context.requireMember()
        var entries: [LobbyEntry] = []
        let names = try memberNames(group: principal.groupId)
        for session in try hoard.catalog.sessions(groupId: principal.groupId, host: principal.owner) {
            entries.append(LobbyEntry(
                id: session.id, name: session.name, host: names[session.host] ?? "", visibility: session.visibility,
                participants: try hoard.catalog.participants(session: session.id).map(\.name),
                connected: await hub.connected(session: session.id).count, createdAt: session.createdAt))
        }
        return try JSONBody.response(["sessions": entries])
    }

    struct JoinRequest: Decodable {
        var code: String
        var name: String
        /// The key an earlier join answered (``PlayerKey``): the player's dice statistics continue.
        var playerKey: String?
    }

    /// Joins by code: a participant token for the session, and the player key to present at the next join (the one
    /// sent, or a new one), which keeps the player's dice statistics across the group's sessions.
    func join(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let body = try await request.decode(as: JoinRequest.self, context: context)
        let name = try NameRule.checked(body.name, as: .displayName)
        let key = try body.playerKey.map { sent in
            guard let key = PlayerKey(sent) else {
                throw APIError.badRequest("a playerKey is what an earlier join answered (hoard_k_ and 43 letters or digits); send none for a new one")
            }
            return key
        } ?? PlayerKey.random()
        guard let session = try hoard.catalog.session(code: Self.normalize(code: body.code)) else { throw APIError.unknownCode() }
        try limits.admitJoin(session: session.id)
        guard try hoard.catalog.participantCount(session: session.id) < maxParticipants else {
            throw APIError.forbidden("the session is full (\(maxParticipants) players); ask the host to remove someone")
        }
        let token = "hoard_p_" + Hoard.randomSecret()
        let participant = ParticipantRecord(
            id: UUID().uuidString.lowercased(), sessionId: session.id, name: name, tokenHash: Hoard.hashToken(token), joinedAt: Date(),
            player: key.player(inGroup: session.groupId))
        try hoard.catalog.addParticipant(participant)
        access.add(Principal(participant: participant.id, name: name, session: session.id, player: participant.player), tokenHash: participant.tokenHash)
        let (table, seq) = try await hub.current(session: session.id)
        let view = try views.document(session: session.id, seq: seq, table: table, viewer: .participant(participant.id))
        context.logger.info("participant joined", metadata: ["session": "\(session.id)", "participant": "\(participant.id)"])
        return try JSONBody.response([
            "sessionId": session.id, "participantId": participant.id, "participantToken": token, "mapDigest": view.digest.description,
            "playerKey": key.description,
        ])
    }

    /// The session, when the caller is one of its participants or a member of its group.
    func visibleSession(_ context: HoardRequestContext) throws -> (SessionRecord, Principal) {
        try Self.visibleSession(context, catalog: hoard.catalog)
    }

    /// The session named by the `id` path parameter, when the caller is one of its participants or a member of its
    /// group; 404 otherwise (the two are not told apart).
    static func visibleSession(_ context: HoardRequestContext, catalog: Catalog) throws -> (SessionRecord, Principal) {
        let id = context.parameter("id")
        guard let principal = context.principal else { throw APIError.unauthorized("send a participant's or member's token") }
        guard let session = try catalog.session(id: id), sees(principal, session) else { throw APIError.notFound("no session \(id)") }
        return (session, principal)
    }

    /// Whether a token may see a session: its own participants, and members of its group (admins: every session).
    static func sees(_ principal: Principal, _ session: SessionRecord) -> Bool {
        principal.sessionId == session.id || (principal.isMember && (principal.groupId == session.groupId || principal.isAdmin))
    }

    static func isHost(_ principal: Principal, of session: SessionRecord) -> Bool {
        principal.isMember && (principal.isAdmin || (principal.groupId == session.groupId && principal.owner == session.host))
    }

    /// Who `principal` is at the session's table: its participant id (a member's is `host:<token name>`), and whether
    /// it sees and acts as the host.
    static func seat(_ principal: Principal, at session: SessionRecord) -> (participantId: String, actor: Table.Actor) {
        let id = principal.participantId ?? "host:\(principal.owner)"
        return (id, isHost(principal, of: session) ? .host : .participant(id))
    }

    /// What a session's map references, as `GET /v1/sessions/{id}` and `assets` events list it; the client decodes it
    /// as its `SessionManifest`, item types shared (HoardCore's ``AssetListing`` and ``ManifestBlob``).
    struct Manifest: Encodable {
        var assets: [AssetListing]
        var blobs: [ManifestBlob]
    }

    static func manifest(_ resolved: ResolvedReferences) -> Manifest {
        Manifest(assets: resolved.assets, blobs: resolved.blobs.map { ManifestBlob(digest: $0.digest, size: $0.size, mediaType: $0.mediaType) })
    }

    /// `assets` and `blobs` of a manifest, as event fields.
    static func manifestFields(_ resolved: ResolvedReferences) throws -> [String: JSONValue] {
        let manifest = Self.manifest(resolved)
        return ["assets": try JSONValue.encoded(manifest.assets), "blobs": try JSONValue.encoded(manifest.blobs)]
    }

    /// The session as the caller sees it now: its fields, the map (its base with every op applied, less what the
    /// caller may not see) as canonical JSON, the manifest of that map, and the sequence number it reflects, so a live
    /// channel opened with `since=seq` continues exactly. `mapDigest` is the digest of the map as sent. The manifest is
    /// a function of that map, so it is encoded once per map digest and kept in ``manifests``.
    ///
    /// With `?known=<map digest>` equal to the map's, `map` and `manifest` are left out: the caller holds them (a
    /// client's warm join), and the answer is a few hundred bytes whatever the map's size.
    func show(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let (session, principal) = try visibleSession(context)
        let known = request.uri.queryParameters.get("known").flatMap(Digest.init)
        let (table, seq) = try await hub.current(session: session.id)
        let seat = Self.seat(principal, at: session)
        let view = try views.document(session: session.id, seq: seq, table: table, viewer: seat.actor)
        var document: (map: ByteBuffer, manifest: ByteBuffer)?
        if known != view.digest {
            let map = ByteBuffer(bytes: view.bytes)
            document = (map, try encodedManifest(of: view.digest, map: map, group: session.groupId))
        }
        let seats = await hub.seats(session: session, participants: try hoard.catalog.participants(session: session.id))
        // The fields other than the map and its manifest, which are spliced in as bytes.
        var shown = SessionFields(
            id: session.id, name: session.name, host: try memberNames(group: session.groupId)[session.host] ?? "",
            visibility: session.visibility, mapDigest: view.digest,
            seq: seq, participants: seats.participants, you: SessionFields.Seat(
                participantId: seat.participantId, host: seat.actor == .host, joinCode: seat.actor == .host ? session.code : nil))
        shown.hostSeat = seats.host
        shown.awaySeconds = Int(hub.awayGrace.components.seconds)
        shown.dice = await hub.diceFields(session: session.id)
        let fields = try JSONBody.encoder.encode(shown)
        var body = ByteBuffer()
        guard let (map, manifest) = document else {
            body.writeBytes(fields)
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
        }
        body.reserveCapacity(fields.count + map.readableBytes + manifest.readableBytes + 32)
        body.writeBytes(fields.dropLast())
        body.writeString(#","manifest":"#)
        body.writeImmutableBuffer(manifest)
        body.writeString(#","map":"#)
        body.writeImmutableBuffer(map)
        body.writeString("}")
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    /// The JSON of a map's manifest as `group` sees it (the packs it names are that group's or public), from
    /// ``manifests`` or made from the map's bytes (and kept) now. Kept by group and map digest: two groups' sessions
    /// with the same map never share an entry.
    func encodedManifest(of mapDigest: Digest, map: ByteBuffer, group: Int64) throws -> ByteBuffer {
        let key = BlobHasher.digest(of: Array("\(group) \(mapDigest)".utf8))
        if let cached = manifests.get(key) { return cached }
        let document = try JSONValue(parsing: Data(map.readableBytesView))
        let resolved = try hoard.catalog.resolve(document.referencedDigests, group: group)
        let encoded = ByteBuffer(bytes: try JSONBody.encoder.encode(Self.manifest(resolved)))
        // A manifest whose pictures are still being made changes when they are: it is made again until then.
        if !resolved.assets.contains(where: { $0.pending != nil }) { manifests.put(key, encoded) }
        return encoded
    }

    /// A map as it is stored: through the door every map passes (``MapCheck``: a per-tile floor in the palette form,
    /// strokes given ids, places on the grid, ids unique), refused (400 BAD_MAP) when it does not pass, and (400) when
    /// its floor and fog cover more tiles than a table reads.
    static func storedForm(_ map: JSONValue) throws -> JSONValue {
        if let excess = MapPalette.excess(map) { throw APIError.badRequest(excess) }
        switch MapCheck.admitted(map) {
        case .success(let stored): return stored
        case .failure(let problem): throw APIError.badMap(problem.message)
        }
    }

    func replaceMap(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let (session, principal) = try visibleSession(context)
        guard Self.isHost(principal, of: session) else { throw APIError.forbidden("only the session's host may change its map") }
        // A v1 map is stored and answered in the palette form (MapPalette).
        let map = try Self.storedForm(try await Self.decodeMapBody(JSONValue.self, request))
        let catalog = hoard.catalog
        let (blob, seq, resolved) = try await store(map: map, for: principal, session: session.id) { blob, resolved in
            let seq = try await hub.replaceMap(session: session.id, map: map, commit: { seq in
                try catalog.setMap(session: session.id, mapBlob: blob, reachable: resolved.reachable, baseSeq: seq)
            }, event: try Self.manifestFields(resolved).merging([
                "type": .string("map"), "mapDigest": .string(blob.digest.description), "map": map,
            ]) { $1 })
            return (blob, seq, resolved)
        }
        access.addReachable(session: session.id, resolved.reachable, blobs: [blob])
        struct Replaced: Encodable {
            var mapDigest: Digest
            var seq: Int64
        }
        return try JSONBody.response(Replaced(mapDigest: blob.digest, seq: seq))
    }

    /// Ends a session (its host or an admin): its participants and their tokens, its reach, its event log and the
    /// uploads made in it go in one catalog transaction; its tokens answer 401 and its sockets close at once.
    func end(_ context: HoardRequestContext) async throws -> Response {
        let (session, principal) = try visibleSession(context)
        guard Self.isHost(principal, of: session) else { throw APIError.forbidden("only the session's host (or an admin) may end it") }
        // Everyone at the table is sent the seed (and the blind rolls) before the sockets close; the seal stays.
        try await hub.revealDice(session: session.id)
        guard try hoard.catalog.deleteSession(id: session.id) else { throw APIError.notFound("no session \(session.id)") }
        access.endSession(session.id)
        await hub.end(session: session.id)
        context.logger.info("session ended", metadata: ["session": "\(session.id)"])
        return Response(status: .noContent)
    }

    /// Removes a participant (the host or an operator), or a participant leaves (their own id): their token answers
    /// 401 at once and their sockets close with 4403; what they own on the table stays, for the host to give to
    /// someone else.
    func removeParticipant(_ context: HoardRequestContext) async throws -> Response {
        let (session, principal) = try visibleSession(context)
        let participant = context.parameter("participant")
        guard Self.isHost(principal, of: session) || principal.participantId == participant else {
            throw APIError.forbidden("only the session's host may remove another participant")
        }
        guard try hoard.catalog.removeParticipant(participant, session: session.id) else {
            throw APIError.notFound("no participant \(participant.prefix(100)) in session \(session.id)")
        }
        access.removeParticipant(participant)
        await hub.remove(participant: participant, session: session.id)
        context.logger.info("participant removed", metadata: ["session": "\(session.id)", "participant": "\(participant)"])
        return Response(status: .noContent)
    }

    /// Gives the session a new join code (the host or an operator): the old one stops working; who joined stays.
    func rotateCode(_ context: HoardRequestContext) async throws -> Response {
        let (session, principal) = try visibleSession(context)
        guard Self.isHost(principal, of: session) else { throw APIError.forbidden("only the session's host may change its join code") }
        let code = Self.makeCode()
        guard try hoard.catalog.setCode(code, session: session.id) else { throw APIError.notFound("no session \(session.id)") }
        context.logger.info("join code changed", metadata: ["session": "\(session.id)"])
        return try JSONBody.response(["id": session.id, "code": code])
    }

    // MARK: Saved maps

    struct SaveRequest: Decodable {
        var name: String
        var map: JSONValue?
        /// A session whose table, as it is now, is saved (its host's view): the game in progress.
        var session: String?
    }

    func saveMap(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try context.requireMember()
        let body = try await Self.decodeMapBody(SaveRequest.self, request)
        let name = try NameRule.checked(body.name, as: .savedMap)
        var map = body.map
        if let id = body.session {
            guard let session = try hoard.catalog.session(id: id), principal.groupId == session.groupId || principal.isAdmin else {
                throw APIError.notFound("no session \(id.prefix(100))")
            }
            guard Self.isHost(principal, of: session) else { throw APIError.forbidden("only the session's host may save its table") }
            map = try await hub.current(session: id).table.map
        }
        guard let given = map, (body.map == nil) != (body.session == nil) else {
            throw APIError.badRequest("give either a map or the session whose table to save")
        }
        // A name that is one of the group's maps' under NameRule ("émoi" beside "Émoi") is taken.
        if let taken = NameRule.matches(name, among: try hoard.catalog.savedMaps(group: principal.groupId), name: \.name).first {
            throw APIError.mapExists(taken.name)
        }
        let upgraded = try Self.storedForm(given)
        do {
            let saved = try await store(map: upgraded, for: principal) { blob, resolved in
                try hoard.catalog.saveMap(group: principal.groupId, name: name, blob: blob, reachable: resolved.reachable)
            }
            return try JSONBody.response(["name": saved.name, "digest": saved.digest.description], status: .created)
        } catch let error as CatalogError where error.code == .conflict {
            throw APIError.mapExists(name)
        }
    }

    func listMaps(_ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        let maps = try hoard.catalog.savedMaps(group: principal.groupId).map {
            ["name": $0.name, "digest": $0.digest.description, "savedAt": ISO8601DateFormatter().string(from: $0.savedAt)]
        }
        return try JSONBody.response(["maps": maps])
    }

    func loadMap(_ context: HoardRequestContext) async throws -> Response {
        let principal = try context.requireMember()
        let record = try savedMap(named: context.parameter("name"), group: principal.groupId)
        struct Loaded: Encodable {
            var name: String
            var digest: Digest
            var map: JSONValue
        }
        return try JSONBody.response(Loaded(name: record.name, digest: record.digest, map: try await loadMapDocument(record.digest)))
    }

    func deleteMap(_ context: HoardRequestContext) throws -> Response {
        let principal = try context.requireMember()
        let record = try savedMap(named: context.parameter("name"), group: principal.groupId)
        guard try hoard.catalog.deleteMap(group: principal.groupId, name: record.name) else {
            throw APIError.notFound("no saved map named '\(record.name)'")
        }
        return Response(status: .noContent)
    }

    /// The group's saved map `name` names, as ``NameRule`` finds names ("émoi" finds "Émoi"); 404 when none does.
    func savedMap(named name: String, group: Int64) throws -> SavedMapRecord {
        let found = NameRule.matches(name, among: try hoard.catalog.savedMaps(group: group), name: \.name)
        guard let record = found.first else { throw APIError.notFound("no saved map named '\(name.prefix(128))'") }
        guard found.count == 1 else {
            let names = found.map { "'\($0.name)'" }.joined(separator: ", ")
            throw APIError.badRequest("'\(name.prefix(128))' could be any of the maps \(names); give one of them exactly")
        }
        return record
    }
}

extension JSONValue {
    /// Any encodable value as a JSON value.
    static func encoded<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: try JSONBody.encoder.encode(value))
    }
}
