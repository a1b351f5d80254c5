import Testing

@testable import HoardCore

/// `magic` at `offset`, padded with zeros to `count` bytes.
private func head(_ magic: [UInt8], at offset: Int = 0, count: Int = 1024) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: max(count, offset + magic.count))
    bytes.replaceSubrange(offset..<offset + magic.count, with: magic)
    return bytes
}

private func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

@Test(arguments: [[0x50, 0x4B, 0x03, 0x04], [0x50, 0x4B, 0x05, 0x06], [0x50, 0x4B, 0x07, 0x08]] as [[UInt8]])
func zipSignaturesAreRecognised(_ magic: [UInt8]) {
    #expect(ArchiveSniffer.guess(head(magic)) == .zip)
    // The four bytes alone are enough.
    #expect(ArchiveSniffer.guess(magic) == .zip)
}

@Test(arguments: [[0x50, 0x4B], [0x50, 0x4B, 0x03], [0x50, 0x4B, 0x01, 0x02], [0x50, 0x4B, 0x03, 0x05]] as [[UInt8]])
func almostZipSignaturesAreNotZip(_ magic: [UInt8]) {
    #expect(ArchiveSniffer.guess(magic) != .zip)
}

@Test func gzipIsRecognised() {
    #expect(ArchiveSniffer.guess([0x1F, 0x8B, 0x08, 0x00]) == .gzip)
    #expect(ArchiveSniffer.guess([0x1F, 0x8B]) == .gzip)
    #expect(ArchiveSniffer.guess([0x1F, 0x8C, 0x08]) == .unknown)
}

@Test func tarIsRecognisedByItsUstarMagic() {
    #expect(ArchiveSniffer.guess(head(ascii("ustar\u{0}00"), at: 257, count: 512)) == .tar)
    #expect(ArchiveSniffer.guess(head(ascii("ustar  \u{0}"), at: 257, count: 512)) == .tar)
    // Just long enough to hold the magic.
    #expect(ArchiveSniffer.guess(head(ascii("ustar"), at: 257, count: 262)) == .tar)
}

@Test func tarMagicElsewhereOrCutShortIsUnknown() {
    #expect(ArchiveSniffer.guess(head(ascii("ustar"), at: 256, count: 512)) == .unknown)
    #expect(ArchiveSniffer.guess(head(ascii("ustar"), at: 258, count: 512)) == .unknown)
    #expect(ArchiveSniffer.guess(Array(head(ascii("ustar"), at: 257, count: 512).prefix(261))) == .unknown)
}

@Test(arguments: [
    ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], "7-Zip"),
    ([0x52, 0x61, 0x72, 0x21, 0x1A, 0x07, 0x00], "RAR"),
    ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], "xz"),
    ([0x42, 0x5A, 0x68, 0x39], "bzip2"),
    ([0x28, 0xB5, 0x2F, 0xFD], "zstd"),
    ([0x04, 0x22, 0x4D, 0x18], "lz4"),
    ([0x5D, 0x00, 0x00, 0x80], "lzma"),
    ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG"),
    ([0xFF, 0xD8, 0xFF, 0xE0], "JPEG"),
    (Array("%PDF-1.7".utf8), "PDF"),
    (Array("GDPC".utf8), "Godot"),
    (Array("MSCF".utf8), "cabinet"),
    (Array("xar!".utf8), "xar"),
    (Array("!<arch>\n".utf8), "ar archive"),
] as [([UInt8], String)])
func refusedFormatsAreNamed(_ magic: [UInt8], _ name: String) {
    guard case .unsupported(let shown) = ArchiveSniffer.guess(head(magic)) else {
        Issue.record("\(name) was not named as unsupported")
        return
    }
    #expect(shown.contains(name))
}

@Test func riffFilesAreNamedWebPOrRIFF() {
    #expect(ArchiveSniffer.guess(head(ascii("RIFF\u{10}\u{0}\u{0}\u{0}WEBPVP8 "))) == .unsupported("a WebP image"))
    #expect(ArchiveSniffer.guess(head(ascii("RIFF\u{10}\u{0}\u{0}\u{0}WAVEfmt "))) == .unsupported("a RIFF file"))
}

@Test func isoImagesAreNamedOnlyWhenTheHeadReachesTheirMagic() {
    let iso = head(ascii("CD001"), at: 0x8001, count: 0x8006)
    #expect(ArchiveSniffer.guess(iso) == .unsupported("an ISO 9660 disc image"))
    #expect(ArchiveSniffer.guess(Array(iso.prefix(0x8005))) == .unknown)
    #expect(ArchiveSniffer.guess(Array(iso.prefix(1024))) == .unknown)
}

@Test func anEmptyFileIsNamedAsSuch() {
    #expect(ArchiveSniffer.guess([]) == .unsupported("an empty file"))
}

@Test(arguments: [Array("hello, world".utf8), [0x00], [UInt8](repeating: 0, count: 600), Array("{\"name\":1}".utf8)])
func unrecognisedBytesAreUnknown(_ bytes: [UInt8]) {
    #expect(ArchiveSniffer.guess(bytes) == .unknown)
}

@Test func zipWinsOverATarMagicFurtherIn() {
    var bytes = head(ascii("ustar"), at: 257, count: 512)
    bytes.replaceSubrange(0..<4, with: [0x50, 0x4B, 0x03, 0x04])
    #expect(ArchiveSniffer.guess(bytes) == .zip)
}
