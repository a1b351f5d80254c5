import Foundation
import HoardCore
import Testing

/// The one text rule (issue 43): what may be a name, and when two names are one.
@Suite struct NameRuleTests {
    /// The tester's confusables and oversized names: each is refused, saying what to fix, whatever it names.
    @Test(arguments: [
        "alpha\u{200B}", "al\u{00AD}pha", "\u{202E}ahpla", "gm\u{0}x", "gm\u{1B}[31m", "a\u{2066}b", "zero\u{200D}width",
        "line\u{2028}break", "private\u{E000}use", "tag\u{E0041}", "hangul\u{3164}filler", "", " \t ",
        String(repeating: "é", count: 129), "e" + String(repeating: "\u{301}", count: 1_000),
    ])
    func invisibleControlAndOversizedNamesAreRefused(name: String) {
        for kind in [NameRule.Kind.group, .pack, .session, .savedMap, .share, .ref] {
            let problem = NameRule.problem(with: name, as: kind)
            #expect(problem?.hasPrefix(kind.noun) == true, "\(kind.noun): \(problem ?? "accepted")")
        }
    }

    @Test func lengthsCountUnicodeScalarsAsTheSchemaStates() throws {
        #expect(try NameRule.canonical(String(repeating: "é", count: 64), as: .member).unicodeScalars.count == 64)
        #expect(NameRule.problem(with: String(repeating: "é", count: 65), as: .member) != nil)
        // Decomposed accents count once composed; combining marks that do not compose count each.
        #expect(try NameRule.canonical(String(repeating: "e\u{301}", count: 64), as: .displayName) == String(repeating: "é", count: 64))
        #expect(NameRule.problem(with: "e" + String(repeating: "\u{301}", count: 65), as: .displayName) != nil)
        #expect(NameRule.problem(with: "e" + String(repeating: "\u{301}", count: 64), as: .displayName) == nil, "é and 63 marks")
    }

    @Test func namesAreStoredComposedAndTrimmed() throws {
        #expect(try NameRule.canonical("Cafe\u{301}", as: .pack) == "Café")
        #expect(try NameRule.canonical("  Ann's tablet \n", as: .member) == "Ann's tablet")
        #expect(try NameRule.canonical("Dragons \u{2764}\u{FE0F}", as: .session) == "Dragons \u{2764}", "presentation selectors dropped")
        #expect(try NameRule.canonical("драконы", as: .group) == "драконы")
        #expect(try NameRule.canonical("🐉 lair", as: .savedMap) == "🐉 lair")
        #expect(NameRule.problem(with: "a/b", as: .pack) != nil && NameRule.problem(with: "a/b", as: .share) == nil)
    }

    @Test func lookAlikesAreOneNameUnderTheKey() {
        for (a, b) in [
            ("Émoi", "émoi"), ("Café", "Cafe\u{301}"), ("ÉMOI", "e\u{301}moi"), ("office", "o\u{FB03}ce"), ("emoi", "ＥＭＯＩ"), ("émoi", "\u{FF45}\u{301}moi"),
            ("Straße", "STRASSE"), ("heart \u{2764}\u{FE0F}", "heart \u{2764}"),
        ] {
            #expect(NameRule.key(a) == NameRule.key(b), "\(a) / \(b)")
            #expect(NameRule.same(a, b))
        }
        #expect(NameRule.key("Émoi") != NameRule.key("Emoi"), "accents are letters")
        #expect(NameRule.spelledAlike("Relics", "relics") && !NameRule.spelledAlike("Émoi", "émoi"), "as the catalogs' columns compare")
    }

    @Test func anExactNameIsFoundBeforeALookAlikeAndSeveralLookAlikesAreAllGiven() {
        let names = ["Émoi", "émoi", "Other"]
        #expect(NameRule.matches("émoi", among: names, name: { $0 }) == ["émoi"])
        #expect(NameRule.matches("Émoi", among: names, name: { $0 }) == ["Émoi"])
        #expect(NameRule.matches("EMOI\u{301}", among: names, name: { $0 }).isEmpty, "E + acute on I is another name")
        #expect(NameRule.matches("ÉMOI", among: names, name: { $0 }) == ["Émoi"], "ASCII case aside, as the columns compare")
        #expect(NameRule.matches("\u{FF45}\u{301}MOI", among: names, name: { $0 }) == ["Émoi", "émoi"], "full-width e, acute: either")
        #expect(NameRule.matches("other", among: names, name: { $0 }) == ["Other"])
        #expect(NameRule.matches("e\u{301}moi", among: ["Émoi"], name: { $0 }) == ["Émoi"])
    }
}
