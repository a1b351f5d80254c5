import Foundation
import HTTPTypes
import HoardCatalog
import HoardRepository
import HoardServer
import NIOCore
import HummingbirdTesting
import Testing

/// Roles stay in their group: members read and import, owners also manage the group's packs and members, operators
/// act on every group.
@Suite struct RoleTests {
    @Test func onlyOwnersAndOperatorsDeleteOrPublishAGroupsPacks() async throws {
        try await Fixture.with(packs: true) { fixture in
            try await fixture.run { client in
                let publish = { @Sendable (token: String) async throws -> HTTPResponse.Status in
                    try await client.execute(
                        uri: "/v1/packs/\(Fixture.dungeon)", method: .patch, headers: auth(token), body: ByteBuffer(string: #"{"isPublic":true}"#)
                    ) { $0.status }
                }
                let member = try await publish(fixture.redMember)
                #expect(member == .forbidden, "a member reads and imports, no more")
                let stranger = try await publish(fixture.blue)
                #expect(stranger == .notFound, "another group's owner does not see it")
                let owner = try await publish(fixture.red)
                #expect(owner == .ok)
                let strangerAgain = try await publish(fixture.blue)
                #expect(strangerAgain == .forbidden, "public now, but still red's")
                let memberDelete = try await client.json(.delete, "/v1/packs/\(Fixture.dungeon)", token: fixture.redMember).status
                #expect(memberDelete == .forbidden)
                let operatorDelete = try await client.json(.delete, "/v1/packs/\(Fixture.dungeon)", token: fixture.admin).status
                #expect(operatorDelete == .noContent)
            }
        }
    }

    @Test func anOwnerListsInvitesAndRevokesTheGroupsTokens() async throws {
        try await Fixture.with(packs: true) { fixture in
            let redOperator = try fixture.hoard.createToken(group: "red", label: "ops", role: .operator)
            try await fixture.run { client in
                // Listing: owners and operators only.
                for token in [fixture.redMember, fixture.blue] {
                    let listed = try await client.json(.get, "/v1/tokens", token: token)
                    #expect(listed.status == (token == fixture.blue ? .ok : .forbidden))
                }
                #expect(try await client.json(.get, "/v1/tokens").status == .unauthorized)
                let listed = try await client.json(.get, "/v1/tokens", token: fixture.red)
                let tokens = try #require(listed.json["tokens"] as? [[String: Any]])
                #expect(tokens.compactMap { $0["role"] as? String }.sorted() == ["member", "operator", "owner"])
                #expect(tokens.filter { $0["isCaller"] as? Bool == true }.compactMap { $0["role"] as? String } == ["owner"])
                #expect(!listed.json.description.contains("hoard_"), "no secret is listed")
                let blueTokens = try await client.json(.get, "/v1/tokens", token: fixture.blue).json["tokens"] as? [[String: Any]]
                #expect(blueTokens?.count == 1, "each owner sees their own group")

                // An invitation: one-time, member or owner, made by owners only.
                #expect(try await client.json(.post, "/v1/invites", token: fixture.redMember, body: [:]).status == .forbidden)
                #expect(try await client.json(.post, "/v1/invites", token: fixture.red, body: ["role": "operator"]).status == .badRequest)
                let invited = try await client.json(.post, "/v1/invites", token: fixture.red, body: ["role": "member", "hours": 2])
                #expect(invited.status == .created)
                let code = try #require(invited.json["code"] as? String)
                let accepted = try await client.json(.post, "/v1/invites/accept", body: ["code": code, "name": "Cid's tablet"])
                #expect(accepted.status == .created && accepted.json["group"] as? String == "red")
                let cid = try #require(accepted.json["token"] as? String)
                let packs = try await client.json(.get, "/v1/packs", token: cid)
                #expect((packs.json["packs"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == [Fixture.dungeon])
                let again = try await client.json(.post, "/v1/invites/accept", body: ["code": code, "name": "Eve"])
                #expect(again.status == .notFound, "used once")

                // Revoking: the token answers 401 at once; an operator's token is not an owner's to revoke.
                let all = try #require(try await client.json(.get, "/v1/tokens", token: fixture.red).json["tokens"] as? [[String: Any]])
                let cidId = try #require(all.first { $0["name"] as? String == "Cid's tablet" }?["id"] as? Int)
                let opsId = try #require(all.first { $0["role"] as? String == "operator" }?["id"] as? Int)
                #expect(try await client.json(.delete, "/v1/tokens/\(cidId)", token: fixture.redMember).status == .forbidden)
                #expect(try await client.json(.delete, "/v1/tokens/\(cidId)", token: fixture.blue).status == .notFound)
                #expect(try await client.json(.delete, "/v1/tokens/\(cidId)", token: fixture.red).status == .noContent)
                #expect(try await client.json(.get, "/v1/packs", token: cid).status == .unauthorized)
                #expect(try await client.json(.delete, "/v1/tokens/\(opsId)", token: fixture.red).status == .forbidden)
                #expect(try await client.json(.delete, "/v1/tokens/\(opsId)", token: redOperator).status == .noContent)
            }
        }
    }

    @Test func anExpiredInvitationGivesNoToken() throws {
        let catalog = try SQLiteCatalog.inMemory()
        let group = try catalog.createGroup(named: "red")
        try catalog.addInvite(InviteRecord(
            codeHash: "h", groupId: group.id ?? 0, role: .member, createdBy: "o", inviterId: nil, expiresAt: Date(timeIntervalSinceNow: 3600)))
        #expect(try catalog.redeemInvite(codeHash: "h", label: "late", secretHash: "s", now: Date(timeIntervalSinceNow: 7200)) == nil)
        #expect(try catalog.redeemInvite(codeHash: "h", label: "later", secretHash: "s") == nil, "and it is gone")
        #expect(try catalog.tokens(groupId: group.id ?? 0).isEmpty)
    }
}
