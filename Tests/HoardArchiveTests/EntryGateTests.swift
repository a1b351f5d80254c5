import HoardCore
import Testing
@testable import HoardArchive

@Suite("Entry gate: the rules every archive reader applies")
struct EntryGateTests {
    func limits(_ change: (inout ImportLimits) -> Void) -> ImportLimits {
        var limits = ImportLimits()
        change(&limits)
        return limits
    }

    @Test func countsEntriesAndRefusesOnePastTheLimit() throws {
        var gate = EntryGate(limits: limits { $0.maxEntries = 2 }, archiveSize: 1000)
        _ = try gate.admit(rawName: Array("a.png".utf8), declaredSize: nil, isDirectory: false)
        _ = try gate.admit(rawName: Array("b/".utf8), declaredSize: nil, isDirectory: true)
        #expect(throws: ArchiveError.self) { try gate.admit(rawName: Array("c.png".utf8), declaredSize: nil, isDirectory: false) }
    }

    @Test func refusesACollisionButNotAFolderNamedLikeAFile() throws {
        var gate = EntryGate(limits: ImportLimits(), archiveSize: 1000)
        _ = try gate.admit(rawName: Array("tokens/".utf8), declaredSize: nil, isDirectory: true)
        _ = try gate.admit(rawName: Array("tokens/Ogre.png".utf8), declaredSize: 10, isDirectory: false)
        try gate.count(10)
        try gate.finishEntry()
        let error = #expect(throws: ArchiveError.self) {
            try gate.admit(rawName: Array("TOKENS/ogre.PNG".utf8), declaredSize: nil, isDirectory: false)
        }
        #expect(error?.problem.code == .nameCollision)
        #expect(error?.problem.message.contains("tokens/Ogre.png") == true)
    }

    @Test func aDeclaredSizeOverTheEntryBudgetIsRefusedBeforeReading() {
        var gate = EntryGate(limits: limits { $0.maxEntryBytes = 100 }, archiveSize: 1000)
        let error = #expect(throws: ArchiveError.self) { try gate.admit(rawName: Array("a.png".utf8), declaredSize: 101, isDirectory: false) }
        #expect(error?.problem.code == .entryTooLarge)
    }

    @Test func moreBytesThanDeclaredIsASizeMismatchAtOnce() throws {
        var gate = EntryGate(limits: ImportLimits(), archiveSize: 1000)
        _ = try gate.admit(rawName: Array("a.png".utf8), declaredSize: 5, isDirectory: false)
        try gate.count(5)
        let error = #expect(throws: ArchiveError.self) { try gate.count(1) }
        #expect(error?.problem.code == .sizeMismatch)
    }

    @Test func fewerBytesThanDeclaredIsASizeMismatchAtTheEnd() throws {
        var gate = EntryGate(limits: ImportLimits(), archiveSize: 1000)
        _ = try gate.admit(rawName: Array("a.png".utf8), declaredSize: 5, isDirectory: false)
        try gate.count(4)
        let error = #expect(throws: ArchiveError.self) { try gate.finishEntry() }
        #expect(error?.problem.code == .sizeMismatch)
    }

    @Test func theRatioBudgetAppliesOnlyPastItsFloor() throws {
        var gate = EntryGate(limits: limits { $0.ratioFloorBytes = 1000; $0.maxCompressionRatio = 10 }, archiveSize: 10)
        _ = try gate.admit(rawName: Array("bomb.png".utf8), declaredSize: nil, isDirectory: false)
        try gate.count(1000)
        let error = #expect(throws: ArchiveError.self) { try gate.count(1) }
        #expect(error?.problem.code == .compressionRatio)
    }

    @Test func theArchiveBudgetSumsEveryEntry() throws {
        var gate = EntryGate(limits: limits { $0.maxArchiveBytes = 10 }, archiveSize: 1000)
        _ = try gate.admit(rawName: Array("a.png".utf8), declaredSize: nil, isDirectory: false)
        try gate.count(6)
        try gate.finishEntry()
        _ = try gate.admit(rawName: Array("b.png".utf8), declaredSize: nil, isDirectory: false)
        let error = #expect(throws: ArchiveError.self) { try gate.count(5) }
        #expect(error?.problem.code == .archiveTooLarge)
    }
}
