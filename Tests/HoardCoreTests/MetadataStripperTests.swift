import Testing

@testable import HoardCore

/// EXIF, XMP and IPTC blocks built byte by byte (see `Build` in ImageHeaderTests for the pictures around them).
private enum Metadata {
    /// A little-endian TIFF block: IFD0 with a camera make, the orientation and, when asked, a GPS IFD with a latitude.
    static func tiff(orientation: Int, gps: Bool) -> [UInt8] {
        var entries: [[UInt8]] = [entry(0x010F, type: 2, count: 4, value: Build.ascii("ACME"))]
        entries.append(entry(0x0112, type: 3, count: 1, value: Build.le(orientation, 2) + [0, 0]))
        let gpsOffset = 8 + 2 + (entries.count + (gps ? 1 : 0)) * 12 + 4
        if gps { entries.append(entry(0x8825, type: 4, count: 1, value: Build.le(gpsOffset, 4))) }
        var block = Build.ascii("II*\0") + Build.le(8, 4) + Build.le(entries.count, 2) + entries.flatMap { $0 } + [0, 0, 0, 0]
        if gps { block += Build.le(1, 2) + entry(0x0002, type: 5, count: 3, value: Build.le(0, 4)) + [0, 0, 0, 0] }
        return block
    }

    static func entry(_ tag: Int, type: Int, count: Int, value: [UInt8]) -> [UInt8] {
        Build.le(tag, 2) + Build.le(type, 2) + Build.le(count, 4) + value
    }

    static func exifSegment(orientation: Int = 1, gps: Bool = false) -> [UInt8] {
        Build.segment(0xE1, Build.ascii("Exif\0\0") + tiff(orientation: orientation, gps: gps))
    }

    static let xmpPacket = Build.ascii("<x:xmpmeta><rdf:Description exif:GPSLatitude=\"48,51.4N\"/></x:xmpmeta>")
    static let xmpSegment = Build.segment(0xE1, Build.ascii("http://ns.adobe.com/xap/1.0/\0") + xmpPacket)
    static let iptcSegment = Build.segment(0xED, Build.ascii("Photoshop 3.0\0") + [0x38, 0x42, 0x49, 0x4D, 4, 4, 0, 0])
    static let iccSegment = Build.segment(0xE2, Build.ascii("ICC_PROFILE\0") + [1, 1, 0, 0, 0, 0])
}

private let stripper = MetadataStripper()

/// Strips `bytes` and returns the new file, or nil when nothing changed.
private func stripped(_ bytes: [UInt8], _ type: MediaType) throws -> [UInt8]? {
    try stripper.rewrite(bytes, mediaType: type)?.apply(to: bytes)
}

/// The code `rewrite` throws for `bytes`, or nil when it succeeds.
private func failure(_ bytes: [UInt8], _ type: MediaType) -> ProblemCode? {
    do {
        _ = try stripper.rewrite(bytes, mediaType: type)
        return nil
    } catch {
        #expect(error.message.contains("re-save"))
        return error.code
    }
}

@Suite("Metadata stripping")
struct MetadataStripperTests {
    @Test func jpegLosesExifXmpAndIptcAndKeepsEverythingElseByteForByte() throws {
        let clean = Build.jpeg(before: [Build.app0, Metadata.iccSegment, Build.dqt])
        let dirty = Build.jpeg(before: [Build.app0, Metadata.exifSegment(gps: true), Metadata.xmpSegment, Metadata.iccSegment,
                                        Metadata.iptcSegment, Build.dqt])
        let edit = try #require(try stripper.rewrite(dirty, mediaType: .jpeg))
        #expect(edit.apply(to: dirty) == clean)
        #expect(edit.size == clean.count)
        #expect(edit.removed == ["EXIF", "XMP", "IPTC"])
        #expect(edit.hadGPSPosition)
    }

    @Test func jpegOrientationSurvivesAsAMinimalExifWhereTheOldOneWas() throws {
        let dirty = Build.jpeg(before: [Build.app0, Metadata.exifSegment(orientation: 6, gps: true), Build.dqt])
        let result = try #require(try stripped(dirty, .jpeg))
        let minimal = Build.segment(0xE1, Build.ascii("Exif\0\0") + ExifSummary.minimalTIFF(orientation: 6))
        #expect(result == Build.jpeg(before: [Build.app0, minimal, Build.dqt]))
        let kept = try ExifSummary.read(Array(minimal.dropFirst(10)))
        #expect(kept == ExifSummary(orientation: 6, hasGPSPosition: false))
        #expect(try ImageHeader.read(result) == ImageHeader.read(dirty))
        #expect(try stripped(result, .jpeg) == result, "stripping twice gives the same bytes")
    }

    @Test func jpegUprightExifWithoutGPSIsDroppedAndNotCountedAsGPS() throws {
        let edit = try #require(try stripper.rewrite(Build.jpeg(before: [Build.app0, Metadata.exifSegment(), Build.dqt]), mediaType: .jpeg))
        #expect(!edit.hadGPSPosition)
        #expect(!edit.pieces.contains { if case .inserted = $0 { true } else { false } })
    }

    @Test func picturesWithoutMetadataAreLeftAlone() throws {
        #expect(try stripper.rewrite(Build.jpeg(), mediaType: .jpeg) == nil)
        #expect(try stripper.rewrite(Build.png(), mediaType: .png) == nil)
        #expect(try stripper.rewrite(Build.vp8(), mediaType: .webp) == nil)
        #expect(try stripper.rewrite(Build.vp8x(), mediaType: .webp) == nil)
    }

    @Test func aJpegExifSegmentLongerThanTheFileIsCorruptMetadata() {
        let segment = [0xFF, 0xE1] + Build.be16(60_000) + Build.ascii("Exif\0\0") + Metadata.tiff(orientation: 1, gps: false)
        #expect(failure([0xFF, 0xD8] + Build.app0 + segment, .jpeg) == .corruptMetadata)
    }

    @Test func aJpegExifSegmentShorterThanItsContentIsCorruptMetadata() {
        var segment = Metadata.exifSegment(orientation: 6)
        segment[3] -= 10  // the length now ends inside the TIFF block, where no marker follows
        #expect(failure(Build.jpeg(before: [Build.app0, segment, Build.dqt]), .jpeg) == .corruptMetadata)
    }

    @Test func anExifWhoseDirectoryRunsPastItsBlockIsCorruptMetadata() {
        let tiff = Build.ascii("II*\0") + Build.le(8, 4) + Build.le(500, 2) + [UInt8](repeating: 0, count: 16)
        let segment = Build.segment(0xE1, Build.ascii("Exif\0\0") + tiff)
        #expect(failure(Build.jpeg(before: [segment, Build.dqt]), .jpeg) == .corruptMetadata)
        #expect(throws: ProblemMessage.self) { try ExifSummary.read(Build.ascii("XX*\0")) }
    }

    @Test func pngLosesExifTextXmpAndTimeAndKeepsRenderingChunks() throws {
        let ihdr = Build.pngChunk("IHDR", Build.ihdr(width: 64, height: 32))
        let gamma = Build.pngChunk("gAMA", Build.be32(45455))
        let idat = Build.pngChunk("IDAT", [0x78, 0x9C, 0x63, 0x00, 0x00])
        let iend = Build.pngChunk("IEND", [])
        let xmp = Build.pngChunk("iTXt", Build.ascii("XML:com.adobe.xmp\0") + [0, 0, 0, 0] + Metadata.xmpPacket)
        let dirty = Build.pngSignature + ihdr + Build.pngChunk("eXIf", Metadata.tiff(orientation: 8, gps: false)) + gamma
            + Build.pngChunk("tEXt", Build.ascii("Comment\0hello")) + xmp + Build.pngChunk("tIME", [7, 232, 1, 1, 0, 0, 0]) + idat + iend
        let edit = try #require(try stripper.rewrite(dirty, mediaType: .png))
        let minimal = Build.pngChunk("eXIf", ExifSummary.minimalTIFF(orientation: 8))
        #expect(edit.apply(to: dirty) == Build.pngSignature + ihdr + minimal + gamma + idat + iend)
        #expect(edit.removed == ["EXIF", "text", "XMP", "time"])
        #expect(edit.hadGPSPosition, "the XMP packet names a latitude")
    }

    @Test func aPngTextChunkThatLiesAboutItsLengthIsCorruptMetadata() {
        let png = Build.png()
        let text = Build.be32(9_999) + Build.ascii("tEXt") + Build.ascii("Comment\0hi")
        #expect(failure(Array(png.dropLast(12)) + text, .png) == .corruptMetadata)
    }

    @Test func webpLosesExifAndXmpChunksWithTheirFlagsAndGetsItsRiffSizeFixed() throws {
        let image = Build.webpChunk("VP8 ", Build.vp8Payload(width: 64, height: 32))
        let icc = Build.webpChunk("ICCP", [1, 2, 3])
        func vp8x(_ flags: UInt8) -> [UInt8] { Build.webpChunk("VP8X", [flags, 0, 0, 0] + Build.le(63, 3) + Build.le(31, 3)) }
        let dirty = Build.riff(vp8x(0x20 | 0x08 | 0x04) + icc + image
            + Build.webpChunk("EXIF", Build.ascii("Exif\0\0") + Metadata.tiff(orientation: 1, gps: true))
            + Build.webpChunk("XMP ", Metadata.xmpPacket))
        let result = try #require(try stripped(dirty, .webp))
        #expect(result == Build.riff(vp8x(0x20) + icc + image))
        #expect(try ImageHeader.read(result) == ImageHeader.read(dirty))
    }

    @Test func webpOrientationIsKeptAsAnExifChunkWithItsFlag() throws {
        let image = Build.webpChunk("VP8 ", Build.vp8Payload(width: 64, height: 32))
        func vp8x(_ flags: UInt8) -> [UInt8] { Build.webpChunk("VP8X", [flags, 0, 0, 0] + Build.le(63, 3) + Build.le(31, 3)) }
        let dirty = Build.riff(vp8x(0x08) + image + Build.webpChunk("EXIF", Metadata.tiff(orientation: 3, gps: false)))
        let result = try #require(try stripped(dirty, .webp))
        #expect(result == Build.riff(vp8x(0x08) + image + Build.webpChunk("EXIF", ExifSummary.minimalTIFF(orientation: 3))))
    }

    @Test func aWebpExifChunkThatLiesAboutItsLengthIsCorruptMetadata() {
        let head = Build.webpChunk("VP8X", [0x08, 0, 0, 0] + Build.le(63, 3) + Build.le(31, 3))
        let exif = Build.ascii("EXIF") + Build.le(4_000, 4) + Metadata.tiff(orientation: 1, gps: false)
        #expect(failure(Build.riff(head + exif), .webp) == .corruptMetadata)
    }

    @Test func aPackOptsOutOfStrippingInPackJSON() throws {
        let registry = PluginRegistry.builtIn()
        #expect(registry.rewriters(for: PackFile()).map(\.id) == ["hoard.strip-metadata"])
        let optOut = try PackFile.parse(Build.ascii(#"{"plugins": {"hoard.strip-metadata": false}}"#)).get()
        #expect(registry.rewriters(for: optOut).isEmpty)
        #expect(PackFile.unknownKeys(Build.ascii(#"{"plugins": {}}"#)).isEmpty)
    }
}
