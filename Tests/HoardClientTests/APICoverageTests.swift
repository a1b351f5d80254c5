import Foundation
import HoardClientNIO
import HoardCore
import HoardTestSupport
import Testing

@testable import HoardClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every call of the client's API against a real server, over URLSession and over NIO (the same calls, the same
/// answers): the lobby and a session's life, saved maps, uploads, refs, share links, packs and asset search.
@Suite(.timeLimit(.minutes(3))) struct APICoverageTests {
    /// A 1×1 PNG, made fresh (a random text chunk) so each upload is new.
    static func picture() -> Data {
        let (chunk, bigEndian) = (PNGBytes.chunk, PNGBytes.bigEndian)
        // An uncompressed deflate block holding one filter byte and one RGBA pixel.
        let raw: [UInt8] = [0, 200, 50, 50, 255]
        var adler = (a: UInt32(1), b: UInt32(0))
        for byte in raw { adler.a = (adler.a + UInt32(byte)) % 65521; adler.b = (adler.b + adler.a) % 65521 }
        let deflate: [UInt8] = [0x78, 0x01, 0x01, 5, 0, 0xFA, 0xFF] + raw + bigEndian(adler.b << 16 | adler.a)
        let note = Array("n\u{0}\(UUID().uuidString)".utf8)
        return Data(PNGBytes.signature + chunk("IHDR", bigEndian(1) + bigEndian(1) + [8, 6, 0, 0, 0])
            + chunk("tEXt", note) + chunk("IDAT", deflate) + chunk("IEND", []))
    }

    static let exchanges: [String] = ["URLSession", "NIO"]

    @Test(arguments: exchanges) func everyCallAgainstARealServer(exchange: String) async throws {
        try await ServerFixture.with { fixture in
            try await fixture.importPack("dungeon-basics")
            let host = fixture.client { if exchange == "NIO" { $0.exchange = NIOHTTPExchange(maxConnections: 4, timeout: 30) } }

            // Packs and asset search.
            let packs = try await host.packs()
            #expect(packs.map(\.name) == ["dungeon-basics"] && packs.first?.group == "table")
            let ogres = try await host.assets(AssetSearch(text: "ogre", kind: "token"))
            #expect(ogres.assets.map(\.name).contains { $0.contains("ogre") } && ogres.assets.allSatisfy { $0.kind == .token })
            let large = try await host.assets(AssetSearch(footprint: "2x2"))
            #expect(!large.assets.isEmpty && large.assets.allSatisfy { $0.footprint.width == 2 && $0.footprint.height == 2 })
            var seen: [Digest] = []
            var cursor: String?
            repeat {
                let page = try await host.assets(AssetSearch(pack: "dungeon-basics", limit: 5, cursor: cursor))
                seen += page.assets.map(\.digest)
                cursor = page.nextCursor
            } while cursor != nil
            let total = try await host.assets(AssetSearch(pack: "dungeon-basics")).total
            #expect(seen.count == Set(seen).count && seen.count == total)
            let ogre = try #require(ogres.assets.first?.digest)

            // A session's life: lobby, map, code, a participant who leaves and one who is removed, the end.
            let map: JSONValue = .object([
                "schema": .string("hoard.map/v1"), "grid": .object(["width": .number(8), "height": .number(6)]),
                "tokens": .array([.object(["id": .string("t1"), "asset": .string(ogre.description), "x": .number(1), "y": .number(1)])]),
            ])
            let created = try await host.createSession(name: "Crypt", map: map)
            #expect(try await host.lobby().map(\.id) == [created.id])
            let ann = try await host.authenticated(with: nil).join(code: created.code, name: "Ann")
            let bob = try await host.authenticated(with: nil).join(code: created.code, name: "Bob")
            #expect(try await host.lobby().first?.participants.sorted() == ["Ann", "Bob"])
            let newCode = try await host.rotateJoinCode(session: created.id)
            #expect(newCode != created.code)
            await #expect(throws: HoardClientError.self) { _ = try await host.authenticated(with: nil).join(code: created.code, name: "Late") }
            let replaced = try await host.replaceMap(session: created.id, with: map)
            #expect(replaced.seq > 0)
            try await ann.client.leave(session: ann)
            await #expect(throws: HoardClientError.self) { _ = try await ann.client.session(id: created.id) }
            try await host.removeParticipant(bob.participantId, from: created.id)
            let gone = await #expect(throws: HoardClientError.self) { _ = try await bob.client.session(id: created.id) }
            #expect(gone?.status == 401)

            // Saved maps.
            let saved = try await host.saveMap(named: "cellar", map: map)
            _ = try await host.saveTable(of: created.id, named: "midgame")
            #expect(try await host.savedMaps().map(\.name).sorted() == ["cellar", "midgame"])
            #expect(try await host.savedMap(named: "cellar").digest == saved.digest)
            #expect(try await host.savedMap(named: "cellar").map != nil)
            try await host.deleteSavedMap(named: "cellar")
            #expect(try await host.savedMaps().map(\.name) == ["midgame"])
            // Dice: the commitment while the game runs, every roll audited once the seed is revealed.
            #expect(try await host.dice(session: created.id).seed == nil)
            let revealed = try await host.revealDice(session: created.id)
            let audit = try await host.verifyRolls(session: created.id)
            #expect(audit.dice.seed == revealed.seed && audit.dice.commitment == revealed.commitment && audit.mismatches.isEmpty)
            try await host.endSession(id: created.id)
            #expect(try await host.lobby().isEmpty)
            #expect(try await host.dice(session: created.id).seed == revealed.seed, "the seal outlives its session")
            #expect(try await host.diceStatistics().dice.isEmpty, "no roll was made")

            // Uploads.
            let upload = try await host.uploadPicture(Self.picture(), mediaType: "image/png")
            #expect(upload.scope == "member" && upload.mediaType == "image/png")
            #expect(try await host.uploads().uploads.map(\.digest) == [upload.digest])

            // Refs.
            let ref = try await host.moveRef("last", to: upload.digest)
            #expect(ref.digest == upload.digest)
            #expect(try await host.refs().map(\.name) == ["last"])
            #expect(try await host.ref(named: "last").digest == upload.digest)
            try await host.deleteRef("last")
            let noRef = await #expect(throws: HoardClientError.self) { _ = try await host.ref(named: "last") }
            #expect(noRef?.status == 404)

            // Share links.
            let share = try await host.share(blob: upload.digest, name: "A door")
            let assetShare = try await host.share(asset: ogre)
            #expect(share.url.contains(share.id) && share.name == "A door" && assetShare.kind == "asset")
            #expect(Set(try await host.shares().map(\.id)) == [share.id, assetShare.id])
            try await host.revokeShare(id: share.id)
            #expect(try await host.shares().map(\.id) == [assetShare.id])

            try await host.deleteUpload(upload.digest)
            #expect(try await host.uploads().total == 0)
        }
    }
}
