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
    /// Pack names are each group's own: two groups upload the same archive and both get their pack, sharing its
    /// blobs; neither learns of the other; a name finds the caller's own pack first, `?group=` another group's public one.
    @Test func twoGroupsUploadTheSameArchiveAndEachHasItsOwnPack() async throws {
        try await Fixture.with(packs: false) { fixture in
            let archive = try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon)))
            let pack = Fixture.dungeon
            try await fixture.run { client in
                for token in [fixture.red, fixture.blue] {
                    try await client.execute(uri: "/v1/packs", method: .post, headers: auth(token), body: buffer(Array(archive))) { response in
                        #expect(response.status == .created, "\(response.text)")
                        #expect(!response.text.contains(token == fixture.red ? "blue" : "red"), "no word of the other group")
                    }
                }
                let detail = { (token: String?, query: String) in
                    try await client.execute(uri: "/v1/packs/\(pack)\(query)", method: .get, headers: auth(token)) { ($0.status, $0.text) }
                }
                #expect(try await detail(fixture.red, "").1.contains(#""group":"red""#))
                #expect(try await detail(fixture.blue, "").1.contains(#""group":"blue""#))
                #expect(try await detail(fixture.red, "?group=blue").0 == .notFound, "blue's pack is private")
                try await client.execute(uri: "/v1/packs/\(pack)", method: .patch, headers: auth(fixture.blue),
                                         body: ByteBuffer(string: #"{"isPublic":true}"#)) { #expect($0.status == .ok) }
                #expect(try await detail(fixture.red, "?group=blue").1.contains(#""group":"blue""#))
                #expect(try await detail(nil, "").1.contains(#""group":"blue""#), "the one public pack of that name")
                // Red deletes its own pack; blue's stays, and the name now finds blue's public one.
                try await client.execute(uri: "/v1/packs/\(pack)", method: .delete, headers: auth(fixture.red)) { #expect($0.status == .noContent) }
                #expect(try await detail(fixture.blue, "").0 == .ok)
                #expect(try await detail(fixture.red, "").1.contains(#""group":"blue""#))
                // Two public packs of one name: the name alone is ambiguous, and the answer asks for the group.
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: buffer(Array(archive))) {
                    #expect($0.status == .created)
                }
                try await client.execute(uri: "/v1/packs/\(pack)", method: .patch, headers: auth(fixture.red),
                                         body: ByteBuffer(string: #"{"isPublic":true}"#)) { #expect($0.status == .ok) }
                let ambiguous = try await detail(nil, "")
                #expect(ambiguous.0 == .badRequest && ambiguous.1.contains("?group="), "\(ambiguous.1)")
                #expect(try await detail(nil, "?group=red").1.contains(#""group":"red""#))
            }
        }
    }

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
