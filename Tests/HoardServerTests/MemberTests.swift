import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import Hummingbird
import HummingbirdTesting
import Testing

/// Members are identities (issue 43): a device named like the owner owns nothing of theirs; owners list members,
/// change their role and remove them, and a changed role or a removal ends their sockets and the invitations they
/// may no longer make.
@Suite(.timeLimit(.minutes(3))) struct MemberTests {
    /// Redeems `invite` (a POST /v1/invites body, made by `owner`) under `name`; the new token.
    static func redeem(
        _ client: some TestClientProtocol, _ invite: [String: Any], by owner: String, as name: String
    ) async throws -> (token: String, member: Int) {
        let made = try await client.json(.post, "/v1/invites", token: owner, body: invite)
        #expect(made.status == .created, "\(made.json)")
        let code = try #require(made.json["code"] as? String)
        let accepted = try await client.json(.post, "/v1/invites/accept", body: ["code": code, "name": name])
        #expect(accepted.status == .created, "\(accepted.json)")
        return (try #require(accepted.json["token"] as? String), try #require(accepted.json["member"] as? Int))
    }

    /// The group's members as `owner` lists them, by name.
    static func members(_ client: some TestClientProtocol, _ owner: String) async throws -> [String: [String: Any]] {
        let listed = try await client.json(.get, "/v1/members", token: owner)
        let members = try #require(listed.json["members"] as? [[String: Any]])
        return Dictionary(members.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    }

    @Test func aMemberWhoNamedTheirDeviceLikeTheOwnerGetsNoneOfTheOwnersThings() async throws {
        try await Fixture.with(packs: true) { fixture in
            let asset = try fixture.assetDigest(Fixture.dungeon)
            let picture = try await fixture.freshPicture()
            try await fixture.run { client in
                // The owner ("red member") uploads, points a ref, shares and hosts a private session.
                let upload = try #require(try await client.uploadPicture(picture, token: fixture.red).json["digest"] as? String)
                #expect(try await client.json(.put, "/v1/refs/last", token: fixture.red, body: ["digest": asset]).status == .ok)
                let share = try #require(try await client.json(.post, "/v1/shares", token: fixture.red, body: ["blob": upload]).json["id"] as? String)
                let session = try await client.makeSession(token: fixture.red, asset: asset)
                // A member invitation names its member; the redeemer calls the device by the owner's name.
                let (impostor, member) = try await Self.redeem(client, ["role": "member", "name": "Mallory"], by: fixture.red, as: "red member")
                let members = try await Self.members(client, fixture.red)
                #expect(members["Mallory"]?["id"] as? Int == member && members["Mallory"]?["role"] as? String == "member")
                #expect(members["red member"]?["id"] as? Int != member)

                #expect((try await client.json(.get, "/v1/uploads", token: impostor).json["uploads"] as? [Any])?.isEmpty == true)
                #expect(try await client.fetch("/v1/uploads/\(upload)", token: impostor).status == .notFound)
                #expect(try await client.fetch("/v1/blobs/\(upload)", token: impostor).status == .notFound)
                #expect((try await client.json(.get, "/v1/refs", token: impostor).json["refs"] as? [Any])?.isEmpty == true)
                #expect(try await client.fetch("/v1/refs/last", token: impostor).status == .notFound)
                #expect((try await client.json(.get, "/v1/shares", token: impostor).json["shares"] as? [Any])?.isEmpty == true)
                #expect(try await client.json(.delete, "/v1/shares/\(share)", token: impostor).status == .forbidden)
                #expect(try await client.json(.post, "/v1/sessions/\(session.id)/code", token: impostor).status == .forbidden)
                let shown = try await client.json(.get, "/v1/sessions/\(session.id)", token: impostor)
                let seat = try #require(shown.json["you"] as? [String: Any])
                #expect(seat["host"] as? Bool == false && seat["joinCode"] == nil, "not the host: no join code")
                #expect(shown.json["host"] as? String == "red member", "the host is shown by name")
                #expect(try await client.json(.delete, "/v1/sessions/\(session.id)", token: impostor).status == .forbidden)
                // The owner still has all of it.
                #expect(try await client.fetch("/v1/refs/last", token: fixture.red).status == .ok)
                #expect(try await client.json(.post, "/v1/sessions/\(session.id)/code", token: fixture.red).status == .ok)
                #expect(try await client.json(.delete, "/v1/shares/\(share)", token: fixture.red).status == .noContent)
            }
        }
    }

    @Test func aDeviceInvitationAddsATokenToTheMemberItNames() async throws {
        try await Fixture.with(packs: true) { fixture in
            let asset = try fixture.assetDigest(Fixture.dungeon)
            try await fixture.run { client in
                #expect(try await client.json(.put, "/v1/refs/last", token: fixture.redMember, body: ["digest": asset]).status == .ok)
                let plain = try #require(try await Self.members(client, fixture.red)["red plain member"]?["id"] as? Int)
                let (tablet, member) = try await Self.redeem(client, ["member": plain], by: fixture.red, as: "tablet")
                #expect(member == plain)
                #expect(try await client.fetch("/v1/refs/last", token: tablet).status == .ok, "the member's ref, on their new device")
                #expect(try await Self.members(client, fixture.red)["red plain member"]?["devices"] as? Int == 2)
                let listed = try #require(try await client.json(.get, "/v1/tokens", token: fixture.red).json["tokens"] as? [[String: Any]])
                #expect(listed.first { $0["name"] as? String == "tablet" }?["member"] as? Int == plain)
                // No device of another group's member, not both kinds at once, no new member of a name taken.
                let staffGroup = try #require(try fixture.hoard.catalog.group(named: "staff")?.id)
                let staff = try #require(try fixture.hoard.catalog.tokens(groupId: staffGroup).first?.memberId)
                #expect(try await client.json(.post, "/v1/invites", token: fixture.red, body: ["member": staff]).status == .notFound)
                let both = try await client.json(.post, "/v1/invites", token: fixture.red, body: ["member": plain, "name": "x"])
                #expect(both.status == .badRequest)
                let taken = try await client.json(.post, "/v1/invites", token: fixture.red, body: ["name": "RED MEMBER"])
                #expect(taken.status == .conflict && WallsTests.code(taken) == "NAME_TAKEN")
            }
        }
    }

    @Test func ownersChangeRolesWithinTheirCeilingAndRemoveMembers() async throws {
        try await Fixture.with(packs: false) { fixture in
            let admin = try fixture.hoard.createToken(group: "red", label: "root", role: .operator)
            try await fixture.run { client in
                let members = try await Self.members(client, fixture.red)
                let (plain, root) = (try #require(members["red plain member"]?["id"] as? Int), try #require(members["root"]?["id"] as? Int))
                #expect(members["red member"]?["isCaller"] as? Bool == true && members["root"]?["role"] as? String == "operator")
                #expect(try await client.json(.get, "/v1/members", token: fixture.redMember).status == .forbidden)
                #expect(try await client.json(.patch, "/v1/members/\(plain)", token: fixture.redMember, body: ["role": "owner"]).status == .forbidden)
                #expect(try await client.json(.patch, "/v1/members/\(plain)", token: fixture.blue, body: ["role": "owner"]).status == .notFound)
                #expect(try await client.json(.patch, "/v1/members/\(plain)", token: fixture.red, body: ["role": "operator"]).status == .badRequest)
                #expect(try await client.json(.patch, "/v1/members/\(root)", token: fixture.red, body: ["role": "member"]).status == .forbidden)
                #expect(try await client.json(.delete, "/v1/members/\(root)", token: fixture.red).status == .forbidden)
                let promoted = try await client.json(.patch, "/v1/members/\(plain)", token: fixture.red, body: ["role": "owner"])
                #expect(promoted.status == .ok && promoted.json["role"] as? String == "owner")
                #expect(try await client.json(.get, "/v1/invites", token: fixture.redMember).status == .ok, "the new owner manages")
                #expect(try await client.json(.patch, "/v1/members/\(plain)", token: admin, body: ["role": "member"]).status == .ok)
                #expect(try await client.json(.get, "/v1/invites", token: fixture.redMember).status == .forbidden, "and no longer")
                #expect(try await client.json(.delete, "/v1/members/\(plain)", token: fixture.red).status == .noContent)
                #expect(try await client.json(.get, "/v1/refs", token: fixture.redMember).status == .unauthorized)
                #expect(try await Self.members(client, fixture.red)["red plain member"]?["devices"] as? Int == 0)
                #expect(try await client.json(.delete, "/v1/members/999999", token: fixture.red).status == .notFound)
            }
        }
    }

    @Test func demotingAMemberClosesTheirSocketsAndCancelsTheInvitationsTheyMade() async throws {
        try await LiveChannelTests.withSession { live in
            let (client, fixture, session) = (live.client, live.fixture, live.session)
            let coOwner = try Hoard(dataDirectory: fixture.directory).createToken(group: "table", label: "co", role: .owner)
            let made = try await client.json(.post, "/v1/invites", token: coOwner, body: ["role": "owner"])
            let code = try #require(made.json["code"] as? String)
            let socket = try await RawWebSocket.open(port: live.port, session: session, token: coOwner)
            let co = try #require(try await Self.members(client, fixture.hostToken)["co"]?["id"] as? Int)
            #expect(try await client.json(.patch, "/v1/members/\(co)", token: fixture.hostToken, body: ["role": "member"]).status == .ok)
            #expect(try await socket.closeCode() == 4401)
            #expect((try await client.json(.get, "/v1/invites", token: fixture.hostToken).json["invites"] as? [Any])?.isEmpty == true)
            #expect(try await client.json(.post, "/v1/invites/accept", body: ["code": code, "name": "late"]).status == .notFound)
            // Their token still works, as a member's; a socket opened again is admitted.
            #expect(try await client.json(.get, "/v1/sessions/\(session)", token: coOwner).status == .ok)
            #expect(try await client.json(.get, "/v1/invites", token: coOwner).status == .forbidden)
            let again = try await RawWebSocket.open(port: live.port, session: session, token: coOwner)
            // Removed: the socket closes and the token is gone.
            #expect(try await client.json(.delete, "/v1/members/\(co)", token: fixture.hostToken).status == .noContent)
            #expect(try await again.closeCode() == 4401)
            #expect(try await client.json(.get, "/v1/sessions/\(session)", token: coOwner).status == .unauthorized)
        }
    }
}
