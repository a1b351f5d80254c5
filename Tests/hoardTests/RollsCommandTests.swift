import Foundation
import HoardCatalog
import HoardCore
import Testing

/// `hoard rolls verify SESSION` against a data directory: every roll recomputed from the revealed seed.
@Suite("hoard rolls verify") struct RollsCommandTests {
    @Test func theRollsOfARevealedSessionVerifyAndAForgedOneFailsTheCommand() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let catalog = try SQLiteCatalog(path: data + "/catalog.sqlite")
        let groupId = try #require(try catalog.ensureGroup(named: "table").id)
        let map = BlobRecord(digest: BlobHasher.digest(of: Array("{}".utf8)), size: 2, mediaType: "application/vnd.hoard.map+json")
        let session = SessionRecord(
            id: "room", name: "Room", groupId: groupId, host: "gm", visibility: "group", code: "ROOM-CODE", mapDigest: map.digest,
            baseSeq: 0, lastSeq: 0, createdAt: Date())
        try catalog.createSession(session, mapBlob: map, reachable: [])
        let seal = try catalog.diceSeal(session: "room", groupId: groupId, proposed: .random())
        func log(_ seq: Int64, _ formula: String, total: Int? = nil) throws {
            var roll = try DiceFormula(formula).roll(seed: seal.seed, index: UInt64(seq))
            if let total { roll.total = total }
            let event: JSONValue = .object(["type": .string("rolled"), "from": .string("p1"), "seq": .number(Double(seq)), "roll": roll.json])
            let body = String(decoding: try CanonicalJSON.encode(event), as: UTF8.self)
            try catalog.appendEvent(session: "room", seq: seq, body: body, views: nil, grab: nil, isRoll: true)
        }
        try log(1, "4d6kh3+2")
        try log(2, "8d10!>=9cs>=7")

        let unrevealed = try CLI.run(["rolls", "verify", "room", "--data-dir", data])
        #expect(unrevealed.status == 1 && unrevealed.stderr.contains("not revealed"), "\(unrevealed.stderr)")
        _ = try catalog.revealDice(session: "room")
        let verified = try CLI.run(["rolls", "verify", "room", "--data-dir", data])
        #expect(verified.status == 0 && verified.stdout.contains("2 roll(s)"), "\(verified.stdout)\(verified.stderr)")

        try log(3, "1d20", total: 99)
        let forged = try CLI.run(["rolls", "verify", "room", "--data-dir", data])
        #expect(forged.status == 1 && forged.stderr.contains("MISMATCH roll 3"), "\(forged.stdout)\(forged.stderr)")
    }
}
