import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Testing

/// A token's label is a member's name (issue 43): it passes the text rule, the same label adds a device to that
/// member, and a look-alike label is refused rather than made a second member who looks the same.
@Suite struct TokenLabelTests {
    @Test func aLabelIsAMembersNameAndALookAlikeIsRefused() throws {
        let test = try TestHoard()
        defer { test.remove() }
        let hoard = test.hoard
        try hoard.catalog.createGroup(named: "table")
        _ = try hoard.createToken(group: "table", label: "gm", role: .owner)
        _ = try hoard.createToken(group: "table", label: " gm ", role: .member)
        for alike in ["GM", "ｇｍ"] {
            #expect(throws: CatalogError.self, "\(alike)") { try hoard.createToken(group: "table", label: alike, role: .member) }
        }
        #expect(throws: NameRule.Refusal.self) { try hoard.createToken(group: "table", label: "g\u{AD}m", role: .member) }
        let groupId = try #require(try hoard.catalog.group(named: "table")?.id)
        #expect(try hoard.catalog.tokens(groupId: groupId).map(\.name) == ["gm", "gm"], "two devices of one member")
    }
}
