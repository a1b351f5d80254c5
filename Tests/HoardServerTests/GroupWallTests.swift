import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import NIOCore
import Testing

/// Access compares group ids, never names: two groups whose names differ only beyond ASCII case ("Éclair" and
/// "éclair", which an older catalog could hold) are two groups, each walled off from the other's private packs.
@Suite struct GroupWallTests {
    @Test func groupsWhoseNamesLookAlikeDoNotReachEachOthersPrivatePacks() async throws {
        try await Fixture.with(packs: false) { fixture in
            try fixture.hoard.catalog.createGroup(named: "Éclair")
            // The look-alike is written as an older catalog would have (the catalog now refuses to create it).
            try Python.run(
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute('INSERT INTO "group"(name, createdAt) SELECT ?, createdAt FROM "group" LIMIT 1', ("éclair",))
                db.commit()
                """, [fixture.path + "/catalog.sqlite"])
            try await Fixture.importPack(Fixture.dungeon, into: "Éclair", hoard: fixture.hoard)
            let owner = try fixture.hoard.createToken(group: "Éclair", label: "owner", isAdmin: false)
            let stranger = try fixture.hoard.createToken(group: "éclair", label: "stranger", isAdmin: false)
            let pack = "dungeon-basics"
            try await fixture.run { client in
                let owned = try await client.execute(uri: "/v1/packs", method: .get, headers: auth(owner)) { try $0.decode(PackList.self) }
                #expect(owned.packs.map(\.name) == [pack])
                let seen = try await client.execute(uri: "/v1/packs", method: .get, headers: auth(stranger)) { try $0.decode(PackList.self) }
                #expect(seen.packs.isEmpty)
                try await client.execute(uri: "/v1/packs/\(pack)", method: .get, headers: auth(stranger)) { $0.expectError(.notFound, "NOT_FOUND") }
                try await client.execute(uri: "/v1/packs/\(pack)", method: .delete, headers: auth(stranger)) { $0.expectError(.notFound, "NOT_FOUND") }
                let publish = ByteBuffer(string: #"{"isPublic":true}"#)
                try await client.execute(uri: "/v1/packs/\(pack)", method: .patch, headers: auth(stranger), body: publish) {
                    $0.expectError(.notFound, "NOT_FOUND")
                }
                // Importing into the other group by its name is refused, however the name is spelled.
                for name in ["%C3%89clair", "E%CC%81clair", "%C3%89CLAIR"] {
                    try await client.execute(
                        uri: "/v1/packs?group=\(name)&name=intruder", method: .post, headers: auth(stranger), body: ByteBuffer(string: "x")
                    ) { $0.expectError(.forbidden, "FORBIDDEN") }
                }
                try await client.execute(uri: "/v1/packs/\(pack)", method: .get, headers: auth(owner)) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func importingIntoANameNoOneCanSeeIsRefused() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                for name in ["", "%20%20", "%E2%80%8B", "a%0Ab"] {
                    try await client.execute(
                        uri: "/v1/packs?group=\(name)&name=p", method: .post, headers: auth(fixture.admin), body: ByteBuffer(string: "x")
                    ) { response in
                        let error = response.expectError(.badRequest, "BAD_REQUEST")
                        #expect(error?.message.hasPrefix("a group name") == true, "\(name): \(error?.message ?? "")")
                    }
                }
            }
            #expect(try fixture.hoard.catalog.groups().map(\.name) == ["blue", "red", "staff"])
        }
    }
}
