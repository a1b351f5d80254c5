import Foundation
import HoardTestSupport
import Testing

@testable import HoardCore

/// A digest whose bytes are all `byte`.
private func digest(_ byte: UInt8) throws -> Digest {
    try #require(Digest(bytes: [UInt8](repeating: byte, count: 32)))
}

private func variant(_ scale: Int, byte: UInt8, type: MediaType = .png, generated: Bool? = nil) throws -> AssetDescriptor.Variant {
    AssetDescriptor.Variant(
        scale: scale, digest: try digest(byte), width: 100 * scale, height: 50 * scale, size: Int64(1000 * scale + Int(byte)),
        mediaType: type, generated: generated)
}

private func descriptor(variants: [AssetDescriptor.Variant]) throws -> AssetDescriptor {
    AssetDescriptor(kind: .token, name: "monsters/ogre", footprint: try #require(Footprint(width: 2, height: 1)), variants: variants)
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Test func aDescriptorEncodesToExactlyTheCanonicalBytes() throws {
    let encoded = try CanonicalJSON.encode(descriptor(variants: [variant(1, byte: 0xAB), variant(2, byte: 0x01, type: .webp)]))
    let hexAB = String(repeating: "ab", count: 32)
    let hex01 = String(repeating: "01", count: 32)
    let expected = #"{"footprint":{"height":1,"width":2},"kind":"token","name":"monsters/ogre","schema":"hoard.asset/v1","#
        + #""variants":[{"digest":"sha256:\#(hexAB)","height":50,"mediaType":"image/png","scale":1,"size":1171,"width":100},"#
        + #"{"digest":"sha256:\#(hex01)","height":100,"mediaType":"image/webp","scale":2,"size":2001,"width":200}]}"#
    #expect(text(encoded) == expected)
}

@Test func encodingTheSameDescriptorAgainGivesTheSameBytes() throws {
    let value = try descriptor(variants: [variant(1, byte: 1), variant(2, byte: 2), variant(4, byte: 4, generated: true)])
    let first = try CanonicalJSON.encode(value)
    for _ in 0..<20 {
        #expect(try CanonicalJSON.encode(value) == first)
        // A decoded copy is the same value and encodes to the same bytes.
        let copy = try JSONDecoder().decode(AssetDescriptor.self, from: Data(first))
        #expect(copy == value)
        #expect(try CanonicalJSON.encode(copy) == first)
    }
}

@Test func theOrderVariantsAreGivenInDoesNotChangeTheBytes() throws {
    let variants = try [variant(1, byte: 1), variant(2, byte: 2), variant(3, byte: 3), variant(4, byte: 4), variant(8, byte: 8)]
    let reference = try CanonicalJSON.encode(descriptor(variants: variants))
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20 {
        let shuffled = variants.shuffled(using: &generator)
        #expect(try CanonicalJSON.encode(descriptor(variants: shuffled)) == reference)
    }
    #expect(try CanonicalJSON.encode(descriptor(variants: variants.reversed())) == reference)
    #expect(try descriptor(variants: variants.reversed()).variants.map(\.scale) == [1, 2, 3, 4, 8])
}

@Test func theOrderAssetsAreGivenInDoesNotChangeAManifest() throws {
    let entries = try [
        PackManifest.Entry(digest: digest(1), kind: .wall, name: "brick"),
        PackManifest.Entry(digest: digest(2), kind: .token, name: "ogre"),
        PackManifest.Entry(digest: digest(3), kind: .token, name: "goblin"),
        PackManifest.Entry(digest: digest(4), kind: .background, name: "parchment"),
    ]
    let reference = try CanonicalJSON.encode(PackManifest(name: "p", version: "1", packFile: PackFile(), assets: entries))
    for order in [entries.reversed(), [entries[2], entries[0], entries[3], entries[1]]] {
        #expect(try CanonicalJSON.encode(PackManifest(name: "p", version: "1", packFile: PackFile(), assets: Array(order))) == reference)
    }
    let names = PackManifest(name: "p", version: "1", packFile: PackFile(), assets: entries).assets.map(\.name)
    #expect(names == ["parchment", "goblin", "ogre", "brick"])
}

@Test func objectKeysAreSortedAtEveryLevel() throws {
    let value: [String: [String: Int]] = ["zeta": ["b": 1, "a": 2, "C": 3], "alpha": ["y": 1, "x": 2], "Mid": [:]]
    let encoded = text(try CanonicalJSON.encode(value))
    #expect(encoded == #"{"Mid":{},"alpha":{"x":2,"y":1},"zeta":{"C":3,"a":2,"b":1}}"#)
}

@Test func dictionariesEncodeTheSameEveryTime() throws {
    // Swift dictionaries iterate in a per-process random order; canonical output must not.
    var value: [String: Int] = [:]
    for index in 0..<200 { value["key\(index)"] = index }
    let first = try CanonicalJSON.encode(value)
    for _ in 0..<10 {
        let rebuilt = Dictionary(uniqueKeysWithValues: value.shuffled().map { ($0.key, $0.value) })
        #expect(try CanonicalJSON.encode(rebuilt) == first)
    }
}

@Test func theOutputHoldsNoInsignificantWhitespace() throws {
    let value = try descriptor(variants: [variant(1, byte: 9), variant(2, byte: 10)])
    let encoded = try CanonicalJSON.encode(value)
    for space: UInt8 in [0x20, 0x0A, 0x0D, 0x09] {
        #expect(!encoded.contains(space))
    }
    // Spaces inside strings are data and stay.
    let named = AssetDescriptor(kind: .token, name: "big ogre", footprint: .single, variants: [])
    #expect(text(try CanonicalJSON.encode(named)).contains(#""name":"big ogre""#))
}

@Test func slashesAreNotEscaped() throws {
    let encoded = text(try CanonicalJSON.encode(descriptor(variants: [variant(1, byte: 7)])))
    #expect(encoded.contains(#""name":"monsters/ogre""#))
    #expect(encoded.contains(#""mediaType":"image/png""#))
    #expect(!encoded.contains(#"\/"#))
}

@Test func equalDescriptorsGiveEqualBytesAndDifferentOnesDiffer() throws {
    let a = try CanonicalJSON.encode(descriptor(variants: [variant(1, byte: 1)]))
    let b = try CanonicalJSON.encode(descriptor(variants: [variant(1, byte: 1)]))
    let c = try CanonicalJSON.encode(descriptor(variants: [variant(1, byte: 2)]))
    #expect(a == b)
    #expect(a != c)
}

// MARK: - The direct writer against JSONEncoder, which defines the bytes

/// Text drawn from characters that need care in JSON: quotes, backslashes, slashes, every control character, DEL,
/// non-ASCII letters, astral emoji, line and paragraph separators, a byte-order mark.
private func awkwardText(_ generator: inout some RandomNumberGenerator) -> String {
    let pool: [Character] = ["a", "Z", "0", " ", "/", "\"", "\\", "é", "ß", "龍", "😀", "\u{7F}", "\u{2028}", "\u{2029}", "\u{FEFF}", "_", "-"]
        + (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }
    return String((0..<Int.random(in: 0...12, using: &generator)).map { _ in pool.randomElement(using: &generator)! })
}

private func someDigest(_ generator: inout some RandomNumberGenerator) throws -> Digest {
    try #require(Digest(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }))
}

private func randomDescriptor(_ generator: inout some RandomNumberGenerator) throws -> AssetDescriptor {
    let variants = try (0..<Int.random(in: 0...4, using: &generator)).map { index in
        AssetDescriptor.Variant(
            scale: index + 1, digest: try someDigest(&generator), width: Int.random(in: 1...16384, using: &generator),
            height: Int.random(in: 1...16384, using: &generator), size: Int64.random(in: 0...Int64.max, using: &generator),
            mediaType: [MediaType.png, .jpeg, .webp].randomElement(using: &generator)!,
            generated: [nil, true, false].randomElement(using: &generator)!)
    }
    var descriptor = AssetDescriptor(
        kind: AssetKind(rawValue: awkwardText(&generator)), name: awkwardText(&generator),
        footprint: try #require(Footprint(width: Int.random(in: 1...4, using: &generator), height: Int.random(in: 1...4, using: &generator))),
        variants: variants)
    if Bool.random(using: &generator) {
        descriptor.preview = AssetDescriptor.Rendition(digest: try someDigest(&generator), width: 32, height: 64, size: 999, mediaType: .webp)
    }
    if Bool.random(using: &generator) {
        descriptor.thumbnail = AssetDescriptor.Rendition(digest: try someDigest(&generator), width: 256, height: 128, size: -1, mediaType: .png)
    }
    return descriptor
}

@Test func theDirectWriterGivesJSONEncodersBytesForDescriptorsAndManifests() throws {
    var generator = SystemRandomNumberGenerator()
    var entries: [PackManifest.Entry] = []
    for _ in 0..<400 {
        let descriptor = try randomDescriptor(&generator)
        // `fast` must accept descriptors: were it to hand them all back, this test would prove nothing about it.
        let direct = try CanonicalJSON.fast(descriptor)
        #expect(direct == (try CanonicalJSON.reference(descriptor)), "\(descriptor)")
        #expect(try CanonicalJSON.encode(descriptor) == direct)
        entries.append(PackManifest.Entry(digest: try someDigest(&generator), kind: descriptor.kind, name: descriptor.name))
    }
    var packFile = PackFile()
    packFile.author = awkwardText(&generator)
    packFile.description = awkwardText(&generator)
    packFile.tilePixels = 128
    let manifest = PackManifest(name: awkwardText(&generator), version: "7", packFile: packFile, assets: entries)
    #expect(try CanonicalJSON.fast(manifest) == (try CanonicalJSON.reference(manifest)))
    // pack.json as a value, with dictionaries keyed by awkward ASCII.
    packFile.kinds = ["Props": .object, "a/b": .token, "-x": .wall, "a10": .texture, "a9": .background]
    packFile.plugins = ["hoard.strip-metadata": false, "Z": true]
    packFile.overrides = ["tokens/ogre_2x2": PackFile.Override(kind: .token, name: "Ogre", footprint: .single), "~": PackFile.Override()]
    #expect(try CanonicalJSON.fast(packFile) == (try CanonicalJSON.reference(packFile)))
}

@Test func theDirectWriterHandsBackWhatJSONEncoderTreatsItsOwnWay() throws {
    struct WithSuper: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(1, forKey: AnyKey("a"))
            _ = container.superEncoder()
        }
    }
    struct Twice: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(1, forKey: AnyKey("a"))
            try container.encode(2, forKey: AnyKey("a"))
        }
    }
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ value: String) { stringValue = value }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
    func handsBack<T: Encodable>(_ value: T) throws {
        #expect(throws: CanonicalJSON.Unsupported.self) { try CanonicalJSON.fast(value) }
        #expect(try CanonicalJSON.encode(value) == CanonicalJSON.reference(value))
    }
    try handsBack(["x": 1.5])
    try handsBack(["when": Date(timeIntervalSince1970: 12)])
    try handsBack(["bytes": Data([1, 2, 3])])
    try handsBack(["url": URL(string: "https://example.com/a")!])
    try handsBack(["é": 1])
    try handsBack(["a\"b": 1])
    try handsBack(WithSuper())
    try handsBack(Twice())
    // Inside the subset both agree, nested and empty containers included.
    let nested: [String: [[String: [Int]]]] = ["b": [["y": [], "x": [1, -2, Int.max]]], "a": [], "": [[:]]]
    #expect(try CanonicalJSON.fast(nested) == CanonicalJSON.reference(nested))
    #expect(try CanonicalJSON.fast([Int?.none, 3, nil]) == CanonicalJSON.reference([Int?.none, 3, nil]))
}

/// A random JSON document: awkward strings, numbers of every magnitude, nesting.
private func randomDocument(_ random: inout SeededRandom, depth: Int = 0) -> JSONValue {
    let strings = ["", "a/b", "quote\"back\\slash", "tab\tnew\nline\u{1}", "Éclair ☃ 😀", "sha256:" + String(repeating: "0f", count: 32)]
    switch random.next(upperBound: depth > 3 ? 4 : 6) {
    case 0: return .string(strings[Int(random.next(upperBound: UInt64(strings.count)))])
    case 1:
        let magnitude = pow(10, Double(Int(random.next(upperBound: 30))) - 12)
        let value = (Double(random.next(upperBound: 2_000_001)) / 1_000_000 - 1) * magnitude
        return .number(random.next(upperBound: 3) == 0 ? value.rounded() : value)
    case 2: return .bool(random.next(upperBound: 2) == 0)
    case 3: return random.next(upperBound: 2) == 0 ? .null : .number(Double(Int(random.next(upperBound: 1_000_000))) - 500_000)
    case 4: return .array((0..<Int(random.next(upperBound: 5))).map { _ in randomDocument(&random, depth: depth + 1) })
    default:
        let keys = ["id", "x", "y", "tokens", "a", "B", "_z", "kind", "points"]
        return .object(Dictionary((0..<Int(random.next(upperBound: 6))).map { _ in
            (keys[Int(random.next(upperBound: UInt64(keys.count)))], randomDocument(&random, depth: depth + 1))
        }) { first, _ in first })
    }
}

@Test func aDocumentIsWrittenExactlyAsJSONEncoderWritesIt() throws {
    var random = SeededRandom(seed: 42)
    for _ in 0..<3_000 {
        let document = randomDocument(&random)
        #expect(text(try CanonicalJSON.document(document)) == text(try CanonicalJSON.reference(document)))
    }
    // What it leaves to JSONEncoder: keys to escape or outside ASCII.
    #expect(throws: CanonicalJSON.Unsupported.self) { try CanonicalJSON.document(.object(["é": .null])) }
    #expect(throws: CanonicalJSON.Unsupported.self) { try CanonicalJSON.document(.object(["a\"b": .null])) }
}
