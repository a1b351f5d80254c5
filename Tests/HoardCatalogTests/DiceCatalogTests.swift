import HoardCatalog
import HoardCore
import Testing

/// A session's dice in the catalog, on every backend: one seal per session whoever writes first, rolls kept with their
/// events, both outliving the session until its group goes.
@Suite struct DiceCatalogTests {
    @Test(arguments: CatalogBackendKind.allCases)
    func theFirstSealWinsAndTheSealAndRollsOutliveTheSession(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let (catalog, session) = (table.catalog, table.session)
        let first = try catalog.diceSeal(session: session.id, groupId: session.groupId, proposed: .random())
        let again = try catalog.diceSeal(session: session.id, groupId: session.groupId, proposed: .random())
        #expect(first == again && !first.isRevealed, "another replica's seal is the one already written")
        try catalog.appendEvent(session: session.id, seq: 1, body: #"{"type":"op"}"#, views: nil, grab: nil, isRoll: false)
        try catalog.appendEvent(session: session.id, seq: 2, body: #"{"seq":2,"type":"rolled"}"#, views: "[]", grab: nil, isRoll: true)
        #expect(try catalog.diceRolls(session: session.id) == [#"{"seq":2,"type":"rolled"}"#])
        #expect(try catalog.diceRolls(group: session.groupId).isEmpty, "a group's statistics wait for the reveal")
        #expect(try catalog.revealDice(session: session.id)?.isRevealed == true)
        #expect(try catalog.diceRolls(group: session.groupId) == [#"{"seq":2,"type":"rolled"}"#])
        #expect(try catalog.revealDice(session: "absent") == nil)
        try catalog.deleteSession(id: session.id)
        #expect(try catalog.diceSeal(session: session.id) == DiceSealRecord(
            sessionId: session.id, groupId: session.groupId, seed: first.seed, isRevealed: true))
        #expect(try catalog.diceRolls(session: session.id).count == 1)
        #expect(try catalog.diceSeal(session: "absent") == nil)
    }
}
