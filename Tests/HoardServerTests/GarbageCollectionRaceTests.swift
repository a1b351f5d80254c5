import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import HoardStore
import HummingbirdTesting
import NIOCore
import Testing

/// Garbage collection (grace 0, the harshest setting) racing pack deletions, re-uploads and game sessions that
/// reference the same blobs: it never deletes a blob something references (DESIGN.md, "Garbage collection").
@Suite struct GarbageCollectionRaceTests {
    @Test func aSessionKeepsItsArtAfterThePackIsDeletedAndCollected() async throws {
        try await Fixture.with { fixture in
            let assets = try fixture.assets(Fixture.dungeon)
            let map = ["tokens": assets.map(\.digest.description)]
            try await fixture.run { client in
                let created = try await client.json(.post, "/v1/sessions", token: fixture.red, body: ["name": "kept", "map": map])
                #expect(created.status == .created)
                #expect(try await client.json(.delete, "/v1/packs/\(Fixture.dungeon)", token: fixture.red).status == .noContent)
                _ = try await fixture.hoard.collectGarbage(grace: 0)
                let code = try #require(created.json["code"] as? String)
                let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "ana"])
                let participant = try #require(joined.json["participantToken"] as? String)
                for variant in assets.flatMap(\.variants) {
                    try await client.execute(uri: "/v1/blobs/\(variant.digest)", method: .get, headers: auth(participant)) { response in
                        #expect(response.status == .ok, "\(variant.digest)")
                    }
                }
            }
            #expect(try await fixture.hoard.verify().isHealthy)
        }
    }

    /// A live op that makes stored art reachable writes only `sessionBlob` rows, without the gc lock. If gc removed
    /// the art between the op resolving it and recording it, the foreign keys refuse the record: the op fails,
    /// no session ever names a blob that is gone.
    @Test func artCollectedBetweenResolvingAndRecordingALiveOpIsRefusedNotDangling() async throws {
        try await Fixture.with { fixture in
            let hoard = fixture.hoard
            let id = try await fixture.run { client in
                let created = try await client.json(.post, "/v1/sessions", token: fixture.red, body: ["name": "op", "map": ["a": 1]])
                return try #require(created.json["id"] as? String)
            }
            let resolved = try hoard.catalog.resolve(Set(try fixture.assets(Fixture.dungeon).map(\.digest)))
            #expect(resolved.missing.isEmpty)
            try hoard.catalog.deletePack(named: Fixture.dungeon)
            _ = try await hoard.collectGarbage(grace: 0)
            #expect(throws: CatalogError.self) { try hoard.catalog.addReachable(session: id, resolved.reachable) }
            #expect(try await hoard.verify().isHealthy)
        }
    }

    @Test func gcRacingDeletesReuploadsAndSessionsNeverRemovesAReferencedBlob() async throws {
        try await Fixture.with { fixture in
            let archive = try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon)))
            let map = ["tokens": try fixture.assets(Fixture.dungeon).map(\.digest.description)]
            let hoard = fixture.hoard
            let sessions = try await fixture.run { client in
                try await withThrowingTaskGroup(of: [String].self) { group in
                    group.addTask {
                        var created: [String] = []
                        for n in 0..<12 {
                            let answer = try await client.json(.post, "/v1/sessions", token: fixture.red, body: ["name": "s\(n)", "map": map])
                            // While the pack is deleted the art is not readable: the map is refused, nothing is recorded.
                            #expect([.created, .conflict].contains(answer.status), "\(answer.json)")
                            if let id = answer.json["id"] as? String { created.append(id) }
                        }
                        return created
                    }
                    group.addTask {
                        for _ in 0..<6 {
                            _ = try await client.json(.delete, "/v1/packs/\(Fixture.dungeon)", token: fixture.red)
                            try await client.execute(
                                uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: ByteBuffer(bytes: archive)
                            ) { response in
                                #expect([.created, .ok].contains(response.status), "\(response.text)")
                            }
                        }
                        return []
                    }
                    group.addTask {
                        for _ in 0..<12 { _ = try await hoard.collectGarbage(grace: 0) }
                        return []
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
            }
            #expect(!sessions.isEmpty)
            _ = try await hoard.collectGarbage(grace: 0)
            let report = try await hoard.verify()
            #expect(report.isHealthy, "\(report)")
            // Every session holds the same map: its art (assets, descriptors, every variant) is all still there.
            let resolved = try hoard.catalog.resolve(Set(map["tokens", default: []].compactMap(Digest.init)))
            #expect(resolved.missing.isEmpty)
            for digest in resolved.reachable {
                #expect(try await hoard.store.info(digest) != nil, "a session lost \(digest)")
            }
        }
    }
}
