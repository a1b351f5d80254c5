import HoardCore
import Testing

@testable import hoard

/// The words `hoard import` prints for an import's problems.
@Suite struct ReportTextTests {
    @Test func theSameProblemOnManyFilesIsOneLineThatCountsThemAsOnThePage() {
        let same = "a 1x1 token at 256 px per tile should be about 256×256 at @1x, but this picture is 72×72 at @1x"
        let problems = (1...45).map { Problem(.footprintMismatch, same, entry: "tokens/unit\($0).png", severity: .warning) }
            + [Problem(.ignoredEntry, "skipped", entry: "notes.txt", severity: .warning),
               Problem(.footprintMismatch, "another size", entry: "tokens/big.png", severity: .warning)]
        let lines = ReportText.grouped(problems)
        #expect(lines == [
            "FOOTPRINT_MISMATCH 45 files (tokens/unit1.png, tokens/unit2.png, tokens/unit3.png and 42 more): \(same)",
            "IGNORED_ENTRY notes.txt: skipped",
            "FOOTPRINT_MISMATCH tokens/big.png: another size",
        ])
        #expect(ReportText.grouped([problems[0], problems[1]]) == ["FOOTPRINT_MISMATCH 2 files (tokens/unit1.png, tokens/unit2.png): \(same)"])
    }
}
