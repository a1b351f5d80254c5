import Foundation
import HoardCatalog
import HoardCore
import HoardImaging
import HoardRepository
import HoardStore
import Testing

/// A planned 1×1 token whose only variant is `picture` at `scale`.
private func request(_ picture: [UInt8], scale: Int, tilePixels: Int = 256) throws -> GenerationRequest {
    let info = try ImageHeader.read(picture)
    let variant = AssetDescriptor.Variant(
        scale: scale, digest: BlobHasher.digest(of: picture), width: info.width, height: info.height, size: Int64(picture.count),
        mediaType: info.mediaType)
    let asset = PlannedAsset(kind: .token, name: "ogre", footprint: .single, variants: [variant], entries: ["tokens/ogre.png"])
    return GenerationRequest(asset: asset, source: variant, tilePixels: tilePixels)
}

private func generate(_ picture: [UInt8], scale: Int) throws -> [GeneratedPicture] {
    let request = try request(picture, scale: scale)
    let result = picture.withUnsafeBytes { buffer in
        Result { () throws(Problem) -> [GeneratedPicture] in try LODGenerator().generate(request, source: buffer) }
    }
    return try result.get()
}

/// Imports `entries` as one pack into a fresh Hoard with the standard plugins; returns the report and the Hoard.
private func importPack(_ entries: [(String, [UInt8])]) async throws -> (ImportReport, Hoard, String) {
    let directory = try TestPictures.temporaryDirectory()
    try TestPictures.zip(at: directory + "/pack.zip", entries)
    let hoard = try Hoard(dataDirectory: directory + "/data", registry: try .standard())
    return (try await hoard.importPack(at: directory + "/pack.zip"), hoard, directory)
}

/// The descriptor of the only asset a Hoard holds.
private func onlyDescriptor(_ hoard: Hoard) async throws -> AssetDescriptor {
    let records = try hoard.catalog.blobs().filter { $0.mediaType == "application/vnd.hoard.asset+json" }
    try #require(records.count == 1)
    let bytes = try #require(try await hoard.store.read(records[0].digest, range: nil))
    return try JSONDecoder().decode(AssetDescriptor.self, from: Data(bytes))
}

@Suite("Generated LODs, previews and thumbnails")
struct LODGeneratorTests {
    @Test func aPreviewOf32PixelsPerTileAndAThumbnailAreMade() throws {
        let made = try generate(TestPictures.png(width: 512, height: 256), scale: 2)  // 1×1 token at @2x: 256×128 @1x
        let sizes = try made.map { ($0.role, try ImageHeader.read($0.bytes)) }
        #expect(sizes.map(\.0) == [.variant(scale: 1), .preview, .thumbnail])
        #expect(sizes.map { [$0.1.width, $0.1.height] } == [[256, 128], [32, 16], [256, 128]])
        #expect(made[0].mediaType == .png)
        #expect(made[1].mediaType == .webp && made[2].mediaType == .webp)
    }

    @Test func generationIsDeterministic() throws {
        let picture = TestPictures.png(width: 1024, height: 1024, seed: 3)
        #expect(try generate(picture, scale: 4) == generate(picture, scale: 4))
    }

    @Test func aPictureLibvipsCannotDecodeIsAnUnreadableImageWarning() throws {
        var broken = TestPictures.png(width: 64, height: 64)
        broken[44] ^= 0xFF  // the stored block's length no longer matches its complement
        let problem = #expect(throws: Problem.self) { try generate(broken, scale: 1) }
        #expect(problem?.code == .unreadableImage)
        #expect(problem?.severity == .warning)
    }

    @Test func generatedPicturesCarryNoMetadata() throws {
        for picture in try generate(TestPictures.png(width: 512, height: 512), scale: 2) {
            #expect(try MetadataStripper().rewrite(picture.bytes, mediaType: picture.mediaType) == nil)
        }
    }

    @Test func anImportQueuesThePicturesAndTheJobMakesTodaysInlineOutputByteForByte() async throws {
        let picture = TestPictures.png(width: 1024, height: 1024)
        let (report, hoard, directory) = try await importPack([("tokens/ogre@4x.png", picture)])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(report.renditionJobs == 1)
        // Usable at once: listed with its shipped variant, the rest said to be coming.
        let listed = try #require(try hoard.catalog.assets().first)
        #expect(listed.variants.map(\.scale) == [4])
        #expect(listed.pending == ["@1x", "@2x", "preview", "thumbnail"])
        #expect(listed.preview == nil && listed.thumbnail == nil)
        let descriptor = try await onlyDescriptor(hoard)
        #expect(descriptor.variants.map(\.scale) == [4] && descriptor.preview == nil, "the descriptor names the shipped art only")

        #expect(await hoard.makeRenditions() == RenditionRun(done: 1))
        let made = try #require(try hoard.catalog.assets().first)
        #expect(made.pending == nil)
        #expect(made.variants.map(\.scale) == [1, 2, 4])
        #expect(made.variants.map(\.generated) == [true, true, nil])
        let preview = try #require(made.preview)
        let thumbnail = try #require(made.thumbnail)
        #expect([preview.width, preview.height, thumbnail.width, thumbnail.height] == [32, 32, 256, 256] as [Int])
        // What the inline generation of earlier Hoards stored for this picture, byte for byte.
        let inline = try generate(picture, scale: 4)
        let stored: [GeneratedPicture.Role: Digest] = [
            .variant(scale: 1): made.variants[0].digest, .variant(scale: 2): made.variants[1].digest, .preview: preview.digest,
            .thumbnail: thumbnail.digest,
        ]
        #expect(inline.count == 4)
        for picture in inline {
            let digest = try #require(stored[picture.role])
            #expect(try await hoard.store.read(digest, range: nil) == picture.bytes, "\(picture.role) is today's inline output")
        }
        let collected = try await hoard.collectGarbage(grace: 0)
        #expect(try await hoard.store.info(preview.digest) != nil, "a live asset's renditions survive garbage collection: \(collected)")
        #expect(try await hoard.verify().isHealthy)
    }

    @Test func theSamePackImportedTwiceGivesTheSameManifest() async throws {
        let entries = [("tokens/ogre_2x2.png", TestPictures.png(width: 512, height: 512, seed: 7))]
        let (first, _, one) = try await importPack(entries)
        let (second, _, two) = try await importPack(entries)
        defer { for path in [one, two] { try? FileManager.default.removeItem(atPath: path) } }
        #expect(first.manifestDigest == second.manifestDigest)
        #expect(first.renditionJobs == 1)
    }

    @Test func aPictureTwoPacksHoldIsRenderedOnceForBoth() async throws {
        let picture = TestPictures.png(width: 512, height: 512, seed: 11)
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try TestPictures.zip(at: directory + "/a.zip", [("tokens/ogre.png", picture)])
        try TestPictures.zip(at: directory + "/b.zip", [("tokens/brute.png", picture)])
        let hoard = try Hoard(dataDirectory: directory + "/data", registry: try .standard())
        _ = try await hoard.importPack(at: directory + "/a.zip")
        var options = Importer.Options()
        options.group = "others"
        _ = try await hoard.importPack(at: directory + "/b.zip", options: options)
        #expect(try hoard.catalog.jobCounts(now: Date()).queued == 1, "one job for the picture, whatever the asset's name or group")
        #expect(await hoard.makeRenditions().done == 1)
        let assets = try hoard.catalog.assets()
        #expect(assets.count == 2)
        #expect(Set(assets.compactMap(\.thumbnail?.digest)).count == 1)
        // A later import of the same picture gets the pictures at once, in its own commit.
        try TestPictures.zip(at: directory + "/c.zip", [("tokens/grunt.png", picture)])
        options.group = "latecomers"
        let late = try await hoard.importPack(at: directory + "/c.zip", options: options)
        #expect(try hoard.catalog.assets(pack: late.pack).first?.thumbnail != nil)
        #expect(try hoard.catalog.packs().first { $0.group == "latecomers" }?.renditions == RenditionProgress(total: 1, done: 1, failed: 0, cancelled: 0))
    }

    @Test func aPackTurnsGenerationOffInPackJSON() async throws {
        let (report, hoard, directory) = try await importPack([
            ("pack.json", Array(#"{"plugins": {"hoard.generate-lods": false}}"#.utf8)), ("tokens/ogre@2x.png", TestPictures.png(width: 512, height: 512)),
        ])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(report.renditionJobs == 0)
        #expect(try hoard.catalog.packs().first?.renditions == nil)
        #expect(try hoard.catalog.assets().first?.pending == nil)
    }

    @Test func anUndecodablePictureIsImportedAndItsJobFailsWithAProblemThatNamesIt() async throws {
        var broken = TestPictures.png(width: 256, height: 256)
        broken[44] ^= 0xFF
        let (report, hoard, directory) = try await importPack([("tokens/broken.png", broken)])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(report.renditionJobs == 1)
        #expect(report.warnings.isEmpty)
        let run = await hoard.makeRenditions()
        #expect(run.failed == 1 && run.done == 0)
        #expect(run.problems.map(\.code) == [.unreadableImage])
        #expect(run.problems.first?.entry == "tokens/broken.png")
        let problems = try hoard.catalog.jobProblems(pack: report.pack, group: nil)
        #expect(problems.map(\.asset) == ["broken"] && problems.map(\.code) == ["UNREADABLE_IMAGE"])
        #expect(try hoard.catalog.packs().first?.renditions?.failed == 1)
        #expect(try hoard.catalog.assets().first?.preview == nil)
        #expect(try hoard.catalog.assets().first?.pending == nil, "a failed job is no longer coming")
    }

    /// A server imports, renders and imports again on one catalog connection: the job's blob rows and the import's share
    /// a prepared statement, which must start clean for the import (a regression: the second import lost its blob rows
    /// and failed on a foreign key).
    @Test func anImportAfterAJobWasRecordedInTheSameProcessRecordsEveryRow() async throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let hoard = try Hoard(dataDirectory: directory + "/data", registry: try .standard())
        try TestPictures.zip(at: directory + "/a.zip", [("tokens/ogre.png", TestPictures.png(width: 128, height: 128, seed: 98))])
        try TestPictures.zip(at: directory + "/b.zip", [("tokens/brute.png", TestPictures.png(width: 64, height: 64, seed: 99))])
        _ = try await hoard.importPack(at: directory + "/a.zip")
        #expect(await hoard.makeRenditions(workers: 1).done == 1)
        let second = try await hoard.importPack(at: directory + "/b.zip")
        #expect(second.outcome == .imported)
        #expect(try hoard.catalog.danglingReferences().isEmpty)
        #expect(try await hoard.verify().isHealthy)
    }
}
