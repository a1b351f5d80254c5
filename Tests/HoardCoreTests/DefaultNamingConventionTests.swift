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

@Test(arguments: ["misc/goblin.png", "goblin.png", "pack.json", "Art/Misc/goblin.png"])
func aFileOutsideEveryKindsFolderIsNotNamed(_ path: String) throws {
    #expect(try interpret(path) == nil)
}

@Test(arguments: ["tokens/readme.txt", "tokens/goblin.bmp", "tokens/goblin", "tokens/.png", "tokens/goblin.png.zip"])
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
    #expect(try naming("Beasties/imp.png", packJSON: #"{"kinds": {"beasties": "object"}}"#).kind == .object)
    #expect(try interpret("Beasties/imp.png") == nil)
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

@Test(arguments: [
    ("Creatures", AssetKind.token), ("Monsters", .token), ("units", .token), ("Characters", .token), ("NPC", .token),
    ("Props", .object), ("Items", .object), ("items", .object), ("Furniture", .object),
    ("Terrain", .texture), ("terrain", .texture), ("Tiles", .texture), ("Floors", .texture), ("floor", .texture),
    ("Maps", .background), ("Battlemaps", .background), ("battlemap", .background), ("Battle Maps", .background),
])
func theFolderNamesCreatorsAndOtherToolsUseNameKinds(_ folder: String, _ kind: AssetKind) throws {
    let result = try naming("\(folder)/thing.png")
    #expect(result.kind == kind)
    #expect(result.name == "thing")
}

@Test func theFolderNearestTheFileThatNamesAKindDecidesTheKind() throws {
    let chair = try naming("tokens/props/chair.png")
    #expect(chair.kind == .object)
    #expect(chair.name == "props/chair")
    let wrapped = try naming("Dungeon Pack/Creatures/Goblins/goblin.png")
    #expect(wrapped.kind == .token)
    #expect(wrapped.name == "Dungeon Pack/Goblins/goblin")
    #expect(try naming("art/tokens/goblin.png").name == "art/goblin")
}

@Test func aPictureNoFolderClaimsGetsTheKindTheCallerGives() throws {
    let convention = DefaultNamingConvention()
    let loose = try #require(try convention.interpret(
        EntryPath(components: ["misc", "Ogre_Large.png"]), context: context(), unclaimedKind: .token))
    #expect(loose.kind == .token)
    #expect(loose.name == "misc/Ogre")
    #expect(loose.footprint == footprint(2, 2))
    let root = try #require(try convention.interpret(EntryPath(components: ["crate.png"]), context: context(), unclaimedKind: .object))
    #expect(root.kind == .object)
    #expect(root.name == "crate")
    #expect(try convention.interpret(EntryPath(components: ["notes.txt"]), context: context(), unclaimedKind: .token) == nil)
}

@Test(arguments: [
    ("Goblin_Archer_A1_Medium_01", "Goblin_Archer_A1_01", 1), ("Red_Dragon_Adult_Huge_A1", "Red_Dragon_Adult_A1", 3),
    ("Large Ogre", "Ogre", 2), ("Ogre-large-02", "Ogre-02", 2), ("Purple Worm (Gargantuan)", "Purple Worm", 4),
    ("Tiny_Rat", "Rat", 1),
])
func sizeWordsAreReadAnywhereAsASeparateWord(_ stem: String, _ name: String, _ side: Int) throws {
    let result = try naming("tokens/\(stem).png")
    #expect(result.name == name)
    #expect(result.footprint == footprint(side, side))
    #expect(result.isFootprintExplicit)
}

@Test func aSizeWordInsideAnotherWordIsPartOfTheName() throws {
    #expect(try naming("tokens/smallish_rat.png").name == "smallish_rat")
    #expect(try naming("tokens/Hugeness.png").footprint == .single)
}

@Test func aSizeWordThatIsTheWholeNameIsTheName() throws {
    let result = try naming("tokens/Huge@2x.png")
    #expect(result.name == "Huge")
    #expect(result.footprint == .single)
}

@Test(arguments: [
    ("objects/Table (wood) 2x1.webp", "Table (wood)", 2, 1), ("objects/Bench-3x1.png", "Bench", 3, 1),
    ("objects/Rug (2x3).png", "Rug", 2, 3), ("objects/Crate_2x2_damaged.png", "Crate_damaged", 2, 2),
    ("maps/Cave_40x30.jpg", "Cave", 40, 30), ("Battlemaps/Forest Clearing [30x40].jpg", "Forest Clearing", 30, 40),
    ("maps/Keep 100x100@2x.png", "Keep", 100, 100), ("maps/world_512x512.png", "world", 512, 512),
])
func footprintsAreReadAfterASeparatorOrInsideBrackets(_ path: String, _ name: String, _ width: Int, _ height: Int) throws {
    let result = try naming(path)
    #expect(result.name == name)
    #expect(result.footprint == footprint(width, height))
}

@Test func aFootprintAtTheStartOfTheNameIsPartOfIt() throws {
    let result = try naming("tokens/2x2_ogre.png")
    #expect(result.name == "2x2_ogre")
    #expect(result.footprint == .single)
}

@Test func eachKindCapsItsFootprints() throws {
    #expect(problem("maps/world_513x10.png")?.code == .badFootprint)
    #expect(problem("tokens/Cave_40x30.png")?.message.contains("maps/") == true)
    #expect(problem("Props/hall [33x2].png")?.code == .badFootprint)
    let json = #"{"overrides": {"tokens/titan": {"footprint": {"width": 40, "height": 40}}}}"#
    #expect(problem("tokens/titan.png", packJSON: json)?.code == .badFootprint)
    let map = #"{"overrides": {"tokens/titan": {"footprint": {"width": 40, "height": 40}, "kind": "background"}}}"#
    #expect(try naming("tokens/titan.png", packJSON: map).footprint == footprint(40, 40))
}
