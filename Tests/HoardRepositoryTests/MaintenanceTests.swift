import Foundation
import HoardCore
import HoardRepository
import HoardStore
import Testing

@Suite("Verify and garbage collection")
struct MaintenanceTests {
    @Test func verifyPassesOnAFreshImportAndFindsACorruptBlob() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        _ = try await test.hoard.importPack(at: Fixtures.pack("scifi-outpost.zip"))
        let clean = try await test.hoard.verify()
        #expect(clean.isHealthy)
        #expect(clean.blobsChecked == (try test.hoard.catalog.blobs().count))
        let victim = try #require(try test.hoard.catalog.assets().first?.variants.first?.digest)
        let store = try #require(test.hoard.store as? FileBlobStore)
        let path = store.path(of: victim)
        chmod(path, 0o644)
        try Data("tampered".utf8).write(to: URL(fileURLWithPath: path))
        let dirty = try await test.hoard.verify()
        #expect(dirty.corrupt == [victim])
        #expect(!dirty.isHealthy)
    }

    @Test func verifyReportsAMissingBlob() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        _ = try await test.hoard.importPack(at: Fixtures.pack("scifi-outpost.zip"))
        let victim = try #require(try test.hoard.catalog.assets().first?.digest)
        try await test.hoard.store.delete(victim)
        let report = try await test.hoard.verify()
        #expect(report.missing == [victim])
    }

    @Test func gcKeepsEverythingReferencedAndFreesADeletedPack() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        _ = try await test.hoard.importPack(at: Fixtures.pack("scifi-outpost.zip"))
        _ = try await test.hoard.importPack(at: Fixtures.pack("dungeon-basics.zip"))
        let nothing = try await test.hoard.collectGarbage(grace: 0)
        #expect(nothing.deletedBlobs == 0)
        let scifiBlobs = Set(try test.hoard.catalog.blobs().map(\.digest))
        try test.hoard.catalog.deletePack(named: "dungeon-basics")
        let freed = try await test.hoard.collectGarbage(grace: 0)
        #expect(freed.deletedBlobs > 0)
        let left = Set(try await test.hoard.store.allDigests())
        let stillReferenced = Set(try test.hoard.catalog.blobs().map(\.digest))
        #expect(left == stillReferenced)
        #expect(stillReferenced.isSubset(of: scifiBlobs))
        #expect(try test.hoard.catalog.packs().map(\.name) == ["scifi-outpost"])
        #expect(try await test.hoard.verify().isHealthy)
    }

    @Test func gcKeepsUnreferencedBlobsYoungerThanTheGracePeriod() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let area = try test.hoard.store.makeStagingArea()
        let orphan = try area.stage(Array("left by a crashed import".utf8))
        _ = try await test.hoard.store.publish([orphan])
        area.discard()
        let young = try await test.hoard.collectGarbage(grace: 3600)
        #expect(young.keptYoung == 1)
        #expect(try await test.hoard.store.info(orphan.digest) != nil)
        let old = try await test.hoard.collectGarbage(grace: 0)
        #expect(old.deletedBlobs == 1)
        #expect(try await test.hoard.store.info(orphan.digest) == nil)
    }

    @Test func gcWaitsForARunningImportAndNeverDeletesWhatItReferences() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        // Imports and collections race; every import that finishes must stay whole.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<4 {
                group.addTask { _ = try await test.hoard.importPack(at: Fixtures.pack(round % 2 == 0 ? "scifi-outpost.zip" : "dungeon-basics.zip")) }
                group.addTask { _ = try await test.hoard.collectGarbage(grace: 0) }
            }
            try await group.waitForAll()
        }
        let report = try await test.hoard.verify()
        #expect(report.isHealthy)
        #expect(report.unreferenced == 0)
        #expect(try test.hoard.catalog.packs().count == 2)
    }
}

@Suite("Backup and restore")
struct BackupTests {
    @Test func aBackupTakenDuringAnImportRestoresIntoAVerifiedIdenticalStore() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        _ = try await test.hoard.importPack(at: Fixtures.pack("scifi-outpost.zip"))
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        async let importing = test.hoard.importPack(at: Fixtures.pack("dungeon-basics.zip"))
        let report = try await test.hoard.backup(to: folder + "/backup")
        _ = try await importing
        #expect(report.blobs > 0)
        let backedUp = try Hoard(dataDirectory: folder + "/backup")
        #expect(try await backedUp.verify().isHealthy, "the backup alone must verify")
        let packsInBackup = try backedUp.catalog.packs().map(\.name)
        #expect(packsInBackup.contains("scifi-outpost"))

        let restored = try await Hoard.restore(from: folder + "/backup", into: folder + "/restored")
        #expect(restored.blobs == report.blobs)
        let hoard = try Hoard(dataDirectory: folder + "/restored")
        let verify = try await hoard.verify()
        #expect(verify.isHealthy)
        #expect(verify.unreferenced == 0)
        #expect(try hoard.catalog.packs().map(\.name) == packsInBackup)
        #expect(try hoard.catalog.assets().map(\.digest) == (try backedUp.catalog.assets().map(\.digest)))
    }

    @Test func aStoreWithoutLocalFilesIsBackedUpThroughItsReads() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let hoard = Hoard(directory: test.hoard.directory, store: MemoryBlobStore(), catalog: test.hoard.catalog)
        let imported = try await hoard.importPack(at: Fixtures.pack("scifi-outpost.zip"))
        let some = try #require(try test.hoard.catalog.blobs().first)
        #expect(hoard.localPath(of: some.digest) == nil, "nothing on disk to link")
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try await hoard.backup(to: folder + "/backup")
        #expect(report.blobs == imported.newBlobs && report.bytes == imported.newBytes)
        let backedUp = try Hoard(dataDirectory: folder + "/backup")
        let verify = try await backedUp.verify()
        #expect(verify.isHealthy && verify.unreferenced == 0, "every blob the catalog names was copied, with its bytes")
    }

    @Test func restoreRefusesAFolderThatIsNotEmpty() async throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/something"))
        await #expect(throws: (any Error).self) { _ = try await Hoard.restore(from: folder, into: folder) }
    }
}
