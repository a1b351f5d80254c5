import Foundation
import Testing

@testable import HoardCore

/// SHA-256 of the empty string (FIPS 180-2 test vector).
private let emptyHex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// SHA-256 of "abc" (FIPS 180-2 test vector).
private let abcHex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

/// A digest whose 32 bytes are all zero except `last` at the end and `first` at the start.
private func digest(first: UInt8 = 0, last: UInt8) throws -> Digest {
    var bytes = [UInt8](repeating: 0, count: 32)
    bytes[0] = first
    bytes[31] = last
    return try #require(Digest(bytes: bytes))
}

@Test(arguments: [emptyHex, abcHex, String(repeating: "0", count: 64), String(repeating: "f", count: 64)])
func parsingThenPrintingADigestGivesBackTheSameText(_ hex: String) throws {
    let text = "sha256:" + hex
    let parsed = try #require(Digest(text))
    #expect(parsed.description == text)
    #expect(parsed.hex == hex)
    #expect(Digest(parsed.description) == parsed)
}

@Test func rawBytesAndHexDescribeTheSameDigest() throws {
    let bytes = (0..<32).map { UInt8($0 * 7 + 1) }
    let fromBytes = try #require(Digest(bytes: bytes))
    #expect(fromBytes.bytes == bytes)
    let expectedHex = bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
    #expect(fromBytes.hex == expectedHex)
    #expect(Digest("sha256:" + expectedHex) == fromBytes)
}

@Test(arguments: [0, 1, 31, 33, 64])
func digestFromRawBytesNeedsExactly32Bytes(_ count: Int) {
    #expect(Digest(bytes: [UInt8](repeating: 0xAB, count: count)) == nil)
    #expect([UInt8](repeating: 0xAB, count: count).withUnsafeBytes { Digest(raw: $0) } == nil)
}

@Test func rawMemoryAndByteCollectionsGiveTheSameDigest() throws {
    let bytes = (0..<40).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
    for start in 0...8 {  // unaligned starts too
        let slice = bytes[start..<(start + 32)]
        let fromMemory = try #require(bytes.withUnsafeBytes { Digest(raw: UnsafeRawBufferPointer(rebasing: $0[start..<(start + 32)])) })
        #expect(fromMemory == Digest(bytes: slice))
        #expect(fromMemory.bytes == Array(slice))
    }
}

@Test func parsingRejectsUppercaseHex() {
    #expect(Digest("sha256:" + abcHex.uppercased()) == nil)
    // One uppercase letter anywhere is enough to refuse it.
    var mixed = Array(abcHex)
    mixed[63] = "D"
    #expect(Digest("sha256:" + String(mixed)) == nil)
    #expect(Digest("sha256:" + abcHex) != nil)
}

@Test(arguments: [
    "sha256:" + String(abcHex.dropLast()),  // 63 digits
    "sha256:" + abcHex + "0",  // 65 digits
    "sha256:",
    "",
    abcHex,  // no prefix
])
func parsingRejectsTooShortOrTooLongText(_ text: String) {
    #expect(Digest(text) == nil)
}

@Test(arguments: ["SHA256:", "Sha256:", "sha512:", "sha255:", "sha256-", "sha256 ", ":sha256"])
func parsingRejectsAnyOtherPrefix(_ prefix: String) {
    #expect(prefix.utf8.count == 7)
    #expect(Digest(prefix + abcHex) == nil)
}

@Test(arguments: ["g", "G", " ", "-", ":", "é"])
func parsingRejectsNonHexCharacters(_ bad: String) {
    let text = "sha256:" + String(abcHex.dropLast()) + bad
    #expect(Digest(text) == nil)
}

@Test func digestsEncodeAsTheirTextAndDecodeBack() throws {
    let digest = try #require(Digest("sha256:" + abcHex))
    let data = try JSONEncoder().encode(["blob": digest])
    #expect(String(decoding: data, as: UTF8.self) == #"{"blob":"sha256:\#(abcHex)"}"#)
    let decoded = try JSONDecoder().decode([String: Digest].self, from: data)
    #expect(decoded["blob"] == digest)
}

@Test(arguments: [#"["sha256:\#(abcHex.uppercased())"]"#, #"["sha256:abc"]"#, #"[42]"#, #"["\#(abcHex)"]"#])
func decodingAnInvalidDigestThrows(_ json: String) {
    #expect(throws: DecodingError.self) {
        try JSONDecoder().decode([Digest].self, from: Data(json.utf8))
    }
}

@Test func digestsOrderLikeTheirHexText() throws {
    var digests: [Digest] = []
    for (first, last) in [(0, 2), (0, 1), (1, 0), (255, 0), (0, 255), (16, 16)] {
        digests.append(try digest(first: UInt8(first), last: UInt8(last)))
    }
    #expect(digests.sorted().map(\.hex) == digests.map(\.hex).sorted())
    // The first byte outranks every later one.
    #expect(try digest(first: 1, last: 0) > digest(first: 0, last: 255))
    #expect(try digest(last: 1) < digest(last: 2))
}

@Test func digestOrderingLooksAtEveryWord() throws {
    // Differ only in byte 8, 16 or 24: the start of the second, third and fourth internal words.
    for index in [8, 16, 24] {
        var low = [UInt8](repeating: 0, count: 32)
        var high = low
        low[index + 1] = 0xFF
        high[index] = 0x01
        let a = try #require(Digest(bytes: low))
        let b = try #require(Digest(bytes: high))
        #expect(a < b)
        #expect(!(b < a))
        #expect(a != b)
    }
}

@Test func equalDigestsHashAlikeAndDifferentOnesStayApart() throws {
    let a = try #require(Digest("sha256:" + abcHex))
    let sameAgain = try #require(Digest("sha256:" + String(abcHex)))
    let other = try #require(Digest("sha256:" + emptyHex))
    #expect(a == sameAgain)
    #expect(a.hashValue == sameAgain.hashValue)
    #expect(Set([a, sameAgain, other]).count == 2)
    // Digests that differ only in their last byte are distinct keys.
    let keys = Set(try (0..<64).map { try digest(last: UInt8($0)) })
    #expect(keys.count == 64)
}
