import HoardTestSupport
import Testing

@testable import HoardCore

/// Builds picture headers byte by byte, so every test states exactly what the reader sees.
enum Build {
    static func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    static func be16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
    static func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: PNG

    static let pngSignature = PNGBytes.signature

    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] { PNGBytes.chunk(type, data) }

    static func ihdr(width: UInt32, height: UInt32, depth: UInt8 = 8, colourType: UInt8 = 6,
                     compression: UInt8 = 0, filter: UInt8 = 0, interlace: UInt8 = 0) -> [UInt8] {
        PNGBytes.header(width: width, height: height, depth: depth, colourType: colourType, compression: compression, filter: filter,
                        interlace: interlace)
    }

    static func png(width: UInt32 = 640, height: UInt32 = 480, depth: UInt8 = 8, colourType: UInt8 = 6,
                    compression: UInt8 = 0, filter: UInt8 = 0, interlace: UInt8 = 0) -> [UInt8] {
        let header = ihdr(width: width, height: height, depth: depth, colourType: colourType,
                          compression: compression, filter: filter, interlace: interlace)
        return pngSignature + pngChunk("IHDR", header) + pngChunk("IDAT", [0x78, 0x9C, 0x63, 0x00, 0x00])
            + pngChunk("IEND", [])
    }

    // MARK: JPEG

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker] + be16(payload.count + 2) + payload
    }

    static let app0 = segment(0xE0, ascii("JFIF") + [0, 1, 1, 0, 0, 72, 0, 72, 0, 0])
    static let dht = segment(0xC4, [0x00] + [UInt8](repeating: 0, count: 15) + [1] + [0])
    static let dqt = segment(0xDB, [0x00] + [UInt8](repeating: 1, count: 64))

    static func sof(_ marker: UInt8 = 0xC0, width: Int, height: Int, components: Int = 3) -> [UInt8] {
        let specs: [UInt8] = (0..<components).flatMap { (index: Int) -> [UInt8] in [UInt8(index + 1), 0x11, 0] }
        let frame: [UInt8] = [8] + be16(height) + be16(width) + [UInt8(components)]
        return segment(marker, frame + specs)
    }

    static let scan: [UInt8] = segment(0xDA, [1, 1, 0, 0, 63, 0]) + [0x12, 0xFF, 0x00, 0x34] + [0xFF, 0xD9]

    static func jpeg(width: Int = 800, height: Int = 600, before: [[UInt8]] = [app0, dqt], marker: UInt8 = 0xC0) -> [UInt8] {
        [0xFF, 0xD8] + before.flatMap { $0 } + sof(marker, width: width, height: height) + dht + scan
    }

    /// An EXIF-like APP1 segment of `size` bytes in all (marker and length included).
    static func exifApp1(size: Int = 60_000) -> [UInt8] {
        let body = ascii("Exif") + [0, 0] + ascii("II*\0")
        return segment(0xE1, body + (0..<(size - 4 - body.count)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    }

    // MARK: WebP

    static func riff(_ chunks: [UInt8], sizeAdjustment: Int = 0) -> [UInt8] {
        ascii("RIFF") + le(4 + chunks.count + sizeAdjustment, 4) + ascii("WEBP") + chunks
    }

    static func webpChunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
        ascii(fourCC) + le(payload.count, 4) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    static func vp8Payload(width: Int, height: Int, tag: [UInt8] = [0x50, 0x02, 0x00],
                           startCode: [UInt8] = [0x9D, 0x01, 0x2A]) -> [UInt8] {
        tag + startCode + le(width, 2) + le(height, 2) + [0x00, 0x00, 0x00, 0x00]
    }

    static func vp8(width: Int = 320, height: Int = 200) -> [UInt8] {
        riff(webpChunk("VP8 ", vp8Payload(width: width, height: height)))
    }

    static func vp8l(width: Int = 256, height: Int = 128, version: UInt32 = 0, signature: UInt8 = 0x2F) -> [UInt8] {
        let bits = UInt32(width - 1) | UInt32(height - 1) << 14 | 1 << 28 | version << 29
        return riff(webpChunk("VP8L", [signature] + le(Int(bits), 4) + [0x00, 0x00, 0x00]))
    }

    static func vp8x(width: Int = 4000, height: Int = 3000) -> [UInt8] {
        riff(webpChunk("VP8X", [0x10, 0, 0, 0] + le(width - 1, 3) + le(height - 1, 3))
             + webpChunk("VP8 ", vp8Payload(width: width & 0x3FFF, height: height & 0x3FFF)))
    }
}

/// The error code `read` throws for `bytes`, or nil when it succeeds.
private func errorCode(_ bytes: [UInt8], isComplete: Bool = true) -> ImageHeaderError.Code? {
    do {
        _ = try ImageHeader.read(bytes, isComplete: isComplete)
        return nil
    } catch {
        #expect(!error.message.isEmpty)
        return error.code
    }
}

/// The error `read` throws for `bytes`, or nil when it succeeds.
private func readError(_ bytes: [UInt8], isComplete: Bool = true) -> ImageHeaderError? {
    do {
        _ = try ImageHeader.read(bytes, isComplete: isComplete)
        return nil
    } catch {
        return error
    }
}

// MARK: - MediaType

@Test func mediaTypeFromFileExtensionRecognisesEveryClaimedExtension() {
    #expect(MediaType(fileExtension: "png") == .png)
    #expect(MediaType(fileExtension: "jpg") == .jpeg)
    #expect(MediaType(fileExtension: "jpeg") == .jpeg)
    #expect(MediaType(fileExtension: "webp") == .webp)
    for type in MediaType.allCases {
        for ext in type.fileExtensions { #expect(MediaType(fileExtension: ext) == type) }
    }
}

@Test(arguments: ["bmp", "", "PNG", "Jpg", ".png", "jpe", "svg", "png "])
func mediaTypeFromFileExtensionRejectsUnknownOrNonLowercaseExtensions(_ ext: String) {
    #expect(MediaType(fileExtension: ext) == nil)
}

@Test func mediaTypeListsItsExtensionsAndUsesMIMERawValues() {
    #expect(MediaType.png.fileExtensions == ["png"])
    #expect(MediaType.jpeg.fileExtensions == ["jpg", "jpeg"])
    #expect(MediaType.webp.fileExtensions == ["webp"])
    #expect(MediaType.gif.fileExtensions == ["gif"])
    #expect(MediaType.webm.fileExtensions == ["webm"])
    #expect(MediaType.ogg.fileExtensions == ["ogg", "oga", "opus"] && MediaType.m4a.fileExtensions == ["m4a", "aac"])
    #expect(
        MediaType.allCases.map(\.rawValue) == [
            "image/png", "image/jpeg", "image/webp", "image/gif", "video/webm", "audio/ogg", "audio/mpeg", "audio/flac", "audio/wav", "audio/mp4",
            "audio/webm",
        ])
    #expect(MediaType.allCases.filter(\.isAudio).allSatisfy { !$0.isStillDecodable })
    #expect(ImageHeaderError.Code.truncated.rawValue == "TRUNCATED_HEADER")
}

// MARK: - PNG

@Test func crc32MatchesTheStandardCheckValues() {
    #expect(ImageHeader.crc32(Build.ascii("123456789")) == 0xCBF4_3926)
    #expect(ImageHeader.crc32(Build.ascii("IEND")) == 0xAE42_6082)
}

@Test func readsPNGSizeFromIHDR() throws {
    #expect(try ImageHeader.read(Build.png(width: 640, height: 480)) == ImageInfo(mediaType: .png, width: 640, height: 480))
    #expect(try ImageHeader.read(Build.png(width: 1, height: 1)).width == 1)
    let huge = try ImageHeader.read(Build.png(width: 0x7FFF_FFFF, height: 3))
    #expect(huge.width == 0x7FFF_FFFF && huge.height == 3)
}

@Test func readsPNGFromAPrefixOfALargerFile() throws {
    let prefix = Array(Build.png(width: 2048, height: 1536).prefix(33))
    #expect(try ImageHeader.read(prefix, isComplete: false) == ImageInfo(mediaType: .png, width: 2048, height: 1536))
}

@Test func acceptsEveryPNGBitDepthAndColourTypeTheSpecAllows() throws {
    let valid: [UInt8: [UInt8]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
    for colourType: UInt8 in 0...8 {
        for depth: UInt8 in [0, 1, 2, 3, 4, 8, 16, 32] {
            let bytes = Build.png(depth: depth, colourType: colourType, interlace: depth == 8 ? 1 : 0)
            let allowed = valid[colourType]?.contains(depth) ?? false
            #expect(errorCode(bytes) == (allowed ? nil : .malformed), "colour type \(colourType), depth \(depth)")
        }
    }
}

@Test func rejectsPNGWithABadIHDRCRC() throws {
    var bytes = Build.png()
    bytes[30] ^= 0x01
    #expect(readError(bytes) == .malformed("PNG IHDR chunk has a bad CRC"))
    var changedField = Build.png()
    changedField[19] ^= 0x40  // width changes, CRC now wrong
    #expect(errorCode(changedField) == .malformed)
}

@Test func rejectsPNGWithZeroOrTooLargeSides() {
    #expect(errorCode(Build.png(width: 0, height: 10)) == .malformed)
    #expect(errorCode(Build.png(width: 10, height: 0)) == .malformed)
    #expect(errorCode(Build.png(width: 0x8000_0000, height: 10)) == .malformed)
    #expect(errorCode(Build.png(width: 10, height: 0xFFFF_FFFF)) == .malformed)
}

@Test func rejectsPNGWithUnknownCompressionFilterOrInterlaceMethod() {
    #expect(errorCode(Build.png(compression: 1)) == .malformed)
    #expect(errorCode(Build.png(filter: 1)) == .malformed)
    #expect(errorCode(Build.png(interlace: 2)) == .malformed)
}

@Test func rejectsPNGWhoseFirstChunkIsNotA13ByteIHDR() {
    let header = Build.ihdr(width: 4, height: 4)
    #expect(errorCode(Build.pngSignature + Build.pngChunk("IDAT", header)) == .malformed)
    #expect(errorCode(Build.pngSignature + Build.pngChunk("IHDR", header + [0])) == .malformed)
    #expect(errorCode(Build.pngSignature + Build.pngChunk("IHDR", Array(header.prefix(12)))) == .malformed)
}

@Test func reportsAPNGSignatureWithMangledLineEndingsAsMalformed() {
    var bytes = Build.png()
    bytes.replaceSubrange(4..<6, with: [0x0A])  // CRLF turned into LF
    #expect(errorCode(bytes) == .malformed)
}

@Test func truncatedPNGPrefixesAtEveryLengthAreTruncated() {
    let full = Build.png()
    for length in 1..<33 {
        for isComplete in [true, false] {
            #expect(errorCode(Array(full.prefix(length)), isComplete: isComplete) == .truncated, "length \(length)")
        }
    }
}

// MARK: - JPEG

@Test func readsJPEGSizeFromSOF() throws {
    #expect(try ImageHeader.read(Build.jpeg(width: 800, height: 600)) == ImageInfo(mediaType: .jpeg, width: 800, height: 600))
    #expect(try ImageHeader.read(Build.jpeg(width: 65535, height: 1)) == ImageInfo(mediaType: .jpeg, width: 65535, height: 1))
}

@Test(arguments: [UInt8](0xC0...0xCF).filter { ![0xC4, 0xC8, 0xCC].contains($0) })
func readsJPEGSizeFromEverySOFMarker(_ marker: UInt8) throws {
    #expect(try ImageHeader.read(Build.jpeg(width: 31, height: 17, marker: marker)).width == 31)
}

@Test func skipsDHTAndDACSegmentsThatShareTheSOFRange() throws {
    let before = [Build.app0, Build.dht, Build.segment(0xCC, [0x00, 0x10]), Build.segment(0xC8, [0x01])]
    #expect(try ImageHeader.read(Build.jpeg(width: 12, height: 34, before: before)).height == 34)
}

@Test func readsJPEGSizeAfterALargeEXIFLikeAPP1Segment() throws {
    let bytes = Build.jpeg(width: 4032, height: 3024, before: [Build.exifApp1(), Build.segment(0xE2, [UInt8](repeating: 7, count: 3000)), Build.dqt])
    #expect(bytes.count > 63_000)
    #expect(try ImageHeader.read(bytes, isComplete: false) == ImageInfo(mediaType: .jpeg, width: 4032, height: 3024))
}

@Test func jpegWhoseSOFLiesBeyondTheGivenPrefixIsTruncated() {
    let bytes = Build.jpeg(before: [Build.exifApp1()])
    #expect(errorCode(Array(bytes.prefix(4096)), isComplete: false) == .truncated)
    #expect(errorCode(Array(bytes.prefix(4096)), isComplete: true) == .malformed)
}

@Test func skipsJPEGFillBytesAndStandaloneMarkers() throws {
    let fill: [UInt8] = [0xFF, 0xFF, 0xFF]
    let standalone: [UInt8] = [0xFF, 0xD0, 0xFF, 0x01, 0xFF, 0xD7]
    let bytes = [0xFF, 0xD8] + fill + Build.app0 + standalone + fill + Build.sof(width: 5, height: 6) + Build.scan
    #expect(try ImageHeader.read(bytes) == ImageInfo(mediaType: .jpeg, width: 5, height: 6))
}

@Test(arguments: [0, 1])
func rejectsJPEGSegmentWithLengthBelowTwo(_ length: UInt8) {
    let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, length] + Build.sof(width: 1, height: 1)
    #expect(errorCode(bytes) == .malformed)
    #expect(errorCode(bytes, isComplete: false) == .malformed)
}

@Test func rejectsJPEGThatReachesImageDataOrEndBeforeSOF() {
    #expect(readError([0xFF, 0xD8] + Build.app0 + Build.scan) == .malformed("JPEG has no SOF marker before the image data"))
    #expect(errorCode([0xFF, 0xD8, 0xFF, 0xD9]) == .malformed)
    #expect(errorCode([0xFF, 0xD8, 0xFF, 0xD8] + Build.sof(width: 1, height: 1)) == .malformed)
}

@Test func rejectsJPEGWithZeroHeightOrWidth() {
    #expect(errorCode(Build.jpeg(width: 100, height: 0)) == .malformed)
    #expect(errorCode(Build.jpeg(width: 0, height: 100)) == .malformed)
}

@Test func rejectsJPEGWithBrokenSOFOrStrayBytes() {
    #expect(errorCode([0xFF, 0xD8] + Build.segment(0xC0, [8, 0, 1, 0, 1])) == .malformed)  // too short
    #expect(errorCode([0xFF, 0xD8] + Build.sof(width: 1, height: 1, components: 0)) == .malformed)
    #expect(errorCode([0xFF, 0xD8, 0x00] + Build.sof(width: 1, height: 1)) == .malformed)  // stray byte
    #expect(errorCode([0xFF, 0xD8, 0xFF, 0x00] + Build.sof(width: 1, height: 1)) == .malformed)  // FF00
}

@Test func jpegSegmentRunningPastTheDataIsTruncatedOnlyWhenMoreDataExists() {
    let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 1, 2, 3]
    #expect(errorCode(bytes, isComplete: false) == .truncated)
    #expect(errorCode(bytes, isComplete: true) == .malformed)
}

@Test func truncatedJPEGPrefixesAtEveryLengthAreTruncatedOrMalformed() {
    let full = Build.jpeg()
    let sofEnd = 2 + Build.app0.count + Build.dqt.count + Build.sof(width: 1, height: 1).count
    #expect(errorCode(Array(full.prefix(sofEnd))) == nil)
    #expect(errorCode([0xFF]) == .truncated)
    for length in 2..<sofEnd {
        #expect(errorCode(Array(full.prefix(length)), isComplete: false) == .truncated, "length \(length)")
        #expect(errorCode(Array(full.prefix(length)), isComplete: true) == .malformed, "length \(length)")
    }
}

// MARK: - WebP

@Test func readsLossyWebPSizeFromVP8() throws {
    #expect(try ImageHeader.read(Build.vp8(width: 320, height: 200)) == ImageInfo(mediaType: .webp, width: 320, height: 200))
    // The top two bits of each side are a scale hint, not part of the size.
    #expect(try ImageHeader.read(Build.vp8(width: 0xC000 | 16383, height: 0x4000 | 9)) == ImageInfo(mediaType: .webp, width: 16383, height: 9))
}

@Test func readsLosslessWebPSizeFromVP8L() throws {
    #expect(try ImageHeader.read(Build.vp8l(width: 256, height: 128)) == ImageInfo(mediaType: .webp, width: 256, height: 128))
    #expect(try ImageHeader.read(Build.vp8l(width: 16384, height: 1)) == ImageInfo(mediaType: .webp, width: 16384, height: 1))
}

@Test func readsExtendedWebPCanvasSizeFromVP8X() throws {
    #expect(try ImageHeader.read(Build.vp8x(width: 4000, height: 3000)) == ImageInfo(mediaType: .webp, width: 4000, height: 3000))
    #expect(try ImageHeader.read(Build.vp8x(width: 1 << 24, height: 1)) == ImageInfo(mediaType: .webp, width: 1 << 24, height: 1))
}

@Test func rejectsBrokenVP8AndVP8LFrames() {
    #expect(errorCode(Build.vp8(width: 0, height: 5)) == .malformed)
    #expect(errorCode(Build.vp8(width: 5, height: 0x4000)) == .malformed)
    #expect(errorCode(Build.riff(Build.webpChunk("VP8 ", Build.vp8Payload(width: 1, height: 1, startCode: [0x9D, 0x01, 0x2B])))) == .malformed)
    #expect(errorCode(Build.riff(Build.webpChunk("VP8 ", Build.vp8Payload(width: 1, height: 1, tag: [0x51, 0, 0])))) == .malformed)
    #expect(errorCode(Build.vp8l(signature: 0x2E)) == .malformed)
    #expect(errorCode(Build.vp8l(version: 1)) == .malformed)
    #expect(errorCode(Build.riff(Build.webpChunk("VP8L", [0x2F, 0, 0]))) == .malformed)  // chunk too short
}

@Test func rejectsWebPWhoseFirstChunkIsNotAnImageChunk() {
    #expect(errorCode(Build.riff(Build.webpChunk("ALPH", [UInt8](repeating: 0, count: 16)))) == .malformed)
    #expect(errorCode(Build.riff(Build.webpChunk("\u{1}\u{2}\u{3}\u{4}", [0, 0]))) == .malformed)
}

@Test func checksTheRIFFSizeLooselyAndOnlyForCompleteFiles() throws {
    let chunk = Build.webpChunk("VP8 ", Build.vp8Payload(width: 7, height: 8))
    #expect(errorCode(Build.riff(chunk, sizeAdjustment: 8)) == nil)  // size counts the RIFF header too
    #expect(errorCode(Build.riff(chunk, sizeAdjustment: -6)) == nil)  // trailing bytes are tolerated
    #expect(errorCode(Build.riff(chunk, sizeAdjustment: 1000)) == .malformed)
    #expect(errorCode(Build.riff(chunk, sizeAdjustment: 1000), isComplete: false) == nil)
    var tiny = Build.riff(chunk)
    tiny.replaceSubrange(4..<8, with: Build.le(4, 4))
    #expect(errorCode(tiny) == .malformed)
}

@Test func treatsOtherRIFFFilesAsNotAnImage() {
    #expect(errorCode(Build.ascii("RIFF") + Build.le(36, 4) + Build.ascii("WAVEfmt ") + [UInt8](repeating: 0, count: 28)) == .notAnImage)
}

@Test func truncatedWebPPrefixesAtEveryLengthAreTruncatedOrMalformed() {
    // The size fields end 30 bytes in for VP8 and VP8X, 25 for VP8L.
    for (full, headerEnd) in [(Build.vp8(), 30), (Build.vp8l(), 25), (Build.vp8x(), 30)] {
        #expect(errorCode(Array(full.prefix(headerEnd)), isComplete: false) == nil)
        for length in 1..<headerEnd {
            #expect(errorCode(Array(full.prefix(length)), isComplete: false) == .truncated, "length \(length)")
            let complete = errorCode(Array(full.prefix(length)))
            #expect(complete == .truncated || complete == .malformed, "length \(length)")
        }
    }
}

// MARK: - Not images

@Test func textAndOtherFormatsAreNotAnImage() {
    #expect(errorCode(Build.ascii("Hello, world! This is plainly text, not a picture.")) == .notAnImage)
    #expect(errorCode(Build.ascii("GIF83a") + [1, 0, 1, 0, 0, 0, 0]) == .malformed)
    #expect(errorCode(Build.ascii("%PDF-1.7\n")) == .notAnImage)
    #expect(errorCode([0x42, 0x4D, 0, 0, 0, 0]) == .notAnImage)
    #expect(errorCode([]) == .notAnImage)
}

@Test func tooFewBytesToDecideAreTruncated() {
    #expect(errorCode([], isComplete: false) == .truncated)
    for prefix: [UInt8] in [[0x89], [0x89, 0x50, 0x4E], [0xFF], Build.ascii("RI"), Build.ascii("RIFF") + [0, 0, 0, 0, 0x57]] {
        #expect(errorCode(prefix) == .truncated)
    }
}

@Test func randomBytesAreNotAnImage() {
    var random = SeededRandom(seed: 1)
    for _ in 0..<500 {
        var bytes = (0..<Int.random(in: 1...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        if [0x89, 0xFF, 0x52].contains(bytes[0]) { bytes[0] = 0x00 }
        #expect(errorCode(bytes) == .notAnImage)
    }
}

@Test func readingFromARawBufferMatchesReadingFromAnArray() throws {
    let bytes = Build.vp8x()
    let info = try bytes.withUnsafeBytes { buffer in try ImageHeader.read(buffer, isComplete: true) }
    #expect(info == (try ImageHeader.read(bytes)))
    #expect(throws: ImageHeaderError.self) { try ImageHeader.read(UnsafeRawBufferPointer(start: nil, count: 0), isComplete: true) }
}

@Test func survivesTwoThousandRandomMutationsOfValidHeaders() {
    var random = SeededRandom(seed: 0x5EED)
    let bases = [Build.png(), Build.jpeg(), Build.jpeg(before: [Build.exifApp1(size: 2000)]), Build.vp8(), Build.vp8l(), Build.vp8x()]
    var outcomes = [String: Int]()
    for _ in 0..<2_000 {
        var bytes = bases.randomElement(using: &random) ?? []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let at = Int.random(in: 0..<max(bytes.count, 1), using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 1 where !bytes.isEmpty: bytes[at] = [0x00, 0x01, 0x02, 0xFF, 0xD8, 0xD9, 0xDA][Int.random(in: 0..<7, using: &random)]
            case 2: bytes = Array(bytes.prefix(at))
            case 3: bytes.insert(contentsOf: [0xFF, UInt8.random(in: 0...255, using: &random)], at: min(at, bytes.count))
            case 4 where at + 4 <= bytes.count: bytes.replaceSubrange(at..<at + 4, with: [0xFF, 0xFF, 0xFF, 0xFF])
            default: bytes.removeSubrange(at..<min(at + Int.random(in: 1...8, using: &random), bytes.count))
            }
        }
        let isComplete = Bool.random(using: &random)
        do {
            let info = try ImageHeader.read(bytes, isComplete: isComplete)
            #expect(info.width > 0 && info.height > 0)
            outcomes["ok", default: 0] += 1
        } catch {
            #expect(!error.message.isEmpty)
            outcomes[error.code.rawValue, default: 0] += 1
        }
    }
    #expect(outcomes.values.reduce(0, +) == 2_000)
    #expect(outcomes.count >= 3)  // the mutations reach successes and several kinds of failure
}
