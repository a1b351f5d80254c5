import Foundation
@testable import HoardCore
import HoardRepository
import HoardStore
import HoardTestSupport
import Testing

/// Pictures with metadata, built from the plain fixtures by adding chunks or segments.
private enum Dirty {
    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] { PNGBytes.chunk(type, data) }

    /// A big-endian EXIF block whose IFD0 points at a GPS IFD with one entry.
    static let gpsTIFF: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x88, 0x25, 0, 4, 0, 0, 0, 1, 0, 0, 0, 26, 0, 0, 0, 0]
        + [0, 1, 0, 2, 0, 5, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0]

    /// `Fixtures.png` with an eXIf chunk holding a GPS position and a tEXt comment after its IHDR.
    static func png(width: Int, height: Int, seed: Int) -> (dirty: [UInt8], clean: [UInt8]) {
        let clean = Fixtures.png(width: width, height: height, seed: seed)
        let metadata = pngChunk("eXIf", gpsTIFF) + pngChunk("tEXt", Array("Comment\0shot at home".utf8))
        return (Array(clean[0..<33]) + metadata + Array(clean[33...]), clean)
    }

    /// A 256×256 baseline JPEG whose EXIF (after the frame header) says its directory has 500 entries.
    static let lyingJPEG: [UInt8] = {
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 0xF4, 0x01] + [UInt8](repeating: 0, count: 16)
        return [0xFF, 0xD8] + segment(0xC0, [8, 1, 0, 1, 0, 1, 1, 0x11, 0]) + segment(0xE1, Array("Exif\0\0".utf8) + tiff)
            + segment(0xDA, [1, 1, 0, 0, 63, 0]) + [0x12, 0x34, 0xFF, 0xD9]
    }()
}

@Suite("Metadata stripping at import")
struct MetadataStrippingTests {
    @Test func importedPicturesAreStoredWithoutTheirMetadataAndGPSIsCounted() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ogre = Dirty.png(width: 256, height: 256, seed: 1)
        let goblin = Fixtures.png(width: 256, height: 256, seed: 2)
        try Fixtures.zip(at: directory + "/gps.zip", [("tokens/ogre.png", ogre.dirty), ("tokens/goblin.png", goblin)])
        let report = try await test.hoard.importPack(at: directory + "/gps.zip")
        #expect(report.rewrittenFiles == 1)
        #expect(report.gpsFiles == 1)
        let stored = Set(try test.hoard.catalog.blobs().map(\.digest))
        #expect(stored.contains(BlobHasher.digest(of: ogre.clean)))
        #expect(!stored.contains(BlobHasher.digest(of: ogre.dirty)))
        #expect(stored.contains(BlobHasher.digest(of: goblin)))
        #expect(try await test.hoard.store.read(BlobHasher.digest(of: ogre.clean), range: nil) == ogre.clean)
    }

    /// A JPEG whose frame header comes after 120 KB of colour-profile segments: past the bytes kept in memory while
    /// staging, so its size is read back from the staged file (at the scan, and again after metadata stripping).
    @Test func aJpegWhoseSizeComesAfterLargeSegmentsIsReadBackAndImported() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let profile = segment(0xE2, Array("ICC_PROFILE\0".utf8) + [UInt8](repeating: 7, count: 60_000))
        let exif = segment(0xE1, Array("Exif\0\0".utf8) + Dirty.gpsTIFF)
        let jpeg = [0xFF, 0xD8] + exif + profile + profile + segment(0xC0, [8, 1, 0, 0, 128, 1, 1, 0x11, 0])
            + segment(0xDA, [1, 1, 0, 0, 63, 0]) + [0x12, 0x34, 0xFF, 0xD9]
        #expect(jpeg.count > 120_000 && jpeg.count < 256 << 10, "past the 16 KiB kept while staging, within the 256 KiB a header may take")
        try Fixtures.zip(at: directory + "/deep.zip", [("tokens/ogre.jpg", jpeg)])
        let report = try await test.hoard.importPack(at: directory + "/deep.zip")
        #expect(report.assets == 1 && report.rewrittenFiles == 1 && report.gpsFiles == 1)
        let asset = try #require(try test.hoard.catalog.assets(pack: "deep").first)
        #expect(asset.variants.map { "\($0.width)x\($0.height)" } == ["128x256"])
    }

    /// Pictures are stripped while the archive is still being read, before pack.json may have been seen: a pack.json
    /// that comes after them and opts out must still keep them as they were.
    @Test(arguments: [true, false])
    func aPackThatOptsOutInPackJSONKeepsItsPicturesByteForByte(packJSONFirst: Bool) async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ogre = Dirty.png(width: 256, height: 256, seed: 1)
        let packJSON = ("pack.json", Array(#"{"name": "raw", "plugins": {"hoard.strip-metadata": false}}"#.utf8))
        let picture = ("tokens/ogre.png", ogre.dirty)
        try Fixtures.zip(at: directory + "/raw.zip", packJSONFirst ? [packJSON, picture] : [picture, packJSON])
        let report = try await test.hoard.importPack(at: directory + "/raw.zip")
        #expect(report.rewrittenFiles == 0)
        #expect(report.gpsFiles == 0)
        #expect(report.warnings.isEmpty)
        #expect(try test.hoard.catalog.blobs().map(\.digest).contains(BlobHasher.digest(of: ogre.dirty)))
    }

    @Test func aJpegWhoseExifLiesIsRefusedByNameAndNothingIsStored() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Fixtures.zip(at: directory + "/lies.zip", [
            ("tokens/liar.jpg", Dirty.lyingJPEG), ("tokens/goblin.png", Fixtures.png(width: 256, height: 256, seed: 2)),
        ])
        let before = try test.snapshot()
        let error = await #expect(throws: ImportError.self) { try await test.hoard.importPack(at: directory + "/lies.zip") }
        #expect(error?.errors.map(\.code) == [.corruptMetadata])
        #expect(error?.errors.first?.entry == "tokens/liar.jpg")
        #expect(try test.snapshot() == before)
    }

    /// A rewriter that changes nothing and counts the pictures it is shown.
    final class CountingRewriter: PictureRewriter, @unchecked Sendable {
        let id = "test.counting"
        let isEnabledByDefault = true
        private let lock = NSLock()
        private var seen = 0
        var calls: Int { lock.withLock { seen } }

        func rewrite(_ bytes: UnsafeRawBufferPointer, mediaType: MediaType) throws(Problem) -> PictureEdit? {
            lock.withLock { seen += 1 }
            return nil
        }
    }

    /// Rewriting begins during the scan; when pack.json leaves the rewriters as they are, that work is kept, not
    /// done again after the scan. When it turns one off, the pass runs again without it.
    @Test func picturesRewrittenDuringTheScanAreNotRewrittenAgain() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pictures = (1...6).map { ("tokens/goblin\($0).png", Fixtures.png(width: 256, height: 256, seed: $0)) }
        try Fixtures.zip(at: directory + "/plain.zip", pictures)
        let optOut = ("pack.json", Array(#"{"name": "plain2", "plugins": {"test.counting": false}}"#.utf8))
        try Fixtures.zip(at: directory + "/plain2.zip", pictures + [optOut])
        for (archive, expected) in [("plain.zip", 6), ("plain2.zip", 6)] {
            let counting = CountingRewriter()
            var registry = PluginRegistry.builtIn()
            try registry.register(rewriter: counting)
            let test = try TestHoard(registry: registry)
            defer { test.remove() }
            let report = try await test.hoard.importPack(at: directory + "/" + archive)
            #expect(report.assets == 6)
            // Six during the scan; for plain2, none after it (pack.json turned the rewriter off).
            #expect(counting.calls == expected, "\(archive)")
        }
    }
}
