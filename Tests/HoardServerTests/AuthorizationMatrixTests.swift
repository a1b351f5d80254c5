import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import HoardStore
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Who may do what: every operation of Schemas/openapi.yaml, asked by every kind of caller, against a world where group
/// red owns everything named (a private pack with a licence, a session with its participants, an upload, a share, a
/// ref, a saved map). Each cell's answer is written down in ``expected``; an operation without a row fails the test,
/// so a new route cannot skip it. DESIGN.md's "Who may do what" is this table in words.
///
/// Each operation starts from a copy of the same world, and a caller whose write succeeded (2xx) leaves the next
/// caller a fresh copy, so every cell asks of the same state.
@Suite(.timeLimit(.minutes(10))) struct AuthorizationMatrixTests {
    /// The kinds of caller, in the order of the columns of ``expected``.
    enum Caller: String, CaseIterable, Sendable {
        case none, garbage
        /// Blue's owner and a blue member: another group.
        case otherOwner, otherMember
        /// A red member and a red owner (the host of red's session).
        case member, owner
        /// The server's operator (in group staff).
        case `operator`
        /// A participant of red's session; of another red session; one the host removed.
        case participant, otherParticipant, removed
        /// A red member who named their device like red's owner ("red member"): a name owns nothing, so they are a
        /// member like any other, never the owner.
        case impostor
    }

    /// Expected status per caller, in ``Caller`` order, per operationId.
    static let expected: [String: String] = [
        // Columns: none garbage otherOwner otherMember member owner operator participant otherParticipant removed
        // impostor.
        // An unknown token (garbage, a removed participant's) is 401 everywhere, public routes included.
        // The page, the server and share links (the link's id is the secret).
        "getWebPage": "200 401 200 200 200 200 200 200 200 401 200",
        "getWebFile": "200 401 200 200 200 200 200 200 200 401 200",
        // The table's pages are static; what they show comes through the API with the tab's token.
        "getJoinPage": "200 401 200 200 200 200 200 200 200 401 200",
        "getJoinPageWithCode": "200 401 200 200 200 200 200 200 200 401 200",
        "getTablePage": "200 401 200 200 200 200 200 200 200 401 200",
        "getHealth": "200 401 200 200 200 200 200 200 200 401 200",
        "getServer": "200 401 200 200 200 200 200 200 200 401 200",
        "getMetrics": "401 401 403 403 403 403 200 403 403 401 403",
        "getSharePage": "200 401 200 200 200 200 200 200 200 401 200",
        "getShare": "200 401 200 200 200 200 200 200 200 401 200",
        "getSharePicture": "200 401 200 200 200 200 200 200 200 401 200",
        // Red's private pack: its members and operators read it; only red's owners and operators change it.
        "listPacks": "200 401 200 200 200 200 200 200 200 401 200",
        "getPack": "404 401 404 404 200 200 200 404 404 401 200",
        "getPackDocument": "404 401 404 404 200 200 200 404 404 401 200",
        "setPackVisibility": "401 401 404 404 403 200 200 403 403 401 403",
        "deletePack": "401 401 404 404 403 204 204 403 403 401 403",
        // Uploading the sample scifi pack: blue has it (200 unchanged), red imports it (201); participants may not.
        "uploadPack": "401 401 200 200 201 201 201 403 403 401 201",
        // Predicting an upload's name is a member's, like the upload.
        "predictPackName": "401 401 200 200 200 200 200 403 403 401 200",
        // An import's progress is its group's (BrowseListingTests); an id no import holds is 404 to every member.
        "getImportProgress": "401 401 404 404 404 404 404 403 403 401 404",
        "cancelImport": "401 401 404 404 404 404 404 403 403 401 404",
        "listAssets": "200 401 200 200 200 200 200 200 200 401 200",
        "getAssetDescriptor": "404 401 404 404 200 200 200 200 404 401 200",
        // A variant of red's pack: red, operators, and the participant whose table shows it.
        "getBlob": "404 401 404 404 200 200 200 200 404 401 200",
        "headBlob": "404 401 404 404 200 200 200 200 404 401 200",
        "readBlobBatch": "200 401 200 200 200 200 200 200 200 401 200",
        "findMissingBlobs": "200 401 200 200 200 200 200 200 200 401 200",
        "putBlob": "401 401 201 201 201 201 201 403 403 401 201",
        // Red's session, hosted by red's owner.
        "createSession": "401 401 409 409 201 201 201 403 403 401 201",
        "listSessions": "401 401 200 200 200 200 200 403 403 401 200",
        "joinSession": "200 401 200 200 200 200 200 200 200 401 200",
        "getSession": "401 401 404 404 200 200 200 200 404 401 200",
        // In router mode (no upgrade), the route answers once the caller may open the channel; LiveSocketTests upgrade.
        "sessionLiveChannel": "401 401 404 404 200 200 200 200 404 401 200",
        "replaceSessionMap": "401 401 404 404 403 200 200 403 404 401 403",
        "rotateJoinCode": "401 401 404 404 403 200 200 403 404 401 403",
        // The dice: whoever sees the session reads the commitment; its host (or an operator) reveals the seed.
        "getSessionDice": "401 401 404 404 200 200 200 200 404 401 200",
        "getSessionDiceChoices": "401 401 404 404 200 200 200 200 404 401 200",
        "revealSessionDice": "401 401 404 404 403 200 200 403 404 401 403",
        // Each group's dice statistics are its members' (blue's are its own, empty), and the players' of its sessions.
        "getDiceStatistics": "401 401 200 200 200 200 200 403 403 401 200",
        "getSessionDiceStatistics": "401 401 404 404 200 200 200 200 404 401 200",
        // The participant column is the participant named: leaving is removing oneself.
        "removeParticipant": "401 401 404 404 403 204 204 204 404 401 403",
        "endSession": "401 401 404 404 403 204 204 403 404 401 403",
        // Saved maps are the group's; an operator's group is staff.
        "listMaps": "401 401 200 200 200 200 200 403 403 401 200",
        "saveMap": "401 401 409 409 201 201 201 403 403 401 201",
        "loadMap": "401 401 404 404 200 200 404 403 403 401 200",
        "deleteMap": "401 401 404 404 204 204 404 403 403 401 204",
        // Red's owner's own upload, ref and share: private to that member.
        "listUploads": "401 401 200 200 200 200 200 200 200 401 200",
        "uploadPicture": "401 401 201 201 201 200 201 201 201 401 201",
        "getUpload": "401 401 404 404 404 200 404 404 404 401 404",
        "forgetUpload": "401 401 404 404 404 204 404 404 404 401 404",
        "listRefs": "401 401 200 200 200 200 200 403 403 401 200",
        "getRef": "401 401 404 404 404 200 404 403 403 401 404",
        "moveRef": "401 401 404 404 200 200 200 403 403 401 200",
        "deleteRef": "401 401 404 404 404 204 404 403 403 401 404",
        "createShare": "401 401 404 404 404 201 201 403 403 401 404",
        "listShares": "401 401 200 200 200 200 200 403 403 401 200",
        "revokeShare": "401 401 403 403 403 204 204 403 403 401 403",
        // A group's members: its owners (and operators, for their own group) list, invite and revoke.
        "listTokens": "401 401 200 403 403 200 200 403 403 401 403",
        "revokeToken": "401 401 404 403 403 204 404 403 403 401 403",
        "createInvite": "401 401 201 403 403 201 201 403 403 401 403",
        // Red's pending invitation: listed and cancelled by red's owners (an operator's group is staff).
        "listInvites": "401 401 200 403 403 200 200 403 403 401 403",
        "cancelInvite": "401 401 404 403 403 204 404 403 403 401 403",
        // A group's members (identities; tokens are their devices): its owners list them, change a plain member's role
        // and remove them (an operator's group is staff).
        "listMembers": "401 401 200 403 403 200 200 403 403 401 403",
        "changeMemberRole": "401 401 404 403 403 200 404 403 403 401 403",
        "removeMember": "401 401 404 403 403 204 404 403 403 401 403",
        "acceptInvite": "201 401 201 201 201 201 201 201 201 401 201",
    ]

    /// The world every cell starts from: where it lives, the callers' tokens and the names of red's things.
    struct World: Sendable {
        var path: String
        var tokens: [Caller: String]
        var ids: [String: String]
        var bodies: [String: [UInt8]]
    }

    /// A request for an operation in `world`: method, path and query, body and its media type.
    static func request(_ operation: String, _ world: World) -> (HTTPRequest.Method, String, [UInt8]?, String)? {
        let id = world.ids
        func json(_ object: Any) -> [UInt8] { Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data()) }
        let map: [String: Any] = [
            "schema": "hoard.map/v1", "grid": ["width": 8, "height": 6], "background": ["tiles": [] as [Any]],
            "drawing": ["walls": [] as [Any], "strokes": [] as [Any]], "objects": [] as [Any],
            "tokens": [["id": "t9", "asset": id["asset"] ?? "", "x": 1, "y": 1]],
        ]
        let pack = "/v1/packs/\(id["pack"] ?? "")"
        let session = "/v1/sessions/\(id["session"] ?? "")"
        switch operation {
        case "getWebPage": return (.get, "/", nil, "")
        case "getWebFile": return (.get, "/web/app.js", nil, "")
        case "getJoinPage": return (.get, "/join", nil, "")
        case "getJoinPageWithCode": return (.get, "/join/\(id["code"] ?? "")", nil, "")
        case "getTablePage": return (.get, "/table/\(id["session"] ?? "")", nil, "")
        case "getSharePage": return (.get, "/s/\(id["share"] ?? "")", nil, "")
        case "getHealth": return (.get, "/healthz", nil, "")
        case "getServer": return (.get, "/v1/server", nil, "")
        case "getMetrics": return (.get, "/metrics", nil, "")
        case "listAssets": return (.get, "/v1/assets?pack=\(id["pack"] ?? "")", nil, "")
        case "getAssetDescriptor": return (.get, "/v1/assets/\(id["asset"] ?? "")", nil, "")
        case "readBlobBatch": return (.post, "/v1/blobs/batch", json(["digests": [id["variant"] ?? ""]]), "application/json")
        case "findMissingBlobs": return (.post, "/v1/blobs/missing", json(["digests": [id["variant"] ?? ""]]), "application/json")
        case "getBlob": return (.get, "/v1/blobs/\(id["variant"] ?? "")", nil, "")
        case "headBlob": return (.head, "/v1/blobs/\(id["variant"] ?? "")", nil, "")
        case "putBlob": return (.put, "/v1/blobs/\(id["fresh"] ?? "")", world.bodies["fresh"], "application/octet-stream")
        case "createInvite": return (.post, "/v1/invites", json(["role": "member"]), "application/json")
        case "listInvites": return (.get, "/v1/invites", nil, "")
        case "cancelInvite": return (.delete, "/v1/invites/\(id["inviteId"] ?? "")", nil, "")
        case "acceptInvite": return (.post, "/v1/invites/accept", json(["code": id["invite"] ?? "", "name": "Cid"]), "application/json")
        case "listMaps": return (.get, "/v1/maps", nil, "")
        case "saveMap": return (.post, "/v1/maps", json(["name": "attic", "map": map]), "application/json")
        case "deleteMap": return (.delete, "/v1/maps/cellar", nil, "")
        case "loadMap": return (.get, "/v1/maps/cellar", nil, "")
        case "listPacks": return (.get, "/v1/packs", nil, "")
        case "uploadPack": return (.post, "/v1/packs", world.bodies["archive"], "application/zip")
        case "predictPackName": return (.post, "/v1/pack-name", json(["fileName": "attic.zip"]), "application/json")
        case "getImportProgress": return (.get, "/v1/imports/no-such-import", nil, "")
        case "cancelImport": return (.delete, "/v1/imports/no-such-import", nil, "")
        case "deletePack": return (.delete, pack, nil, "")
        case "getPack": return (.get, pack, nil, "")
        case "setPackVisibility": return (.patch, pack, json(["isPublic": true]), "application/json")
        case "getPackDocument": return (.get, pack + "/documents/LICENSE.md", nil, "")
        case "listRefs": return (.get, "/v1/refs", nil, "")
        case "deleteRef": return (.delete, "/v1/refs/last", nil, "")
        case "getRef": return (.get, "/v1/refs/last", nil, "")
        case "moveRef": return (.put, "/v1/refs/next", json(["digest": id["asset"] ?? ""]), "application/json")
        case "createSession": return (.post, "/v1/sessions", json(["name": "Vault", "map": map]), "application/json")
        case "listSessions": return (.get, "/v1/sessions", nil, "")
        case "joinSession": return (.post, "/v1/sessions/join", json(["code": id["code"] ?? "", "name": "Zed"]), "application/json")
        case "endSession": return (.delete, session, nil, "")
        case "getSession": return (.get, session, nil, "")
        case "rotateJoinCode": return (.post, session + "/code", nil, "")
        case "getSessionDice": return (.get, session + "/dice", nil, "")
        case "getSessionDiceChoices": return (.get, session + "/dice/choices", nil, "")
        case "revealSessionDice": return (.post, session + "/dice/reveal", nil, "")
        case "getDiceStatistics": return (.get, "/v1/dice/statistics", nil, "")
        case "getSessionDiceStatistics": return (.get, session + "/dice/statistics", nil, "")
        case "sessionLiveChannel": return (.get, session + "/live", nil, "")
        case "replaceSessionMap": return (.put, session + "/map", json(map), "application/json")
        case "removeParticipant": return (.delete, session + "/participants/\(id["participant"] ?? "")", nil, "")
        case "createShare": return (.post, "/v1/shares", json(["blob": id["upload"] ?? ""]), "application/json")
        case "listShares": return (.get, "/v1/shares", nil, "")
        case "getShare": return (.get, "/v1/shares/\(id["share"] ?? "")", nil, "")
        case "revokeShare": return (.delete, "/v1/shares/\(id["share"] ?? "")", nil, "")
        case "getSharePicture": return (.get, "/v1/shares/\(id["share"] ?? "")/picture", nil, "")
        case "listTokens": return (.get, "/v1/tokens", nil, "")
        case "revokeToken": return (.delete, "/v1/tokens/\(id["memberToken"] ?? "")", nil, "")
        case "listMembers": return (.get, "/v1/members", nil, "")
        case "changeMemberRole": return (.patch, "/v1/members/\(id["plainMember"] ?? "")", json(["role": "owner"]), "application/json")
        case "removeMember": return (.delete, "/v1/members/\(id["plainMember"] ?? "")", nil, "")
        case "listUploads": return (.get, "/v1/uploads", nil, "")
        case "uploadPicture": return (.post, "/v1/uploads", world.bodies["picture"], "image/png")
        case "forgetUpload": return (.delete, "/v1/uploads/\(id["upload"] ?? "")", nil, "")
        case "getUpload": return (.get, "/v1/uploads/\(id["upload"] ?? "")", nil, "")
        default: return nil
        }
    }

    /// Builds the world once, in a fixture's data directory.
    static func makeWorld(_ fixture: Fixture) async throws -> World {
        let archive = fixture.path + "/relics.zip"
        try Python.makePack(at: archive, name: "relics")
        try Python.run(
            """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "a") as z:
                z.writestr("LICENSE.md", "# Licence\\nCC0-1.0\\n")
            """, [archive])
        var options = Importer.Options()
        options.group = "red"
        _ = try await fixture.hoard.importPack(at: archive, options: options)
        let asset = try #require(try fixture.hoard.catalog.assets(pack: "relics").first)
        let variant = try #require(asset.variants.first?.digest)
        let fresh = Array("bytes nobody has stored yet \(UUID())".utf8)
        let otherMember = try fixture.hoard.createToken(group: "blue", label: "blue plain member", role: .member)
        let picture = try await fixture.freshPicture()
        let red = try #require(try fixture.hoard.catalog.group(named: "red")?.id)
        let memberToken = try #require(try fixture.hoard.catalog.tokens(groupId: red).first { $0.role == "member" })
        let ids = try await fixture.run { client in
            let room = try await client.makeSession(token: fixture.red, asset: asset.digest.description)
            let other = try await client.makeSession(token: fixture.red, name: "Other room")
            let participant = try await client.joinSession(code: room.code, name: "Ann")
            let removed = try await client.joinSession(code: room.code, name: "Rob")
            let otherParticipant = try await client.joinSession(code: other.code, name: "Oz")
            let shown = try await client.json(.get, "/v1/sessions/\(room.id)", token: fixture.red)
            let people = try #require(shown.json["participants"] as? [[String: Any]])
            let ann = try #require(people.first { $0["name"] as? String == "Ann" }?["id"] as? String)
            let rob = try #require(people.first { $0["name"] as? String == "Rob" }?["id"] as? String)
            #expect(try await client.json(.delete, "/v1/sessions/\(room.id)/participants/\(rob)", token: fixture.red).status == .noContent)
            let uploaded = try await client.uploadPicture(picture, token: fixture.red)
            let digest = try #require(uploaded.json["digest"] as? String)
            let share = try await client.json(.post, "/v1/shares", token: fixture.red, body: ["blob": digest])
            #expect(try await client.json(.put, "/v1/refs/last", token: fixture.red, body: ["digest": asset.digest.description]).status.code < 300)
            let map: [String: Any] = ["schema": "hoard.map/v1", "grid": ["width": 4, "height": 4]]
            #expect(try await client.json(.post, "/v1/maps", token: fixture.red, body: ["name": "cellar", "map": map]).status == .created)
            let named = try await client.json(.post, "/v1/invites", token: fixture.red, body: ["role": "member", "name": "Mallory"])
            let impostor = try await client.json(
                .post, "/v1/invites/accept", body: ["code": try #require(named.json["code"] as? String), "name": "red member"])
            let invite = try await client.json(.post, "/v1/invites", token: fixture.red, body: ["role": "member"])
            return [
                "impostorToken": try #require(impostor.json["token"] as? String),
                "session": room.id, "code": room.code, "participant": ann, "upload": digest,
                "share": try #require(share.json["id"] as? String), "invite": try #require(invite.json["code"] as? String),
                "inviteId": try #require(invite.json["id"] as? String),
                "participantToken": participant, "removedToken": removed, "otherParticipantToken": otherParticipant,
            ]
        }
        var world = World(path: fixture.path, tokens: [:], ids: ids, bodies: ["fresh": fresh, "picture": picture])
        world.ids["pack"] = "relics"
        world.ids["asset"] = asset.digest.description
        world.ids["variant"] = variant.description
        world.ids["fresh"] = BlobHasher.digest(of: fresh).description
        world.ids["memberToken"] = String(try #require(memberToken.id))
        world.ids["plainMember"] = String(try #require(memberToken.memberId))
        world.bodies["archive"] = Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.scifi))))
        world.tokens = [
            .garbage: "hoard_not-a-token", .otherOwner: fixture.blue, .otherMember: otherMember, .member: fixture.redMember,
            .owner: fixture.red, .operator: fixture.admin, .participant: ids["participantToken"] ?? "",
            .otherParticipant: ids["otherParticipantToken"] ?? "", .removed: ids["removedToken"] ?? "",
            .impostor: ids["impostorToken"] ?? "",
        ]
        return world
    }

    /// A copy of the world's data directory, for one run of requests.
    static func copy(_ world: World) throws -> String {
        let path = NSTemporaryDirectory() + "hoard-matrix-" + UUID().uuidString.lowercased()
        try FileManager.default.copyItem(atPath: world.path, toPath: path)
        return path
    }

    /// Every caller's status for `operation`, in `Caller` order ("401 404 …"); nil when no request is written for it.
    /// One copy of the world and one application serve callers until a write succeeds; the next caller gets a fresh copy.
    static func answers(to operation: String, in world: World, _ fixture: Fixture) async throws -> String? {
        guard let (method, uri, body, mediaType) = Self.request(operation, world) else {
            Issue.record("no request is written for \(operation): add one to AuthorizationMatrixTests.request")
            return nil
        }
        var statuses: [String] = []
        while statuses.count < Caller.allCases.count {
            let copy = try Self.copy(world)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            var configuration = fixture.configuration
            configuration.dataDirectory = copy
            let app = try await buildApplication(configuration)
            let callers = Array(Caller.allCases.dropFirst(statuses.count))
            statuses += try await app.test(.router) { client in
                var answered: [String] = []
                for caller in callers {
                    var headers: HTTPFields = [:]
                    if let token = world.tokens[caller] { headers[.authorization] = "Bearer \(token)" }
                    if body != nil { headers[.contentType] = mediaType }
                    let status = try await client.execute(
                        uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) }
                    ) { $0.status.code }
                    answered.append(String(status))
                    if method != .get, method != .head, (200..<300).contains(status) { break }
                }
                return answered
            }
        }
        return statuses.joined(separator: " ")
    }

    @Test func everyOperationAnswersEveryKindOfCallerAsWrittenDown() async throws {
        let document = try OpenAPIAgreementTests.document()
        var operations: [String] = []
        for (_, item) in try #require(document["paths"] as? [String: Any]) {
            for method in OpenAPIAgreementTests.httpMethods {
                if let operation = (item as? [String: Any])?[method] as? [String: Any], let id = operation["operationId"] as? String {
                    operations.append(id)
                }
            }
        }
        operations.sort()
        #expect(Set(Self.expected.keys).subtracting(operations).isEmpty, "rows for operations openapi.yaml does not have")
        try await Fixture.with(packs: true) { fixture in
            let world = try await Self.makeWorld(fixture)
            // Operations are independent (each has copies of the world of its own): eight at a time, so this test, the
            // suite's longest, uses the cores the others leave when they are done.
            var answers: [String: String] = [:]
            try await withThrowingTaskGroup(of: (String, String?).self) { group in
                var next = operations.makeIterator()
                func start() {
                    guard let operation = next.next() else { return }
                    group.addTask { (operation, try await Self.answers(to: operation, in: world, fixture)) }
                }
                for _ in 0..<8 { start() }
                while let (operation, answer) = try await group.next() {
                    answers[operation] = answer
                    start()
                }
            }
            var table = ""
            for operation in operations {
                let answer = answers[operation] ?? "?"
                table += "        \"\(operation)\": \"\(answer)\",\n"
                #expect(Self.expected[operation] != nil, "no row for \(operation): write down who may do it (now: \(answer))")
                if let row = Self.expected[operation] {
                    #expect(row == answer, "\(operation): expected \(row), answered \(answer)")
                }
            }
            print(
                "AUTHORIZATION MATRIX (none garbage otherOwner otherMember member owner operator participant otherParticipant removed "
                    + "impostor)\n" + table)
        }
    }
}
