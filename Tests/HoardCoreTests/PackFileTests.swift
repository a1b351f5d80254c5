import Testing

@testable import HoardCore

private func parse(_ json: String) -> Result<PackFile, Problem> {
    PackFile.parse(Array(json.utf8))
}

/// The problem `json` is refused with; records an issue when it is accepted.
private func refusal(_ json: String) throws -> Problem {
    switch parse(json) {
    case .success(let file):
        Issue.record("\(json) was accepted as \(file)")
        throw ProblemMessage("accepted")
    case .failure(let problem):
        return problem
    }
}

@Test func aCompletePackFileIsParsed() throws {
    let json = #"""
        {
          "name": "Goblin Warrens", "version": "2.1", "author": "Ana", "license": "CC-BY-4.0",
          "description": "Caves/tunnels", "tilePixels": 128,
          "kinds": {"creatures": "token", "props": "object"},
          "overrides": {"tokens/ogre_2x2": {"name": "Ogre Chief", "kind": "token", "footprint": {"width": 3, "height": 2}}}
        }
        """#
    let file = try parse(json).get()
    #expect(file.name == "Goblin Warrens")
    #expect(file.version == "2.1")
    #expect(file.author == "Ana")
    #expect(file.license == "CC-BY-4.0")
    #expect(file.description == "Caves/tunnels")
    #expect(file.tilePixels == 128)
    #expect(file.effectiveTilePixels == 128)
    #expect(file.kinds == ["creatures": .token, "props": .object])
    let override = try #require(file.overrides?["tokens/ogre_2x2"])
    #expect(override.name == "Ogre Chief")
    #expect(override.kind == .token)
    #expect(override.footprint == Footprint(width: 3, height: 2))
}

@Test func anEmptyObjectLeavesEveryDefault() throws {
    let file = try parse("{}").get()
    #expect(file == PackFile())
    #expect(file.name == nil)
    #expect(file.overrides == nil)
    #expect(file.effectiveTilePixels == 256)
}

@Test func unknownFieldsAreIgnored() throws {
    let file = try parse(#"{"name": "x", "homepage": "https://example.com", "tags": [1, 2]}"#).get()
    #expect(file.name == "x")
}

@Test(arguments: [
    (#"{"name": 5}"#, "name"),
    (#"{"version": 2}"#, "version"),
    (#"{"author": ["a", "b"]}"#, "author"),
    (#"{"license": true}"#, "license"),
    (#"{"tilePixels": "big"}"#, "tilePixels"),
    (#"{"kinds": ["token"]}"#, "kinds"),
    (#"{"kinds": {"creatures": 1}}"#, "kinds.creatures"),
    (#"{"overrides": {"tokens/ogre": "big"}}"#, "overrides.tokens/ogre"),
    (#"{"overrides": {"tokens/ogre": {"name": 3}}}"#, "overrides.tokens/ogre.name"),
    (#"{"overrides": {"tokens/ogre": {"footprint": {"width": "2", "height": 2}}}}"#, "overrides.tokens/ogre.footprint.width"),
    (#"{"overrides": {"tokens/ogre": {"footprint": {"width": 0, "height": 2}}}}"#, "overrides.tokens/ogre.footprint"),
])
func aFieldOfTheWrongTypeIsABadManifestNamingTheField(_ json: String, _ field: String) throws {
    let problem = try refusal(json)
    #expect(problem.code == .badManifest)
    #expect(problem.severity == .error)
    #expect(problem.entry == "pack.json")
    #expect(problem.message.contains(field), "\(problem.message) should name \(field)")
}

@Test func aMissingFootprintSideIsABadManifestNamingTheField() throws {
    let problem = try refusal(#"{"overrides": {"tokens/ogre": {"footprint": {"width": 2}}}}"#)
    #expect(problem.code == .badManifest)
    #expect(problem.message.contains("overrides.tokens/ogre.footprint"))
    #expect(problem.message.contains("height"))
    // The JSON itself is fine: the report must not send the author looking for a syntax error.
    #expect(!problem.message.contains("not valid JSON"))
}

@Test func aFractionalTilePixelsIsABadManifest() throws {
    let problem = try refusal(#"{"tilePixels": 12.5}"#)
    #expect(problem.code == .badManifest)
    // BUG: Foundation's JSONDecoder reports a fractional number decoded as Int as "The given data was not valid
    // JSON." with an empty coding path, so the report names no field and calls valid JSON invalid. Enable when
    // PackFile.parse names the field for this case too.
    // #expect(problem.message.contains("tilePixels"))
}

@Test(arguments: [8, 9, 256, 4095, 4096])
func tilePixelsFrom8To4096AreAccepted(_ tile: Int) throws {
    let file = try parse(#"{"tilePixels": \#(tile)}"#).get()
    #expect(file.tilePixels == tile)
    #expect(file.effectiveTilePixels == tile)
}

@Test(arguments: [-256, 0, 1, 7, 4097, 65536])
func tilePixelsOutside8To4096AreRefused(_ tile: Int) throws {
    let problem = try refusal(#"{"tilePixels": \#(tile)}"#)
    #expect(problem.code == .badManifest)
    #expect(problem.message.contains("tilePixels"))
    #expect(problem.message.contains("\(tile)"))
}

@Test(arguments: ["", "{", "{name: 1}", "not json at all", "{\"name\": \"x\",}x", "\u{FEFF}\u{0}"])
func textThatIsNotJSONIsABadManifest(_ text: String) throws {
    let problem = try refusal(text)
    #expect(problem.code == .badManifest)
    #expect(problem.entry == "pack.json")
    #expect(!problem.message.isEmpty)
}

@Test(arguments: ["[]", "42", "\"pack\"", "null"])
func jsonThatIsNotAnObjectIsABadManifest(_ text: String) throws {
    #expect(try refusal(text).code == .badManifest)
}

@Test func bytesThatAreNotUTF8AreABadManifest() {
    guard case .failure(let problem) = PackFile.parse([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D]) else {
        Issue.record("invalid UTF-8 was accepted")
        return
    }
    #expect(problem.code == .badManifest)
}

@Test(arguments: ["name", "version"])
func nameAndVersionMustBe1To128PrintableCharacters(_ field: String) throws {
    let longest = String(repeating: "é", count: 64)
    #expect(longest.utf8.count == 128)
    #expect(try parse(#"{"\#(field)": "\#(longest)"}"#).get() != PackFile())
    for bad in ["", longest + "x", "a\\u0007b", "a\\u202Eb", "line\\nbreak"] {
        let problem = try refusal(#"{"\#(field)": "\#(bad)"}"#)
        #expect(problem.code == .badManifest)
        #expect(problem.message.contains("name and version"))
    }
}

@Test func unknownTopLevelKeysAreListedSortedSoTyposCanBeReported() {
    let keys = PackFile.unknownKeys(Array(#"{"tilepixels": 64, "name": "x", "Author": "y", "overrides": {"a": {"bogus": 1}}}"#.utf8))
    #expect(keys == ["Author", "tilepixels"])
    #expect(PackFile.unknownKeys(Array(#"{"name": "x", "tilePixels": 64}"#.utf8)).isEmpty)
    #expect(PackFile.unknownKeys(Array("not json".utf8)).isEmpty)
    #expect(PackFile.unknownKeys(Array(#"["name"]"#.utf8)).isEmpty)
}

/// `grid` says what the art was made for: square by default, hex flat (its default) or pointy; a square grid with an
/// orientation, or a type Hoard does not know, is refused naming the field. The manifest keeps a hex grid only, so a
/// square pack's manifest has the bytes it had before packs could say their grid.
@Test func aPackFileSaysItsGridAndTheManifestKeepsAHexOne() throws {
    #expect(try parse("{}").get().effectiveGrid == .square)
    let hex = try parse(#"{"grid": {"type": "hex", "orientation": "pointy"}, "tilePixels": 72}"#).get()
    #expect(hex.effectiveGrid == PackGrid(type: .hex, orientation: .pointy))
    #expect(try parse(#"{"grid": {"type": "hex"}}"#).get().grid == PackGrid(type: .hex, orientation: .flat))
    for wrong in [#"{"type": "square", "orientation": "flat"}"#, #"{"type": "hexagon"}"#, #"{"type": "hex", "orientation": "up"}"#] {
        let problem = try refusal(#"{"grid": \#(wrong)}"#)
        #expect(problem.code == .badManifest && problem.message.contains("grid"), "\(wrong): \(problem.message)")
    }
    #expect(PackFile.unknownKeys(Array(#"{"grid": {"type": "hex"}}"#.utf8)).isEmpty)
    let entry = PackManifest.Entry(digest: Digest(bytes: [UInt8](repeating: 1, count: 32))!, kind: .texture, name: "grass")
    let square = try CanonicalJSON.encode(PackManifest(name: "p", version: "1", packFile: try parse(#"{"grid": {"type": "square"}}"#).get(), assets: [entry]))
    #expect(!String(decoding: square, as: UTF8.self).contains("grid"))
    let hexManifest = try CanonicalJSON.encode(PackManifest(name: "p", version: "1", packFile: hex, assets: [entry]))
    #expect(String(decoding: hexManifest, as: UTF8.self).contains(#""grid":{"orientation":"pointy","type":"hex"}"#))
}
