import Testing

@testable import HoardCore

/// The built-in definition of a kind.
private func definition(_ kind: AssetKind) throws -> BuiltInKind {
    try #require(BuiltInKind.all.first { $0.kind == kind })
}

/// A PNG candidate named after its scale: `a@2x.png`.
private func candidate(_ scale: Int, _ width: Int, _ height: Int, entry: String? = nil) -> VariantRules.Candidate {
    VariantRules.Candidate(
        entry: entry ?? "tokens/a@\(scale)x.png", scale: scale, info: ImageInfo(mediaType: .png, width: width, height: height))
}

/// Checks candidates of a 1×1 token (or `kind`/`footprint`) at 100 px per tile.
private func check(
    _ candidates: [VariantRules.Candidate], kind: AssetKind = .token, footprint: Footprint = .single, tilePixels: Int = 100
) throws -> [Problem] {
    VariantRules.check(candidates, footprint: footprint, kind: try definition(kind), tilePixels: tilePixels)
}

private func errors(_ problems: [Problem]) -> [Problem] { problems.filter { $0.severity == .error } }

@Test func consistentVariantsPassWithoutProblems() throws {
    #expect(try check([candidate(1, 100, 100), candidate(2, 200, 200), candidate(4, 400, 400), candidate(8, 800, 800)]).isEmpty)
    #expect(try check([candidate(1, 100, 50), candidate(3, 300, 150)], footprint: #require(Footprint(width: 2, height: 1)),
                      tilePixels: 50).isEmpty)
}

@Test func noCandidatesMeansNoProblems() throws {
    #expect(try check([]).isEmpty)
}

@Test func aVariantWithAnotherAspectRatioIsRefused() throws {
    let problems = try check([candidate(1, 100, 100), candidate(2, 200, 150)])
    let problem = try #require(problems.first)
    #expect(problems.count == 1)
    #expect(problem.code == .variantMismatch)
    #expect(problem.severity == .error)
    #expect(problem.entry == "tokens/a@2x.png")
    #expect(problem.message.contains("aspect ratio"))
}

@Test func aVariantWithTheRightAspectButTheWrongScaleIsRefused() throws {
    let problems = try check([candidate(1, 100, 100), candidate(2, 300, 300), candidate(4, 400, 400)])
    #expect(problems.count == 1)
    let problem = try #require(problems.first)
    #expect(problem.code == .variantMismatch)
    #expect(problem.entry == "tokens/a@2x.png")
    #expect(problem.message.contains("200×200"))
}

@Test func twoFilesForOneScaleAreADuplicate() throws {
    let problems = try check([candidate(1, 100, 100, entry: "tokens/b.png"), candidate(1, 100, 100, entry: "tokens/a@1x.png")])
    #expect(problems.count == 1)
    let problem = try #require(problems.first)
    #expect(problem.code == .duplicateVariant)
    #expect(problem.severity == .error)
    // The first by entry name is kept; the other is reported and names the one kept.
    #expect(problem.entry == "tokens/b.png")
    #expect(problem.message.contains("tokens/a@1x.png"))
}

@Test func everyVariantIsComparedWithTheSmallestScale() throws {
    // Only @2x and @4x: the @2x is the base, and a wrong @4x is still caught.
    #expect(try check([candidate(2, 200, 200), candidate(4, 400, 400)]).isEmpty)
    let problems = try check([candidate(4, 500, 500), candidate(2, 200, 200)])
    #expect(problems.map(\.code) == [.variantMismatch])
    #expect(problems.first?.entry == "tokens/a@4x.png")
}

@Test func variantsOffByAFewPixelsPerScaleStepAreAccepted() throws {
    // A 2% relative tolerance would allow 0.8 px here; rounding allows one pixel per scale step.
    #expect(try check([candidate(1, 20, 20), candidate(2, 42, 42)], footprint: .single, tilePixels: 20).isEmpty)
    #expect(try check([candidate(1, 20, 20), candidate(4, 84, 84)], footprint: .single, tilePixels: 20).isEmpty)
    // A halved picture rounded down is fine too: 201×151 at @2x against 100×75 at @1x.
    #expect(try errors(check([candidate(1, 100, 75), candidate(2, 201, 151)])).isEmpty)
}

@Test func variantsOffByMoreThanTheToleranceAreRefused() throws {
    let problems = try check([candidate(1, 20, 20), candidate(2, 43, 43)], tilePixels: 20)
    #expect(problems.map(\.code) == [.variantMismatch])
    // Relative tolerance on big pictures: 2% of 2000 is 40 pixels.
    #expect(try errors(check([candidate(1, 1000, 1000), candidate(2, 2040, 2040)], tilePixels: 1000)).isEmpty)
    #expect(try errors(check([candidate(1, 1000, 1000), candidate(2, 2041, 2041)], tilePixels: 1000)).map(\.code) == [.variantMismatch])
}

@Test func aPictureThatDoesNotFitItsFootprintIsOnlyAWarning() throws {
    let twoByTwo = try #require(Footprint(width: 2, height: 2))
    let problems = try check([candidate(1, 100, 100), candidate(2, 200, 200)], footprint: twoByTwo)
    #expect(problems.count == 1)
    let problem = try #require(problems.first)
    #expect(problem.code == .footprintMismatch)
    #expect(problem.severity == .warning)
    #expect(problem.entry == "tokens/a@1x.png")
    #expect(problem.message.contains("200×200"))
}

@Test func theFootprintIsCheckedAtScaleOneWhenTheSmallestVariantIsLarger() throws {
    // 200×200 at @2x is 100×100 at @1x: right for a 1×1 at 100 px per tile.
    #expect(try check([candidate(2, 200, 200)]).isEmpty)
    // The same file claimed as @1x is twice too big.
    #expect(try check([candidate(1, 200, 200)]).map(\.code) == [.footprintMismatch])
}

@Test func artWithinTenPercentOfItsFootprintPasses() throws {
    let twoByTwo = try #require(Footprint(width: 2, height: 2))
    #expect(try check([candidate(1, 220, 180)], footprint: twoByTwo).isEmpty)
    #expect(try check([candidate(1, 221, 200)], footprint: twoByTwo).map(\.code) == [.footprintMismatch])
    #expect(try check([candidate(1, 200, 179)], footprint: twoByTwo).map(\.code) == [.footprintMismatch])
}

@Test(arguments: BuiltInKind.all.map(\.kind))
func theFootprintIsCheckedOnlyForKindsThatAskForIt(_ kind: AssetKind) throws {
    let problems = try check([candidate(1, 512, 300)], kind: kind)
    let expectWarning = try definition(kind).checksFootprintAgainstPixels
    #expect(problems.contains { $0.code == .footprintMismatch } == expectWarning)
    #expect(errors(problems).isEmpty)
}

@Test func backgroundsAreNeverCheckedAgainstTheirFootprint() throws {
    #expect(try !definition(.background).checksFootprintAgainstPixels)
    #expect(try check([candidate(1, 4000, 3000), candidate(2, 8000, 6000)], kind: .background).isEmpty)
    // But their variants still must agree.
    #expect(try check([candidate(1, 4000, 3000), candidate(2, 8000, 3000)], kind: .background).map(\.code) == [.variantMismatch])
}

@Test func aPluginKindDecidesWhetherItsFootprintIsChecked() {
    struct Decal: AssetKindDefinition {
        var kind = AssetKind(rawValue: "decal")
        var folderNames: Set<String> = ["decals"]
        var defaultFootprint = Footprint.single
        var checksFootprintAgainstPixels: Bool
        var acceptsSizeWords = false
    }
    let candidates = [candidate(1, 10, 10)]
    #expect(VariantRules.check(candidates, footprint: .single, kind: Decal(checksFootprintAgainstPixels: false), tilePixels: 256).isEmpty)
    #expect(VariantRules.check(candidates, footprint: .single, kind: Decal(checksFootprintAgainstPixels: true), tilePixels: 256)
        .map(\.code) == [.footprintMismatch])
}

/// A hex pack's pictures are hexagons in their bounding box: a regular flat hex at 72 px is 72 × 62, a pointy one
/// 62 × 72, Wesnoth's 72 × 72; none is "smaller than its footprint" there, while on squares a 72 × 62 tile is, and a
/// picture short on both sides is on hexes too.
@Test func aHexPacksShorterSideIsAHexagonsNotASmallerPicture() throws {
    func warned(_ width: Int, _ height: Int, _ grid: PackGrid) throws -> Bool {
        let problems = VariantRules.check(
            [candidate(1, width, height, entry: "textures/grass.png")], footprint: .single, kind: try definition(.texture), tilePixels: 72,
            grid: grid)
        return problems.contains { $0.code == .footprintMismatch }
    }
    let flat = PackGrid(type: .hex, orientation: .flat)
    for (width, height) in [(72, 62), (62, 72), (72, 72), (70, 60)] {
        #expect(try !warned(width, height, flat), "\(width)×\(height) on hexes")
    }
    #expect(try warned(72, 62, .square), "72×62 on squares")
    #expect(try warned(62, 62, flat), "both sides short")
    #expect(try warned(72, 48, flat), "flatter than a hexagon")
    #expect(try warned(90, 72, flat), "wider than the tile")
}
