import Testing

@testable import HoardCore

/// Validates a name given as text with `limits` (defaults unless changed).
private func validate(_ name: String, limits: ImportLimits = ImportLimits()) -> Result<EntryPath, Problem> {
    EntryPathPolicy(limits: limits).validate(Array(name.utf8))
}

/// The path a name validates to, or nil when refused.
private func accepted(_ name: String, limits: ImportLimits = ImportLimits()) -> EntryPath? {
    try? validate(name, limits: limits).get()
}

/// The problem that refuses a name, or nil when accepted.
private func refusal(_ name: String, limits: ImportLimits = ImportLimits()) -> Problem? {
    if case .failure(let problem) = validate(name, limits: limits) { return problem }
    return nil
}

private func path(_ name: String) throws -> EntryPath {
    try #require(accepted(name), "\(name) should be accepted")
}

@Test func aPlainRelativeNameIsAcceptedWithItsComponents() throws {
    let entry = try path("tokens/monsters/goblin.png")
    #expect(entry.components == ["tokens", "monsters", "goblin.png"])
    #expect(entry.description == "tokens/monsters/goblin.png")
    #expect(entry.fileName == "goblin.png")
    #expect(!entry.isDirectory)
}

@Test func namesThatAreNotUTF8AreRefused() throws {
    // "tokens/gob" + a lone continuation byte + "lin.png", then an overlong encoding of "/".
    for raw: [UInt8] in [Array("tokens/gob".utf8) + [0x80] + Array("lin.png".utf8), [0x74, 0xC0, 0xAF, 0x78], [0xFF, 0xFE]] {
        let result = EntryPathPolicy().validate(raw)
        guard case .failure(let problem) = result else {
            Issue.record("\(raw) was accepted")
            continue
        }
        #expect(problem.code == .invalidName)
        #expect(problem.message.contains("UTF-8"))
        #expect(problem.entry != nil)
    }
    // The same name in valid UTF-8 passes.
    #expect(accepted("tokens/gob\u{C0}lin.png") != nil)
}

@Test(arguments: ["\u{00}", "\u{07}", "\u{0A}", "\u{1B}", "\u{1F}", "\u{7F}", "\u{80}", "\u{85}", "\u{9F}"])
func controlCharactersAreRefused(_ control: String) throws {
    let problem = try #require(refusal("tokens/gob\(control)lin.png"))
    #expect(problem.code == .invalidName)
    let code = String(try #require(control.unicodeScalars.first).value, radix: 16, uppercase: true)
    #expect(problem.message.contains("U+\(code)"))
    // The entry shown in the report has the character replaced, so it cannot garble a terminal.
    #expect(problem.entry == "tokens/gob?lin.png")
}

@Test(arguments: ["\u{061C}", "\u{200E}", "\u{200F}", "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}"])
func bidirectionalControlsAreRefused(_ bidi: String) throws {
    let problem = try #require(refusal("tokens/\(bidi)gnp.nilbog.png"))
    #expect(problem.code == .invalidName)
}

@Test(arguments: ["\u{A0}", "\u{200D}", "\u{2065}", "\u{206A}", "é", "🐉", " "])
func printableAndNeighbouringCharactersAreAccepted(_ character: String) {
    #expect(accepted("tokens/gob\(character)lin.png") != nil)
}

@Test(arguments: ["tokens\\goblin.png", "tokens/..\\..\\goblin.png", "\\goblin.png"])
func backslashesAreRefused(_ name: String) throws {
    let problem = try #require(refusal(name))
    #expect(problem.code == .unsafePath)
    #expect(problem.message.contains("backslash"))
}

@Test(arguments: ["/tokens/goblin.png", "/etc/passwd", "//server/share/x.png"])
func absolutePathsAreRefused(_ name: String) throws {
    let problem = try #require(refusal(name))
    #expect(problem.code == .unsafePath)
    #expect(problem.message.contains("absolute"))
}

@Test(arguments: ["C:/tokens/goblin.png", "c:goblin.png", "Z:x", "d:"])
func driveLettersAreRefused(_ name: String) throws {
    let problem = try #require(refusal(name))
    #expect(problem.code == .unsafePath)
    #expect(problem.message.contains("drive"))
}

@Test(arguments: ["tokens/c:goblin.png", "ab:c.png", "1:goblin.png", "é:goblin.png"])
func aColonThatIsNotADriveLetterIsAccepted(_ name: String) {
    #expect(accepted(name) != nil)
}

@Test(arguments: ["../goblin.png", "tokens/../../goblin.png", "tokens/..", "tokens/../goblin.png", "./.."])
func parentComponentsAreRefused(_ name: String) throws {
    let problem = try #require(refusal(name))
    #expect(problem.code == .unsafePath)
    #expect(problem.message.contains(".."))
}

@Test func namesThatOnlyStartWithDotsAreAccepted() throws {
    #expect(try path("tokens/..goblin.png").components == ["tokens", "..goblin.png"])
    #expect(try path(".hidden/...png").components == [".hidden", "...png"])
}

@Test func dotAndEmptyComponentsAreDropped() throws {
    #expect(try path("./tokens//./goblin.png").components == ["tokens", "goblin.png"])
    #expect(try path("tokens/./monsters///ogre.png").components == ["tokens", "monsters", "ogre.png"])
}

@Test(arguments: ["", ".", "./", "././/."])
func aNameWithNoComponentsIsRefused(_ name: String) throws {
    let problem = try #require(refusal(name))
    #expect(problem.code == .unsafePath)
}

@Test func aPathOverTheByteLimitIsRefused() throws {
    var limits = ImportLimits()
    limits.maxPathBytes = 20
    // Limits count UTF-8 bytes: "é" is two bytes, so 10 of them make 20 bytes.
    let atLimit = String(repeating: "é", count: 9) + "xy"
    #expect(atLimit.utf8.count == 20)
    #expect(accepted(atLimit, limits: limits) != nil)
    let problem = try #require(refusal(atLimit + "z", limits: limits))
    #expect(problem.code == .nameTooLong)
    #expect(problem.message.contains("21"))
}

@Test func aComponentOverTheByteLimitIsRefused() throws {
    var limits = ImportLimits()
    limits.maxComponentBytes = 10
    #expect(accepted("tokens/" + String(repeating: "a", count: 10), limits: limits) != nil)
    let problem = try #require(refusal("tokens/" + String(repeating: "ä", count: 6), limits: limits))
    #expect(problem.code == .nameTooLong)
    #expect(problem.message.contains("12"))
    // The folder counts as a component too.
    #expect(refusal(String(repeating: "f", count: 11) + "/a.png", limits: limits)?.code == .nameTooLong)
}

@Test func aPathDeeperThanTheLimitIsRefused() throws {
    var limits = ImportLimits()
    limits.maxPathDepth = 2
    #expect(accepted("a/b/c.png", limits: limits) != nil)
    // Dropped components do not count towards the depth.
    #expect(accepted("a/./b//c.png", limits: limits) != nil)
    let problem = try #require(refusal("a/b/c/d.png", limits: limits))
    #expect(problem.code == .pathTooDeep)
    #expect(problem.message.contains("3"))
}

@Test func aTrailingSlashMarksADirectory() throws {
    let folder = try path("tokens/monsters/")
    #expect(folder.isDirectory)
    #expect(folder.components == ["tokens", "monsters"])
    #expect(try !path("tokens/monsters").isDirectory)
}

@Test(arguments: [
    ("tokens/Goblin.png", "tokens/goblin.png"),
    ("TOKENS/GOBLIN.PNG", "tokens/goblin.png"),
    ("textures/caf\u{E9}.png", "textures/cafe\u{301}.png"),
    ("textures/Caf\u{E9}.png", "textures/CAFE\u{301}.png"),
    ("walls/STRASSE.png", "walls/straße.png"),
])
func namesThatDifferOnlyInCaseOrNormalisationCollide(_ a: String, _ b: String) throws {
    let first = try path(a)
    let second = try path(b)
    #expect(first.collisionKey == second.collisionKey)
    #expect(Set([first.collisionKey, second.collisionKey]).count == 1)
}

@Test(arguments: [
    ("tokens/goblin.png", "tokens/goblins.png"),
    ("tokens/goblin.png", "objects/goblin.png"),
    ("textures/cafe.png", "textures/caf\u{E9}.png"),
])
func differentNamesDoNotCollide(_ a: String, _ b: String) throws {
    #expect(try path(a).collisionKey != path(b).collisionKey)
}

@Test func aNameThatIsNotUTF8IsReadInTheFormatsLegacyEncoding() throws {
    let raw: [UInt8] = Array("tokens/Caf".utf8) + [0x82] + Array("_Goblin.png".utf8)  // CP437 é
    let policy = EntryPathPolicy()
    let read = try policy.validate(raw, legacyEncoding: .cp437).get()
    #expect(read.components == ["tokens", "Café_Goblin.png"])
    #expect(policy.validate(raw).failure?.code == .invalidName)
}

@Test func aNameThatIsValidUTF8StaysUTF8EvenWhenTheFormatHasALegacyEncoding() throws {
    let raw = Array("tokens/gobelin-été.png".utf8)
    #expect(try EntryPathPolicy().validate(raw, legacyEncoding: .cp437).get().fileName == "gobelin-été.png")
}

@Test func cp437MapsEveryHighByteAsTheCodePageDoes() {
    let decoded = LegacyNameEncoding.cp437.decode(Array(0x80...0xFF))
    #expect(decoded.unicodeScalars.count == 128)
    #expect(decoded.hasPrefix("ÇüéâäàåçêëèïîìÄÅ"))
    #expect(decoded.hasSuffix("ⁿ²■\u{00A0}"))
    #expect(LegacyNameEncoding.cp437.decode(Array("plain/ascii.png".utf8)) == "plain/ascii.png")
}

@Test func aLegacyNameStillPassesEveryOtherRule() {
    let policy = EntryPathPolicy()
    #expect(policy.validate(Array("tokens/../".utf8) + [0x82, 0x2E, 0x70, 0x6E, 0x67], legacyEncoding: .cp437).failure?.code == .unsafePath)
    #expect(policy.validate([0x82] + Array("\\evil.png".utf8), legacyEncoding: .cp437).failure?.code == .unsafePath)
}

extension Result {
    /// The error, nil on success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}

/// A Prepend character (U+0600…U+0605) or a combining mark makes one grapheme with the separator next to it; the
/// separators are found in the bytes, so no component holds one and `..` cannot hide behind it (found by the fuzzer).
@Test func separatorsNextToGraphemeExtendersStillSeparate() throws {
    #expect(try path("t\u{0601}/<-<<<").components == ["t\u{0601}", "<-<<<"])
    #expect(refusal("a/\u{0601}/../../etc/passwd")?.code == .unsafePath)
    #expect(refusal("/\u{0301}etc/passwd")?.code == .unsafePath, "a leading slash with a combining mark is still absolute")
    #expect(refusal("tokens\u{0601}\\goblin.png")?.code == .unsafePath, "a backslash after a Prepend character is still one")
    #expect(try path("tokens/\u{0601}/").isDirectory)
}
