import Testing

@testable import HoardCore

/// A context with the built-in kinds and a `pack.json` given as JSON text (none by default).
private func context(packJSON: String? = nil) throws -> ConventionContext {
    var packFile = PackFile()
    if let packJSON { packFile = try PackFile.parse(Array(packJSON.utf8)).get() }
    return ConventionContext(packFile: packFile, kinds: BuiltInKind.all)
}

/// What the default convention reads from `path` (components split on `/`).
private func interpret(_ path: String, packJSON: String? = nil) throws -> AssetNaming? {
    let entry = EntryPath(components: path.split(separator: "/").map(String.init))
    return try DefaultNamingConvention().interpret(entry, context: context(packJSON: packJSON))
}

/// The naming of `path`, which must be recognised.
private func naming(_ path: String, packJSON: String? = nil) throws -> AssetNaming {
    try #require(try interpret(path, packJSON: packJSON), "\(path) should be named")
}

/// The problem `path` is refused with.
private func problem(_ path: String, packJSON: String? = nil) -> Problem? {
    #expect(throws: Problem.self) { try interpret(path, packJSON: packJSON) }
}

/// A footprint to compare with (nil, and so never equal, for an invalid size).
private func footprint(_ width: Int, _ height: Int) -> Footprint? {
    Footprint(width: width, height: height)
}

@Test(arguments: [
    ("tokens", AssetKind.token), ("token", .token), ("Tokens", .token), ("TOKEN", .token),
    ("objects", .object), ("Object", .object), ("textures", .texture), ("TEXTURE", .texture),
    ("walls", .wall), ("Wall", .wall), ("backgrounds", .background), ("BackGround", .background),
])
func theKindComesFromTheTopFolderInAnyCaseSingularOrPlural(_ folder: String, _ kind: AssetKind) throws {
    let result = try naming("\(folder)/stone.png")
    #expect(result.kind == kind)
    #expect(result.name == "stone")
    #expect(result.footprint == .single)
    #expect(result.scale == 1)
}

@Test func anUnderscoreSuffixGivesTheFootprint() throws {
    #expect(try naming("tokens/ogre_2x2.png").footprint == footprint(2, 2))
    #expect(try naming("tokens/ogre_2x2.png").name == "ogre")
    #expect(try naming("objects/door_1x2.png").footprint == footprint(1, 2))
    #expect(try naming("objects/door_2x1.png").footprint == footprint(2, 1))
    #expect(try naming("objects/table_3X4.png").footprint == footprint(3, 4))
    #expect(try naming("tokens/titan_32x32.png").footprint == footprint(32, 32))
}

@Test func aBracketSuffixGivesTheFootprint() throws {
    let dragon = try naming("tokens/dragon [4x4].png")
    #expect(dragon.name == "dragon")
    #expect(dragon.footprint == footprint(4, 4))
    #expect(try naming("objects/long table [1x3].png").footprint == footprint(1, 3))
    #expect(try naming("objects/long table [1x3].png").name == "long table")
}

@Test func somethingThatOnlyLooksLikeAFootprintStaysInTheName() throws {
    #expect(try naming("tokens/ogre_big.png").name == "ogre_big")
    #expect(try naming("tokens/ogre_big.png").footprint == .single)
    #expect(try naming("tokens/fox_x2.png").name == "fox_x2")
    #expect(try naming("tokens/fox_2x.png").name == "fox_2x")
    #expect(try naming("tokens/fox_2x2x2.png").name == "fox_2x2x2")
}

@Test(arguments: ["0x2", "2x0", "40x40", "33x1", "1x33"])
func aFootprintOutsideOneTo32TilesIsRefused(_ size: String) {
    #expect(problem("tokens/ogre_\(size).png")?.code == .badFootprint)
    #expect(problem("tokens/ogre [\(size)].png")?.code == .badFootprint)
}

@Test(arguments: DefaultNamingConvention.sizeWords.keys.sorted(), ["_", "-", " [", " ("])
func sizeWordsGiveTokensTheirFootprint(_ word: String, _ form: String) throws {
    let closer = form == " [" ? "]" : form == " (" ? ")" : ""
    let side = try #require(DefaultNamingConvention.sizeWords[word])
    for spelling in [word, word.uppercased()] {
        let result = try naming("tokens/rat\(form)\(spelling)\(closer).png")
        #expect(result.name == "rat")
        #expect(result.footprint == footprint(side, side))
    }
}

@Test func sizeWordsMeanWhatTheProductSays() {
    #expect(DefaultNamingConvention.sizeWords == ["tiny": 1, "small": 1, "medium": 1, "large": 2, "huge": 3, "gargantuan": 4])
}

@Test(arguments: ["objects", "textures", "walls", "backgrounds"])
func sizeWordsAreOnlyReadForTokens(_ folder: String) throws {
    let result = try naming("\(folder)/crate_large.png")
    #expect(result.name == "crate_large")
    #expect(result.footprint == .single)
}

@Test func anExplicitFootprintWinsOverASizeWordLeftInTheName() throws {
    let result = try naming("tokens/ogre-large_3x3.png")
    #expect(result.footprint == footprint(3, 3))
    #expect(result.name == "ogre-large")
}

@Test(arguments: [("", 1), ("@1x", 1), ("@2x", 2), ("@3x", 3), ("@4x", 4), ("@8x", 8), ("@2X", 2)])
func anAtSuffixGivesTheLODScale(_ suffix: String, _ scale: Int) throws {
    let result = try naming("textures/stone-floor\(suffix).png")
    #expect(result.scale == scale)
    #expect(result.name == "stone-floor")
}

@Test func footprintAndScaleCombineInEitherForm() throws {
    let bracket = try naming("tokens/dragon [4x4]@2x.png")
    #expect(bracket.name == "dragon")
    #expect(bracket.footprint == footprint(4, 4))
    #expect(bracket.scale == 2)
    let underscore = try naming("tokens/ogre_2x2@8x.webp")
    #expect(underscore.footprint == footprint(2, 2))
    #expect(underscore.scale == 8)
}

@Test(arguments: ["@5x", "@0x", "@6x", "@16x", "@7X"])
func anUnsupportedScaleIsRefused(_ suffix: String) throws {
    let refused = try #require(problem("textures/stone\(suffix).png"))
    #expect(refused.code == .badScale)
    #expect(refused.entry == "textures/stone\(suffix).png")
}

@Test func anAtSignThatIsNotAScaleStaysInTheName() throws {
    #expect(try naming("tokens/me@home.png").name == "me@home")
    #expect(try naming("tokens/me@home.png").scale == 1)
}

@Test func subfoldersBecomePartOfTheName() throws {
    let result = try naming("tokens/monsters/undead/ghoul_2x2@2x.png")
    #expect(result.kind == .token)
    #expect(result.name == "monsters/undead/ghoul")
    #expect(result.footprint == footprint(2, 2))
    #expect(result.scale == 2)
}

@Test(arguments: ["misc/goblin.png", "art/tokens/goblin.png", "goblin.png", "pack.json"])
func aFileOutsideEveryKindsFolderIsNotNamed(_ path: String) throws {
    #expect(try interpret(path) == nil)
}

@Test(arguments: ["tokens/readme.txt", "tokens/goblin.gif", "tokens/goblin", "tokens/.png", "tokens/goblin.png.zip"])
func aFileWithoutAnImageExtensionIsNotNamed(_ path: String) throws {
    #expect(try interpret(path) == nil)
}

@Test(arguments: ["png", "PNG", "jpg", "JPEG", "webp", "WebP"])
func imageExtensionsAreRecognisedInAnyCase(_ ext: String) throws {
    #expect(try interpret("tokens/goblin.\(ext)") != nil)
}

@Test(arguments: ["tokens/_2x2.png", "tokens/@2x.png", "tokens/ [3x3].png"])
func aFileNameThatLeavesNoNameIsRefused(_ path: String) throws {
    #expect(problem(path)?.code == .invalidName)
}

@Test func packJSONKindsMapUnknownFoldersToKinds() throws {
    let json = #"{"kinds": {"creatures": "token", "Props": "object"}}"#
    #expect(try naming("Creatures/imp_large.png", packJSON: json).kind == .token)
    #expect(try naming("Creatures/imp_large.png", packJSON: json).footprint == footprint(2, 2))
    #expect(try naming("props/barrel.png", packJSON: json).kind == .object)
    #expect(try interpret("creatures/imp.png") == nil)
}

@Test func packJSONKindsWinOverTheRegisteredFolders() throws {
    #expect(try naming("walls/brick.png", packJSON: #"{"kinds": {"walls": "texture"}}"#).kind == .texture)
}

@Test func aPackJSONFolderMappedToAnUnregisteredKindIsNotNamed() throws {
    #expect(try interpret("vehicles/cart.png", packJSON: #"{"kinds": {"vehicles": "vehicle"}}"#) == nil)
}

@Test func overridesAreKeyedByThePathWithoutLODSuffixAndExtension() throws {
    let json = #"""
        {"overrides": {"tokens/ogre_2x2": {"name": "Ogre Chief", "footprint": {"width": 3, "height": 3}, "kind": "object"}}}
        """#
    for path in ["tokens/ogre_2x2.png", "tokens/ogre_2x2@2x.png", "tokens/ogre_2x2@4X.webp"] {
        let result = try naming(path, packJSON: json)
        #expect(result.name == "Ogre Chief")
        #expect(result.footprint == footprint(3, 3))
        #expect(result.kind == .object)
    }
    // Another file of the same folder is untouched.
    let other = try naming("tokens/ogre_1x1.png", packJSON: json)
    #expect(other.name == "ogre")
    #expect(other.kind == .token)
}

@Test func overridesKeepWhatTheyDoNotMention() throws {
    let json = #"{"overrides": {"tokens/monsters/dragon [4x4]": {"name": "Red Dragon"}}}"#
    let result = try naming("tokens/monsters/dragon [4x4]@2x.png", packJSON: json)
    #expect(result.name == "Red Dragon")
    #expect(result.footprint == footprint(4, 4))
    #expect(result.kind == .token)
    #expect(result.scale == 2)
}

@Test func anOverrideToAnUnregisteredKindIsABadManifest() throws {
    let json = #"{"overrides": {"tokens/cart": {"kind": "vehicle"}}}"#
    let refused = try #require(problem("tokens/cart@2x.png", packJSON: json))
    #expect(refused.code == .badManifest)
    #expect(refused.message.contains("vehicle"))
    #expect(refused.entry == "tokens/cart@2x.png")
}
