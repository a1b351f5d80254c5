import Foundation
import GRDB
import HoardCore
import Testing

@testable import HoardCatalog

@Test(arguments: CatalogBackendKind.allCases)
func ensuringAGroupTwiceGivesTheSameGroup(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    let first = try catalog.ensureGroup(named: "dragons")
    let second = try catalog.ensureGroup(named: "dragons")
    #expect(first.id != nil)
    #expect(first.id == second.id)
    #expect(try catalog.ensureGroup(named: "Dragons").id == first.id)
    try catalog.ensureGroup(named: "owlbears")
    #expect(try catalog.groups().map(\.name) == ["dragons", "owlbears"])
}

@Test(arguments: CatalogBackendKind.allCases)
func aRecordedCommitIsListedWithItsAssetsAndVariants(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    let fixture = CommitFixture(assets: goblinAssets())
    #expect(try catalog.record(fixture.commit) == .recorded)

    let packs = try catalog.packs()
    #expect(packs.count == 1)
    let pack = try #require(packs.first)
    #expect(pack.name == "goblins")
    #expect(pack.group == "dragons")
    #expect(pack.version == "1")
    #expect(pack.versionCount == 1)
    #expect(pack.manifestDigest == fixture.commit.manifestDigest)
    #expect(pack.assetCount == 2)
    #expect(pack.totalBytes == 142_000)
    #expect(!pack.isPublic)
    #expect(pack.importedAt != nil)

    let assets = try catalog.assets(pack: "goblins")
    // Sorted by kind, then name: texture before token.
    #expect(assets.map(\.name) == ["stone-floor", "ogre"])
    #expect(assets.map(\.kind) == [.texture, .token])
    let ogre = try #require(assets.first { $0.name == "ogre" })
    let ogreSpec = try #require(goblinAssets().first { $0.name == "ogre" })
    #expect(ogre.digest == fakeDigest(try CanonicalJSON.encode(ogreSpec.descriptor)))
    #expect(ogre.pack == "goblins")
    #expect(ogre.footprint == Footprint(width: 2, height: 2))
    #expect(ogre.variants == ogreSpec.descriptor.variants)
    #expect(ogre.variants.map(\.size) == [40_000, 90_000])
    #expect(ogre.variants.map(\.mediaType) == [.png, .webp])
    #expect(ogre.variants.map(\.scale) == [1, 2])
    #expect(Set(try catalog.blobs().map(\.digest)) == fixture.blobDigests)
}

@Test(arguments: CatalogBackendKind.allCases)
func variantSizesAndTypesComeFromTheBlobRows(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    var fixture = CommitFixture(assets: goblinAssets())
    // The blob row is the truth about bytes; make it differ from what the descriptor claims.
    let stone = fakeDigest("picture:goblins/stone")
    fixture.commit.blobs = fixture.commit.blobs.map { blob in
        blob.digest == stone ? BlobRecord(digest: stone, size: 777, mediaType: MediaType.jpeg.rawValue) : blob
    }
    #expect(try catalog.record(fixture.commit) == .recorded)
    let floor = try #require(try catalog.assets(pack: "goblins", kind: .texture).first)
    #expect(floor.variants.map(\.size) == [777])
    #expect(floor.variants.map(\.mediaType) == [.jpeg])
}

@Test(arguments: CatalogBackendKind.allCases)
func assetsCanBeFilteredByPackAndKind(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    #expect(try catalog.record(CommitFixture(pack: "goblins", assets: goblinAssets()).commit) == .recorded)
    #expect(try catalog.record(CommitFixture(pack: "caves", assets: goblinAssets(labelPrefix: "caves")).commit) == .recorded)
    #expect(try catalog.assets().count == 4)
    #expect(try catalog.assets().map(\.pack) == ["caves", "caves", "goblins", "goblins"])
    #expect(try catalog.assets(kind: .token).map(\.pack) == ["caves", "goblins"])
    #expect(try catalog.assets(pack: "caves", kind: .texture).map(\.name) == ["stone-floor"])
    #expect(try catalog.assets(pack: "caves", kind: .wall).isEmpty)
    #expect(try catalog.assets(pack: "absent").isEmpty)
}

@Test(arguments: CatalogBackendKind.allCases)
func recordingTheSameVersionAndManifestAgainChangesNothing(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    let fixture = CommitFixture(assets: goblinAssets())
    #expect(try catalog.record(fixture.commit) == .recorded)
    let before = try catalog.packs()
    #expect(try catalog.record(fixture.commit) == .alreadyRecorded)
    #expect(try catalog.packs() == before)
    #expect(try catalog.packState(named: "goblins")?.versions == ["1"])
}

@Test(arguments: CatalogBackendKind.allCases)
func theSameVersionWithAnotherManifestIsAConflict(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    #expect(try catalog.record(CommitFixture(assets: goblinAssets()).commit) == .recorded)
    let changed = CommitFixture(assets: goblinAssets(labelPrefix: "retouched"), manifestSalt: "v1-again")
    #expect(errorCode { () throws(CatalogError) in _ = try catalog.record(changed.commit) } == .conflict)
    // The first import is untouched.
    #expect(try catalog.packState(named: "goblins")?.versions == ["1"])
    #expect(try catalog.assets(pack: "goblins").flatMap(\.variants).allSatisfy { $0.digest != fakeDigest("picture:retouched/stone") })
}

@Test(arguments: CatalogBackendKind.allCases)
func packNamesBelongToTheirGroupSoTwoGroupsImportTheSamePack(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    #expect(try catalog.record(CommitFixture(group: "dragons", pack: "goblins", assets: goblinAssets()).commit) == .recorded)
    // The same archive into another group: its own pack, sharing the blobs, and no word of the first group.
    #expect(try catalog.record(CommitFixture(group: "owlbears", pack: "goblins", assets: goblinAssets()).commit) == .recorded)
    #expect(try catalog.packState(named: "goblins", group: "dragons")?.group == "dragons")
    #expect(try catalog.packState(named: "goblins", group: "owlbears")?.versions == ["1"])
    // Pack names are case-insensitive within a group, so a different spelling is the same pack.
    let respelled = CommitFixture(group: "owlbears", pack: "Goblins", version: "2", assets: goblinAssets(labelPrefix: "other"))
    #expect(try catalog.record(respelled.commit) == .recorded)
    #expect(try catalog.packState(named: "goblins", group: "owlbears")?.versions == ["1", "2"])
    #expect(try catalog.packState(named: "goblins", group: "dragons")?.versions == ["1"])
    // Without a group, a name several groups use names no pack, and says so without naming them.
    let error = #expect(throws: CatalogError.self) { try catalog.deletePack(named: "goblins") }
    #expect(error?.code == .conflict && error?.message.contains("dragons") == false)
    #expect(try catalog.setPublic(true, pack: "goblins", group: "owlbears"))
    #expect(try catalog.packOwner(named: "goblins", group: "dragons")?.isPublic == false)
    #expect(try catalog.deletePack(named: "goblins", group: "dragons"))
    #expect(try catalog.packState(named: "goblins")?.group == "owlbears", "one left: the name alone finds it")
}

@Test(arguments: CatalogBackendKind.allCases)
func packStateListsVersionsManifestsAndTheCurrentOne(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    #expect(try catalog.packState(named: "goblins") == nil)
    let v1 = CommitFixture(version: "1", assets: goblinAssets())
    let v2 = CommitFixture(version: "2", assets: goblinAssets(labelPrefix: "v2"))
    #expect(try catalog.record(v1.commit) == .recorded)
    #expect(try catalog.record(v2.commit) == .recorded)
    let state = try #require(try catalog.packState(named: "goblins"))
    #expect(state.name == "goblins")
    #expect(state.group == "dragons")
    #expect(state.versions == ["1", "2"])
    #expect(state.manifests == ["1": v1.commit.manifestDigest, "2": v2.commit.manifestDigest])
    #expect(state.currentVersion == "2")
    #expect(state.currentManifest == v2.commit.manifestDigest)
    // Listings show the current version only.
    #expect(try catalog.packs().first?.versionCount == 2)
    #expect(Set(try catalog.assets(pack: "goblins").map(\.digest)) == Set(v2.assetDigests))
}

@Test(arguments: CatalogBackendKind.allCases)
func collectingGarbageAfterDeletingAPackFreesExactlyTheBlobsOnlyItReferenced(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    var shared = goblinAssets(labelPrefix: "shared")
    shared[1].pictures[0].label = "goblins/stone"  // the caves reuse the goblins' floor picture
    let goblins = CommitFixture(pack: "goblins", assets: goblinAssets())
    let goblinsV2 = CommitFixture(pack: "goblins", version: "2", assets: [goblinAssets()[0]])
    let caves = CommitFixture(group: "owlbears", pack: "caves", assets: shared)
    for fixture in [goblins, goblinsV2, caves] { #expect(try catalog.record(fixture.commit) == .recorded) }

    // While every pack exists (old versions included), nothing is garbage.
    #expect(try catalog.collectGarbage().isEmpty)

    #expect(try catalog.deletePack(named: "goblins"))
    #expect(try !catalog.deletePack(named: "goblins"))
    let freed = Set(try catalog.collectGarbage())
    let goblinBlobs = goblins.blobDigests.union(goblinsV2.blobDigests)
    #expect(freed == goblinBlobs.subtracting(caves.blobDigests))
    #expect(!freed.contains(fakeDigest("picture:goblins/stone")))
    #expect(freed.contains(fakeDigest("picture:goblins/ogre@1x")))
    #expect(freed.contains(goblins.commit.manifestDigest))
    #expect(Set(try catalog.blobs().map(\.digest)) == caves.blobDigests)
    #expect(try catalog.collectGarbage().isEmpty)
    #expect(try catalog.assets().map(\.pack) == ["caves", "caves"])
    #expect(try catalog.danglingReferences().isEmpty)
}

@Test(arguments: CatalogBackendKind.allCases)
func anAssetSharedByTwoPacksSurvivesTheDeletionOfOne(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    let a = CommitFixture(pack: "a", assets: goblinAssets())
    let b = CommitFixture(pack: "b", assets: goblinAssets())
    #expect(try catalog.record(a.commit) == .recorded)
    #expect(try catalog.record(b.commit) == .recorded)
    #expect(Set(a.assetDigests) == Set(b.assetDigests))
    try catalog.deletePack(named: "a")
    #expect(Set(try catalog.collectGarbage()) == [a.commit.manifestDigest])
    let remaining = try catalog.assets(pack: "b")
    #expect(remaining.count == 2)
    #expect(remaining.allSatisfy { !$0.variants.isEmpty })
}

@Test(arguments: CatalogBackendKind.allCases)
func danglingReferencesStayEmptyThroughNormalUse(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    #expect(try catalog.danglingReferences().isEmpty)
    #expect(try catalog.record(CommitFixture(pack: "a", assets: goblinAssets()).commit) == .recorded)
    #expect(try catalog.record(CommitFixture(pack: "a", version: "2", assets: goblinAssets(labelPrefix: "a2")).commit) == .recorded)
    #expect(try catalog.record(CommitFixture(pack: "b", assets: goblinAssets(labelPrefix: "b")).commit) == .recorded)
    #expect(try catalog.danglingReferences().isEmpty)
    try catalog.deletePack(named: "a")
    #expect(try !catalog.collectGarbage().isEmpty)
    #expect(try catalog.danglingReferences().isEmpty)
}

@Test(arguments: CatalogBackendKind.allCases)
func aCommitMissingABlobRowRecordsNothing(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    var fixture = CommitFixture(assets: goblinAssets())
    let missing = fakeDigest("picture:goblins/ogre@2x")
    fixture.commit.blobs.removeAll { $0.digest == missing }
    #expect(errorCode { () throws(CatalogError) in _ = try catalog.record(fixture.commit) } != nil)
    #expect(try catalog.packs().isEmpty)
    #expect(try catalog.blobs().isEmpty)
    #expect(try catalog.danglingReferences().isEmpty)
}

@Test(arguments: CatalogBackendKind.allCases)
func settingAPackPublicAndPrivate(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    #expect(try catalog.record(CommitFixture(assets: goblinAssets()).commit) == .recorded)
    #expect(try catalog.packs().first?.isPublic == false)
    #expect(try catalog.setPublic(true, pack: "goblins"))
    #expect(try catalog.packs().first?.isPublic == true)
    #expect(try catalog.packOwner(named: "goblins")?.isPublic == true)
    #expect(try catalog.setPublic(false, pack: "goblins"))
    #expect(try catalog.packs().first?.isPublic == false)
    #expect(try !catalog.setPublic(true, pack: "absent"))
}

@Test func aFileCatalogKeepsWhatWasRecordedAcrossOpenings() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/catalog.sqlite"
    let fixture = CommitFixture(assets: goblinAssets())
    do {
        let catalog = try SQLiteCatalog(path: path)
        #expect(try catalog.record(fixture.commit) == .recorded)
        #expect(try catalog.setPublic(true, pack: "goblins"))
    }
    #expect(FileManager.default.fileExists(atPath: path))
    let reopened = try SQLiteCatalog(path: path)
    #expect(try reopened.record(fixture.commit) == .alreadyRecorded)
    let pack = try #require(try reopened.packs().first)
    #expect(pack.name == "goblins")
    #expect(pack.isPublic)
    #expect(try reopened.assets(pack: "goblins").count == 2)
    #expect(Set(try reopened.blobs().map(\.digest)) == fixture.blobDigests)
}

@Test func storedDatesAreTheTextGRDBWritesAndReadsBack() throws {
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    let random = (0..<500).map { _ -> Double in
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(seed >> 11) / Double(1 << 53) * 4_102_444_800
    }
    let dates = ([0, 1.5, -1.5, 86_399.999, 951_782_400.25, 1_700_000_000.123, 1_700_000_000.9999, 4_102_444_799.5] + random).map {
        Date(timeIntervalSince1970: $0)
    }
    for date in dates {
        let text = StoredDate.text(date)
        // GRDB's own encoding (its DateFormatter) gives the same text…
        #expect(text == String.fromDatabaseValue(date.databaseValue), "\(date.timeIntervalSince1970)")
        // …and GRDB reads it back to the millisecond.
        let back = try #require(Date.fromDatabaseValue(text.databaseValue))
        #expect(abs(back.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.001)
    }
}
