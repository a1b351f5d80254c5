import Foundation
import GRDB
import Testing

@testable import HoardCatalog

/// Group names: what may be one (``GroupName/problem(with:)``), and names that look alike are one name.
@Suite struct GroupNameTests {
    @Test(arguments: ["", " ", "\t \u{3000}", "\u{200B}", "red\nteam", "nul\u{0}", "bell\u{7}", "del\u{7F}", String(repeating: "é", count: 129)])
    func namesNoOneCanTypeOrSeeAreRefusedWithWhatToFix(name: String) throws {
        let catalog = try SQLiteCatalog.inMemory()
        let error = #expect(throws: CatalogError.self) { try catalog.createGroup(named: name) }
        #expect(error?.code == .invalid)
        #expect(error?.message.hasPrefix("a group name") == true, "\(error?.message ?? "")")
        #expect(throws: CatalogError.self) { try catalog.ensureGroup(named: name) }
        #expect(try catalog.groups().isEmpty)
    }

    @Test func namesEqualUnderCaseFoldingAndNormalisationAreOneName() throws {
        let catalog = try SQLiteCatalog.inMemory()
        let eclair = try catalog.createGroup(named: "Éclair")
        for alike in ["éclair", "E\u{301}clair", "e\u{301}clair", "ÉCLAIR", "Éclair"] {
            let error = #expect(throws: CatalogError.self, "\(alike)") { try catalog.createGroup(named: alike) }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("'Éclair' already exists") == true, "\(error?.message ?? "")")
            // An import into a name that is the same name goes to the existing group.
            #expect(try catalog.ensureGroup(named: alike).id == eclair.id)
            #expect(try catalog.group(matching: alike)?.id == eclair.id)
        }
        // Compatibility forms and other foldings are one name too; different letters are not.
        let office = try catalog.createGroup(named: "office")
        #expect(throws: CatalogError.self) { try catalog.createGroup(named: "OFFICE") }
        #expect(throws: CatalogError.self) { try catalog.createGroup(named: "o\u{FB03}ce") }  // the ffi ligature
        #expect(throws: CatalogError.self) { try catalog.createGroup(named: "ｏｆｆｉｃｅ") }  // full-width letters
        #expect(try catalog.ensureGroup(named: "OFFICE").id == office.id)
        #expect(try catalog.createGroup(named: "eclair").id != eclair.id)
        #expect(try catalog.groups().count == 3)
    }

    @Test func anOldCatalogsGroupsThatClashKeepWorkingAndNoNewOneIsMade() throws {
        let catalog = try SQLiteCatalog.inMemory()
        // Written before names were compared under folding: SQLite's NOCASE folds ASCII only.
        try catalog.write { db in
            for name in ["Éclair", "éclair"] {
                var group = GroupRecord(id: nil, name: name, createdAt: Date(), quotaBytes: nil)
                try group.insert(db)
            }
        }
        let groups = try catalog.groups()
        #expect(groups.count == 2)
        // Each exact name still finds its own group; a name that could be either is refused, not guessed.
        for group in groups { #expect(try catalog.ensureGroup(named: group.name).id == group.id) }
        let error = #expect(throws: CatalogError.self) { try catalog.ensureGroup(named: "E\u{301}CLAIR") }
        #expect(error?.code == .conflict)
        #expect(throws: CatalogError.self) { try catalog.createGroup(named: "E\u{301}CLAIR") }
        #expect(try catalog.groups().count == 2)
    }

    @Test func keysFoldCaseAndNormalisation() {
        #expect(GroupName.key("Éclair") == GroupName.key("E\u{301}CLAIR"))
        #expect(GroupName.key("Straße") == GroupName.key("STRASSE"))
        #expect(GroupName.key("Éclair") != GroupName.key("Eclair"))
        #expect(GroupName.problem(with: "Dragons of the Night") == nil)
        #expect(GroupName.problem(with: "драконы") == nil)
    }
}
