import Foundation
import HoardCore
import HoardRepository
import Testing

@Suite("Importing Dungeondraft packs")
struct PCKImportTests {
    @Test func aDungeondraftPackImportsLikeAZipAndItsRefusalsChangeNothing() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Fixtures.run(["python3", Fixtures.root.appendingPathComponent("tools/make-pck.py").path, directory])
        let test = try TestHoard()
        defer { test.remove() }
        let before = try test.snapshot()
        let refused = await #expect(throws: ImportError.self) { try await test.hoard.importPack(at: directory + "/overlap.dungeondraft_pack") }
        #expect(refused?.code == .corruptArchive)
        #expect(try test.snapshot() == before)
        let report = try await test.hoard.importPack(at: directory + "/good.dungeondraft_pack")
        #expect(report.pack == "good")
        #expect(report.assetsByKind == ["object": 1, "wall": 1])
        let names = try test.hoard.catalog.assets(pack: "good", kind: nil).map { "\($0.kind.rawValue) \($0.name) \($0.footprint)" }
        #expect(Set(names) == ["object crate 1x1", "wall stone 1x1"])
    }
}
