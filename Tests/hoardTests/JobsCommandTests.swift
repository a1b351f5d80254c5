import Foundation
import Testing

/// `hoard import --later` and `hoard jobs`: the generated pictures queued, listed per pack, made, cancelled and retried.
@Suite("hoard jobs")
struct JobsCommandTests {
    private func json(_ result: CLI.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    private func packs(_ answer: [String: Any]) -> [String: [String: Int]] {
        var found: [String: [String: Int]] = [:]
        for pack in answer["packs"] as? [[String: Any]] ?? [] {
            found[pack["pack"] as? String ?? ""] = pack["renditions"] as? [String: Int]
        }
        return found
    }

    @Test func laterLeavesThePicturesQueuedAndJobsRunMakesThem() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let imported = try CLI.run(["import", CLI.pack("dungeon-basics.zip"), CLI.pack("scifi-outpost.zip"), "--later", "--data-dir", data])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("queued"))
        let listed = try CLI.run(["jobs", "--data-dir", data, "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let before = packs(try json(listed))
        #expect(before["dungeon-basics"]?["pending"] == 18 && before["scifi-outpost"]?["pending"] == 11)
        let text = try CLI.run(["jobs", "--data-dir", data]).stdout
        #expect(text.contains("PENDING") && text.contains("0/18"))
        // A pack's jobs cancelled: the pack stays usable; retried: queued again.
        let cancelled = try CLI.run(["jobs", "cancel", "scifi-outpost", "--data-dir", data])
        #expect(cancelled.status == 0 && cancelled.stdout.contains("Cancelled 11 jobs"), "\(cancelled.stdout)\(cancelled.stderr)")
        #expect(packs(try json(try CLI.run(["jobs", "--data-dir", data, "--json"])))["scifi-outpost"]?["cancelled"] == 11)
        let ran = try CLI.run(["jobs", "run", "--data-dir", data])
        #expect(ran.status == 0 && ran.stdout.contains("Made 18 jobs"), "\(ran.stdout)\(ran.stderr)")
        let retried = try CLI.run(["jobs", "retry", "scifi-outpost", "--data-dir", data])
        #expect(retried.status == 0 && retried.stdout.contains("Queued 11 jobs"), "\(retried.stdout)")
        #expect(try CLI.run(["jobs", "run", "--data-dir", data]).stdout.contains("Made 11 jobs"))
        let after = try json(try CLI.run(["jobs", "--data-dir", data, "--json"]))
        #expect(packs(after)["dungeon-basics"]?["done"] == 18 && packs(after)["scifi-outpost"]?["done"] == 11)
        #expect((after["queue"] as? [String: Int])?["done"] == 29)
        let one = try CLI.run(["jobs", "--pack", "dungeon-basics", "--data-dir", data])
        #expect(one.status == 0 && one.stdout.contains("18/18") && !one.stdout.contains("scifi-outpost"))
        #expect(try CLI.run(["jobs", "cancel", "no-such-pack", "--data-dir", data]).status != 0)
    }
}
