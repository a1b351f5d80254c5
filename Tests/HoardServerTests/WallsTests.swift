import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 43 through the API: names a redeemer cannot take, invitations that are listed, cancelled and die with their
/// inviter, pack names found under the one text rule, and revocation that ends a live socket.
@Suite(.timeLimit(.minutes(3))) struct WallsTests {
    static func code(_ answer: (status: HTTPResponse.Status, json: [String: Any])) -> String? {
        (answer.json["error"] as? [String: Any])?["code"] as? String
    }

    @Test func aRedeemerCannotNameThemselvesAsSomeoneOfTheGroup() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                let invite = try await client.json(.post, "/v1/invites", token: fixture.red, body: ["role": "member"])
                let code = try #require(invite.json["code"] as? String)
                // The owner's own name, in any case or width: 409 NAME_TAKEN, and the invitation is kept.
                for taken in ["red member", "RED MEMBER", "ｒｅｄ ｍｅｍｂｅｒ", "  red member "] {
                    let answer = try await client.json(.post, "/v1/invites/accept", body: ["code": code, "name": taken])
                    #expect(answer.status == .conflict && Self.code(answer) == "NAME_TAKEN", "\(taken)")
                }
                // Invisible and control characters are refused, not cut off or kept.
                for hidden in ["red\u{AD} member", "red member\u{0}x", "\u{202E}rebmem der", "red\u{1B}[0m member", "red\u{200B} member"] {
                    let answer = try await client.json(.post, "/v1/invites/accept", body: ["code": code, "name": hidden])
                    #expect(answer.status == .badRequest, "\(hidden.unicodeScalars.map { String($0.value, radix: 16) })")
                }
                let long = try await client.json(.post, "/v1/invites/accept", body: ["code": code, "name": "e" + String(repeating: "\u{301}", count: 65)])
                #expect(long.status == .badRequest, "64 characters are 64 Unicode scalars")
                let accepted = try await client.json(.post, "/v1/invites/accept", body: ["code": code, "name": "Cid"])
                #expect(accepted.status == .created)
            }
        }
    }

    @Test func invitationsAreListedCancelledAndDieWithTheirInviter() async throws {
        try await Fixture.with(packs: false) { fixture in
            let carl = try fixture.hoard.createToken(group: "red", label: "carl", role: .owner)
            try await fixture.run { client in
                let carls = try await client.json(.post, "/v1/invites", token: carl, body: ["role": "owner"])
                let (carlsId, carlsCode) = (try #require(carls.json["id"] as? String), try #require(carls.json["code"] as? String))
                let listed = try await client.json(.get, "/v1/invites", token: fixture.red)
                let pending = try #require(listed.json["invites"] as? [[String: Any]])
                #expect(pending.map { $0["id"] as? String } == [carlsId] && pending.first?["createdBy"] as? String == "carl")
                #expect(pending.first?["role"] as? String == "owner" && pending.first?["code"] == nil, "never the code")
                #expect(try await client.json(.get, "/v1/invites", token: fixture.redMember).status == .forbidden)
                #expect(try await client.json(.get, "/v1/invites", token: fixture.blue).json["invites"] as? [Any] != nil)
                #expect((try await client.json(.get, "/v1/invites", token: fixture.blue).json["invites"] as? [Any])?.isEmpty == true)
                // Carl is revoked: carl's owner invitation dies with carl.
                let tokens = try #require(try await client.json(.get, "/v1/tokens", token: fixture.red).json["tokens"] as? [[String: Any]])
                let carlId = try #require(tokens.first { $0["name"] as? String == "carl" }?["id"] as? Int)
                #expect(try await client.json(.delete, "/v1/tokens/\(carlId)", token: fixture.red).status == .noContent)
                #expect((try await client.json(.get, "/v1/invites", token: fixture.red).json["invites"] as? [Any])?.isEmpty == true)
                let redeemed = try await client.json(.post, "/v1/invites/accept", body: ["code": carlsCode, "name": "mallory"])
                #expect(redeemed.status == .notFound, "no way back for carl")
                // An owner cancels one of the group's invitations; another group cannot.
                let gms = try await client.json(.post, "/v1/invites", token: fixture.red, body: ["role": "member"])
                let (gmsId, gmsCode) = (try #require(gms.json["id"] as? String), try #require(gms.json["code"] as? String))
                #expect(try await client.json(.delete, "/v1/invites/\(gmsId)", token: fixture.blue).status == .notFound)
                #expect(try await client.json(.delete, "/v1/invites/\(gmsId)", token: fixture.redMember).status == .forbidden)
                #expect(try await client.json(.delete, "/v1/invites/\(gmsId)", token: fixture.red).status == .noContent)
                #expect(try await client.json(.delete, "/v1/invites/\(gmsId)", token: fixture.red).status == .notFound)
                #expect(try await client.json(.post, "/v1/invites/accept", body: ["code": gmsCode, "name": "Ann"]).status == .notFound)
            }
        }
    }

    @Test func packNamesThatLookAlikeAreOneNameAndActionsFindTheSamePack() async throws {
        try await Fixture.with(packs: false) { fixture in
            for name in ["Émoi", "Café"] {
                let archive = fixture.path + "/\(UUID().uuidString).zip"
                try Python.makePack(at: archive, name: name)
                var options = Importer.Options()
                options.group = "red"
                _ = try await fixture.hoard.importPack(at: archive, options: options)
            }
            try await fixture.run { client in
                for alike in ["émoi", "e\u{301}MOI"] {
                    let archive = fixture.path + "/\(UUID().uuidString).zip"
                    try Python.makePack(at: archive, name: alike, version: "2.0.0")
                    let body = Array(try Data(contentsOf: URL(fileURLWithPath: archive)))
                    let answer = try await client.execute(
                        uri: "/v1/packs", method: .post, headers: auth(fixture.red, [.contentType: "application/zip"]), body: buffer(body)
                    ) { $0 }
                    #expect(answer.status == .conflict, "\(alike) beside Émoi")
                }
                // Cafe + combining acute is Café: a new version of it, not a second pack.
                let archive = fixture.path + "/cafe.zip"
                try Python.makePack(at: archive, name: "Cafe\u{301}", version: "2.0.0")
                let body = Array(try Data(contentsOf: URL(fileURLWithPath: archive)))
                let cafe = try await client.execute(
                    uri: "/v1/packs", method: .post, headers: auth(fixture.red, [.contentType: "application/zip"]), body: buffer(body)
                ) { $0.status }
                #expect(cafe == .created)
                #expect(try fixture.hoard.catalog.packs().map(\.name).sorted() == ["Café", "Émoi"])
                // PATCH and DELETE of émoi find Émoi, the one pack of that name.
                let patched = try await client.json(.patch, "/v1/packs/%C3%A9moi", token: fixture.red, body: ["isPublic": true])
                #expect(patched.status == .ok && patched.json["name"] as? String == "Émoi")
                #expect(try await client.json(.delete, "/v1/packs/%C3%89MOI", token: fixture.red).status == .noContent)
                #expect(try fixture.hoard.catalog.packs().map(\.name) == ["Café"])
            }
        }
    }

    @Test func aRevokedHostsLiveSocketClosesWith4401() async throws {
        try await LiveChannelTests.withSession { live in
            let (client, fixture, session) = (live.client, live.fixture, live.session)
            let coOwner = try Hoard(dataDirectory: fixture.directory).createToken(group: "table", label: "co", role: .owner)
            let socket = try await RawWebSocket.open(port: live.port, session: session, token: fixture.hostToken)
            let tokens = try #require(try await client.json(.get, "/v1/tokens", token: coOwner).json["tokens"] as? [[String: Any]])
            let gm = try #require(tokens.first { $0["name"] as? String == "gm" }?["id"] as? Int)
            #expect(try await client.json(.delete, "/v1/tokens/\(gm)", token: coOwner).status == .noContent)
            #expect(try await socket.closeCode() == 4401)
            #expect(try await client.json(.get, "/v1/sessions/\(session)", token: fixture.hostToken).status == .unauthorized)
            // The participant's socket is theirs, not the host's: it stays.
            #expect(try await client.json(.get, "/v1/sessions/\(session)", token: live.participant).status == .ok)
        }
    }

    @Test func aShareOfAnotherGroupsPackEndsWhenThatGroupUnpublishesIt() async throws {
        try await Fixture.with(packs: true) { fixture in
            let asset = try #require(try fixture.assets(Fixture.dungeon).first).digest.description
            try await fixture.run { client in
                #expect(try await client.json(.patch, "/v1/packs/\(Fixture.dungeon)", token: fixture.red, body: ["isPublic": true]).status == .ok)
                let shared = try await client.json(.post, "/v1/shares", token: fixture.blue, body: ["asset": asset])
                let id = try #require(shared.json["id"] as? String)
                #expect(try await client.json(.get, "/v1/shares/\(id)").status == .ok)
                #expect(try await client.execute(uri: "/v1/shares/\(id)/picture", method: .get) { $0.status } == .ok)
                #expect(try await client.json(.patch, "/v1/packs/\(Fixture.dungeon)", token: fixture.red, body: ["isPublic": false]).status == .ok)
                #expect(try await client.json(.get, "/v1/shares/\(id)").status == .notFound)
                #expect(try await client.execute(uri: "/v1/shares/\(id)/picture", method: .get) { $0.status } == .notFound)
                #expect(try await client.json(.delete, "/v1/shares/\(id)", token: fixture.blue).status == .noContent, "its maker still revokes it")
            }
        }
    }
}
