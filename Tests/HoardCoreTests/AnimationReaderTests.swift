import Testing

@testable import HoardCore

/// Small animated files built byte by byte: GIF, APNG, animated WebP and WebM headers.
enum Moving {
    /// A GIF of `frames` frames (`delay` hundredths of a second each), frame rectangles of `frame` size.
    static func gif(width: Int = 8, height: Int = 8, frames: Int = 3, delay: Int = 10, frame: (Int, Int)? = nil, trailer: Bool = true) -> [UInt8] {
        let (fw, fh) = frame ?? (width, height)
        var bytes = Build.ascii("GIF89a") + Build.le(width, 2) + Build.le(height, 2) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        for _ in 0..<frames {
            bytes += [0x21, 0xF9, 4, 0] + Build.le(delay, 2) + [0, 0]
            bytes += [0x2C] + Build.le(0, 2) + Build.le(0, 2) + Build.le(fw, 2) + Build.le(fh, 2) + [0, 2, 2, 0x4C, 0x01, 0]
        }
        return bytes + (trailer ? [0x3B] : [])
    }

    /// An APNG declaring `declared` frames and holding `frames` fcTL chunks of `delay` ms.
    static func apng(width: UInt32 = 8, height: UInt32 = 8, frames: Int = 3, declared: Int? = nil, delay: Int = 50) -> [UInt8] {
        var sequence: UInt32 = 0
        func fctl(_ w: UInt32 = width) -> [UInt8] {
            defer { sequence += 1 }
            return Build.pngChunk("fcTL", Build.be32(sequence) + Build.be32(w) + Build.be32(height) + Build.be32(0) + Build.be32(0)
                + Build.be16(delay) + Build.be16(1000) + [0, 0])
        }
        var bytes = ImageHeader.pngSignature + Build.pngChunk("IHDR", Build.ihdr(width: width, height: height))
        bytes += Build.pngChunk("acTL", Build.be32(UInt32(declared ?? frames)) + Build.be32(0)) + fctl() + Build.pngChunk("IDAT", [1, 2, 3])
        for _ in 1..<frames { bytes += fctl() + Build.pngChunk("fdAT", Build.be32(sequence) + [1, 2, 3]) }
        return bytes + Build.pngChunk("IEND", [])
    }

    /// An animated WebP of `frames` ANMF chunks of `duration` ms, each `frame` pixels.
    static func webp(width: Int = 8, height: Int = 8, frames: Int = 3, duration: Int = 80, frame: (Int, Int)? = nil) -> [UInt8] {
        let (fw, fh) = frame ?? (width, height)
        var chunks = Build.webpChunk("VP8X", [0x02, 0, 0, 0] + Build.le(width - 1, 3) + Build.le(height - 1, 3))
        chunks += Build.webpChunk("ANIM", [0, 0, 0, 0, 0, 0])
        let anmf = Build.le(0, 3) + Build.le(0, 3) + Build.le(fw - 1, 3) + Build.le(fh - 1, 3) + Build.le(duration, 3) + [0]
        for _ in 0..<frames { chunks += Build.webpChunk("ANMF", anmf + Build.webpChunk("VP8L", [0x2F, 0, 0, 0, 0])) }
        return Build.riff(chunks)
    }

    /// One EBML element with an 8-byte size (`size` forces a lie).
    static func ebml(_ id: [UInt8], _ payload: [UInt8], size: Int? = nil) -> [UInt8] {
        id + [0x01] + (0..<7).reversed().map { UInt8(truncatingIfNeeded: (size ?? payload.count) >> (8 * $0)) } + payload
    }

    /// A WebM's headers: EBML, a Segment of unknown size, Info with a duration, Tracks with one video track.
    static func webm(width: Int = 64, height: Int = 48, durationMs: Double = 1500, docType: String = "webm", tracksSize: Int? = nil) -> [UInt8] {
        let header = ebml([0x1A, 0x45, 0xDF, 0xA3], ebml([0x42, 0x82], Build.ascii(docType)))
        let duration = (0..<8).reversed().map { UInt8(truncatingIfNeeded: durationMs.bitPattern >> (8 * UInt64($0))) }
        let info = ebml([0x15, 0x49, 0xA9, 0x66], ebml([0x44, 0x89], duration))
        let video = ebml([0xE0], ebml([0xB0], Build.be32(UInt32(width))) + ebml([0xBA], Build.be32(UInt32(height))))
        let tracks = ebml([0x16, 0x54, 0xAE, 0x6B], ebml([0xAE], ebml([0x83], [1]) + video), size: tracksSize)
        return header + [0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + info + tracks
    }
}

/// The animation `bytes` hold, read as the importer does.
private func animation(_ bytes: [UInt8]) throws -> Animation? {
    let info = try ImageHeader.read(bytes)
    guard AnimationReader.needsScan(bytes, info) else { return nil }
    return try bytes.withUnsafeBytes { buffer throws(ImageHeaderError) in try AnimationReader.read(buffer, info) }
}

@Test func aGIFHeaderGivesItsLogicalScreenSize() throws {
    let info = try ImageHeader.read(Moving.gif(width: 300, height: 200))
    #expect(info == ImageInfo(mediaType: .gif, width: 300, height: 200))
    #expect(MediaType(fileExtension: "gif") == .gif)
}

@Test func anAnimatedGIFCountsItsFramesAndTheirDelays() throws {
    #expect(try animation(Moving.gif(frames: 4, delay: 25)) == Animation(frames: 4, durationMs: 1000))
    #expect(try animation(Moving.gif(frames: 2, trailer: false)) == Animation(frames: 2, durationMs: 200))
}

@Test func aOneFrameGIFIsAStill() throws {
    #expect(try animation(Moving.gif(frames: 1)) == nil)
}

@Test func anAPNGCountsItsFrameControlChunks() throws {
    #expect(try animation(Moving.apng(frames: 3, delay: 40)) == Animation(frames: 3, durationMs: 120))
}

@Test func aPlainPNGNeedsNoScan() {
    let png = Build.png(width: 8, height: 8)
    #expect(!AnimationReader.needsScan(png, ImageInfo(mediaType: .png, width: 8, height: 8)))
}

@Test func anAnimatedWebPCountsItsFrames() throws {
    #expect(try animation(Moving.webp(frames: 5, duration: 70)) == Animation(frames: 5, durationMs: 350))
    #expect(!AnimationReader.needsScan(Build.vp8x(), ImageInfo(mediaType: .webp, width: 4000, height: 3000)))
}

@Test func framesThatLieOutsideThePictureAreRefused() {
    #expect(throws: ImageHeaderError.self) { try animation(Moving.gif(width: 4, height: 4, frames: 2, frame: (8, 8))) }
    #expect(throws: ImageHeaderError.self) { try animation(Moving.webp(width: 4, height: 4, frames: 2, frame: (9, 9))) }
}

@Test func anAPNGWhoseFrameCountLiesIsRefused() {
    let error = #expect(throws: ImageHeaderError.self) { try animation(Moving.apng(frames: 3, declared: 2)) }
    #expect(error?.code == .malformed)
    #expect(error?.message.contains("declares 2") == true)
}

@Test func truncatedAnimationsAreRefused() {
    let gif = Moving.gif(frames: 3)
    #expect(throws: ImageHeaderError.self) { try animation(Array(gif.prefix(gif.count - 6))) }
    let webp = Moving.webp(frames: 3)
    #expect(throws: ImageHeaderError.self) { try animation(Array(webp.prefix(webp.count - 3))) }
}

@Test func aWebMHeaderGivesItsVideoSizeAndDuration() throws {
    let info = try ImageHeader.read(Moving.webm(width: 1920, height: 1080, durationMs: 2500))
    #expect(info == ImageInfo(mediaType: .webm, width: 1920, height: 1080, animation: Animation(frames: nil, durationMs: 2500)))
}

@Test func aWebMWhoseElementSizesLieIsRefused() {
    let error = #expect(throws: ImageHeaderError.self) { try ImageHeader.read(Moving.webm(tracksSize: 5000)) }
    #expect(error?.code == .malformed)
}

@Test func aMatroskaFileIsNotAWebM() {
    let error = #expect(throws: ImageHeaderError.self) { try ImageHeader.read(Moving.webm(docType: "matroska")) }
    #expect(error?.code == .notAnImage)
}

@Test func aWebMPrefixWithoutItsTracksIsTruncated() {
    let full = Moving.webm()
    let error = #expect(throws: ImageHeaderError.self) { try ImageHeader.read(Array(full.prefix(full.count - 10)), isComplete: false) }
    #expect(error?.code == .truncated)
}

@Test func everyPrefixOfAMovingFileIsReadWithoutCrashing() {
    for file in [Moving.gif(), Moving.apng(), Moving.webp(), Moving.webm()] {
        for length in 0..<file.count {
            let prefix = Array(file.prefix(length))
            _ = try? ImageHeader.read(prefix, isComplete: false)
            _ = try? animation(prefix)
        }
    }
}
