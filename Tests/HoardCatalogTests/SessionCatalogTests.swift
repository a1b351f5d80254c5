import Foundation
import HoardCatalog
import HoardCore
import HoardTestSupport
import PostgresNIO
import Synchronization
import Testing

@testable import HoardPostgres

/// Sessions in the catalog, on every backend: the event log's sequence, maps set and folded, participants, the lobby
/// and saved maps.
@Suite struct SessionCatalogTests {
    @Test(arguments: CatalogBackendKind.allCases)
    func anEventIsLoggedOnlyAtTheNextSeqAndAWrongOneWritesNothing(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let (catalog, id) = (table.catalog, table.session.id)
        try catalog.appendEvent(session: id, seq: 1, body: #"{"op":"move"}"#)
        // Another replica logged 1 first: this one's 1 is a conflict, and so is a number that skips one.
        #expect(errorCode { () throws(CatalogError) in try catalog.appendEvent(session: id, seq: 1, body: "{}") } == .conflict)
        #expect(errorCode { () throws(CatalogError) in try catalog.appendEvent(session: id, seq: 3, body: "{}") } == .conflict)
        #expect(errorCode { () throws(CatalogError) in try catalog.appendEvent(session: "absent", seq: 1, body: "{}") } == .notFound)
        try catalog.appendEvent(session: id, seq: 2, body: #"{"note":"é"}"#, views: #"{"p1":null}"#)
        #expect(try catalog.session(id: id)?.lastSeq == 2)
        let events = try catalog.events(session: id, after: 0)
        #expect(events == [
            LoggedEvent(seq: 1, body: #"{"op":"move"}"#, views: nil), LoggedEvent(seq: 2, body: #"{"note":"é"}"#, views: #"{"p1":null}"#),
        ])
        #expect(try catalog.events(session: id, after: 1).map(\.seq) == [2])
        #expect(try catalog.events(session: id, after: 2).isEmpty)
        // Bytes of UTF-8, not characters: "é" is two.
        #expect(try catalog.eventBytes(session: id, after: 0) == 13 + 13 + 11)
        #expect(try catalog.eventBytes(session: id, after: 1) == 13 + 11)
        #expect(try catalog.eventBytes(session: "absent", after: 0) == 0)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func aGrabIsLeasedWithItsEventAndEndsWhenItsReplicaStopsRenewing(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let (catalog, id) = (table.catalog, table.session.id)
        let start = Date(timeIntervalSince1970: 2_000_000_000)
        let hold = { (entity: String, participant: String, replica: String) in
            GrabChange.hold(entity: entity, participant: participant, replica: replica, until: start.addingTimeInterval(10))
        }
        try catalog.appendEvent(session: id, seq: 1, body: "{}", views: nil, grab: hold("orc", "ana", "A"))
        try catalog.appendEvent(session: id, seq: 2, body: "{}", views: nil, grab: hold("elf", "bo", "B"))
        // A refused event holds nothing.
        #expect(errorCode { () throws(CatalogError) in
            try catalog.appendEvent(session: id, seq: 2, body: "{}", views: nil, grab: hold("imp", "ana", "A"))
        } == .conflict)
        #expect(try catalog.grabs(session: id) == ["orc": "ana", "elf": "bo"])
        // A renews its leases; B does not: only B's grab has ended 20 seconds on.
        #expect(try catalog.renewGrabs(replica: "A", until: start.addingTimeInterval(30)) == 1)
        #expect(try catalog.expiredGrabs(before: start.addingTimeInterval(5), limit: 10).isEmpty)
        #expect(try catalog.expiredGrabs(before: start.addingTimeInterval(20), limit: 10) == [
            HeldGrab(session: id, entity: "elf", participant: "bo")
        ])
        // The host takes the elf over through A: one holder, leased by A; then it is released.
        try catalog.appendEvent(session: id, seq: 3, body: "{}", views: nil, grab: hold("elf", "gm", "A"))
        #expect(try catalog.grabs(session: id) == ["orc": "ana", "elf": "gm"])
        #expect(try catalog.renewGrabs(replica: "A", until: start.addingTimeInterval(30)) == 2)
        #expect(try catalog.expiredGrabs(before: start.addingTimeInterval(20), limit: 10).isEmpty)
        try catalog.appendEvent(session: id, seq: 4, body: "{}", views: nil, grab: .drop(entity: "elf"))
        #expect(try catalog.grabs(session: id) == ["orc": "ana"])
        #expect(try catalog.expiredGrabs(before: start.addingTimeInterval(40), limit: 10).map(\.entity) == ["orc"])
        // A session's grabs go with it.
        #expect(try catalog.deleteSession(id: id))
        #expect(try catalog.grabs(session: id).isEmpty)
        #expect(try catalog.expiredGrabs(before: start.addingTimeInterval(40), limit: 10).isEmpty)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func aMapIsSetOnlyAtTheNextSeqAndItsEventsBeforeAreForgotten(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let (catalog, id) = (table.catalog, table.session.id)
        for seq in 1...2 { try catalog.appendEvent(session: id, seq: Int64(seq), body: "{}") }
        let (map, art) = (TableFixture.picture("new map"), TableFixture.picture("art"))
        try catalog.recordUpload(art, groupId: table.groupId)
        let set = { (baseSeq: Int64) throws(CatalogError) in
            try catalog.setMap(session: id, mapBlob: map, reachable: [art.digest], baseSeq: baseSeq)
        }
        #expect(errorCode { () throws(CatalogError) in try set(2) } == .conflict, "2 is logged already")
        #expect(errorCode { () throws(CatalogError) in try set(4) } == .conflict, "3 is not logged yet")
        #expect(try catalog.session(id: id)?.mapDigest == table.session.mapDigest, "a refused map changes nothing")
        #expect(errorCode { () throws(CatalogError) in
            try catalog.setMap(session: "absent", mapBlob: map, reachable: [], baseSeq: 1)
        } == .notFound)
        try set(3)
        let session = try #require(try catalog.session(id: id))
        #expect(session.mapDigest == map.digest && session.baseSeq == 3 && session.lastSeq == 2)
        #expect(try catalog.events(session: id, after: 0).isEmpty)
        #expect(try catalog.accessBase().sessions[id] == [art.digest])
        // The map event is logged next, at the map's seq.
        try catalog.appendEvent(session: id, seq: 3, body: #"{"op":"map"}"#)
        #expect(try catalog.events(session: id, after: 0).map(\.seq) == [3])
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func foldingKeepsTheLastEventsAndNeverGoesBackToAnOlderBase(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let (catalog, id) = (table.catalog, table.session.id)
        for seq in 1...4 { try catalog.appendEvent(session: id, seq: Int64(seq), body: "{}") }
        let folded = TableFixture.picture("folded at 3")
        #expect(try catalog.fold(session: id, mapBlob: folded, baseSeq: 3, keeping: 1))
        #expect(try catalog.events(session: id, after: 0).map(\.seq) == [3, 4])
        #expect(try catalog.session(id: id)?.baseSeq == 3)
        #expect(try catalog.session(id: id)?.mapDigest == folded.digest)
        #expect(try !catalog.fold(session: id, mapBlob: TableFixture.picture("folded at 2"), baseSeq: 2, keeping: 0))
        #expect(try catalog.session(id: id)?.mapDigest == folded.digest)
        #expect(try !catalog.fold(session: "absent", mapBlob: folded, baseSeq: 1))
        #expect(try catalog.fold(session: id, mapBlob: TableFixture.picture("folded at 4"), baseSeq: 4))
        #expect(try catalog.events(session: id, after: 0).isEmpty)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func participantsJoinAreCountedAndLeave(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let (catalog, id) = (table.catalog, table.session.id)
        let now = Date()
        try catalog.addParticipant(ParticipantRecord(id: "p2", sessionId: id, name: "Bo", tokenHash: "hash-2", joinedAt: now.addingTimeInterval(1)))
        try catalog.addParticipant(ParticipantRecord(id: "p1", sessionId: id, name: "Ann", tokenHash: "hash-1", joinedAt: now))
        #expect(try catalog.participants(session: id).map(\.id) == ["p1", "p2"], "in the order they joined")
        #expect(try catalog.participants(session: id).map(\.tokenHash) == ["hash-1", "hash-2"])
        #expect(try catalog.participantCount(session: id) == 2)
        let principal = try #require(try catalog.accessBase().principals["hash-1"])
        #expect(principal.participantId == "p1" && principal.sessionId == id && principal.tokenName == "Ann")
        #expect(try catalog.principal(tokenHash: "hash-2") == Principal(participant: "p2", name: "Bo", session: id))
        #expect(try catalog.removeParticipant("p1", session: id))
        #expect(try !catalog.removeParticipant("p1", session: id))
        #expect(try !catalog.removeParticipant("p2", session: "absent"))
        #expect(try catalog.participantCount(session: id) == 1)
        #expect(try catalog.participantCount(session: "absent") == 0)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func theLobbyListsGroupSessionsAndTheHostsPrivateOnesAndCodesFindThem(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let catalog = table.catalog
        let secret = try TableFixture.makeSession("den", code: "DEN-CODE", groupId: table.groupId, host: "ana", visibility: "private", in: catalog)
        let other = try catalog.ensureGroup(named: "others")
        _ = try TableFixture.makeSession("elsewhere", code: "ELSE-CODE", groupId: try #require(other.id), in: catalog)
        #expect(try catalog.sessions(groupId: table.groupId, host: nil).map(\.id) == ["room"])
        #expect(try catalog.sessions(groupId: table.groupId, host: "bo").map(\.id) == ["room"])
        #expect(Set(try catalog.sessions(groupId: table.groupId, host: "ana").map(\.id)) == ["room", "den"])
        #expect(try catalog.session(code: "DEN-CODE")?.id == secret.id)
        #expect(try catalog.setCode("NEW-CODE", session: secret.id))
        #expect(try catalog.session(code: "DEN-CODE") == nil)
        #expect(try catalog.session(code: "NEW-CODE")?.host == "ana")
        #expect(try !catalog.setCode("ANY-CODE", session: "absent"))
        #expect(Set(try catalog.sessionIds()) == ["room", "den", "elsewhere"])
        #expect(try catalog.session(id: "absent") == nil)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func aSavedMapIsNeverOverwrittenAndKeepsItsArtFromGarbageCollection(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let (catalog, groupId) = (table.catalog, table.groupId)
        let (map, art) = (TableFixture.picture("saved map"), TableFixture.picture("saved art"))
        try catalog.recordUpload(art, groupId: groupId)
        let saved = try catalog.saveMap(group: groupId, name: "Keep", blob: map, reachable: [art.digest])
        #expect(saved.id != nil && saved.digest == map.digest && saved.groupId == groupId)
        #expect(errorCode { () throws(CatalogError) in
            _ = try catalog.saveMap(group: groupId, name: "Keep", blob: TableFixture.picture("another map"), reachable: [])
        } == .conflict)
        _ = try catalog.saveMap(group: groupId, name: "Attic", blob: TableFixture.picture("attic map"), reachable: [])
        #expect(try catalog.savedMaps(group: groupId).map(\.name) == ["Attic", "Keep"])
        #expect(try catalog.savedMaps(group: groupId).last?.digest == map.digest)
        #expect(try catalog.savedMaps(group: groupId + 1).isEmpty)
        // The art is an upload too: forgetting nothing, collecting garbage keeps the saved map and its art.
        #expect(try catalog.collectGarbage().isEmpty)
        #expect(try catalog.deleteMap(group: groupId, name: "Keep"))
        #expect(try !catalog.deleteMap(group: groupId, name: "Keep"))
        #expect(try catalog.collectGarbage() == [map.digest])
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func resolvingAMapSeparatesBlobsFromMissingDigestsAndArtNamesItself(_ kind: CatalogBackendKind) throws {
        let table = try TableFixture(kind)
        let catalog = table.catalog
        let picture = TableFixture.picture("a picture")
        try catalog.recordUpload(picture, groupId: table.groupId)
        let missing = fakeDigest("nothing")
        let resolved = try catalog.resolve([picture.digest, missing], group: table.groupId)
        #expect(resolved.assets.isEmpty)
        #expect(resolved.blobs.map(\.digest) == [picture.digest])
        #expect(resolved.missing == [missing])
        #expect(resolved.reachable == [picture.digest, missing])
        #expect(try catalog.art(of: [picture.digest]) == [picture.digest: [picture.digest]])
        #expect(try catalog.resolve([]).reachable.isEmpty)
    }

    /// Two replicas on one PostgreSQL catalog logging the same seq at once: one logs it, the other is told `conflict`;
    /// and of two creating one ref, one does.
    @Test func ofTwoReplicasRacingForOneSeqOrOneRefExactlyOneWins() throws {
        let url = try TestPostgres.newDatabase()
        let replicas = [try PostgresCatalog(url: url), try PostgresCatalog(url: url)]
        defer { for replica in replicas { replica.close() } }
        let groupId = try #require(try replicas[0].ensureGroup(named: "table").id)
        let session = try TableFixture.makeSession("room", code: "ROOM-CODE", groupId: groupId, in: replicas[0])
        let drawing = TableFixture.picture("drawing")
        try replicas[0].recordUpload(drawing, groupId: groupId)
        for round in 1...20 {
            // Per replica: whether it logged the event (else its error's code), whether it made the ref.
            let outcomes = Mutex<[(logged: CatalogFailure?, madeRef: Bool)]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { replica in
                var logged: CatalogFailure?
                do {
                    try replicas[replica].appendEvent(session: session.id, seq: Int64(round), body: "{\"by\":\(replica)}")
                } catch {
                    logged = (error as? CatalogError)?.code ?? .database
                }
                let update = try? replicas[replica].moveRef(
                    group: groupId, member: "ana", name: "ref \(round)", to: drawing.digest, expected: .absent)
                let madeRef = if case .moved = update { true } else { false }
                outcomes.withLock { $0.append((logged, madeRef)) }
            }
            let all = outcomes.withLock { $0 }
            #expect(all.map(\.logged).filter { $0 == nil }.count == 1 && all.map(\.logged).contains(.conflict), "round \(round)")
            #expect(all.map(\.madeRef).filter { $0 }.count == 1, "round \(round)")
        }
        #expect(try replicas[1].events(session: session.id, after: 0).map(\.seq) == Array(1...20))
        #expect(try replicas[1].refs(group: groupId, member: "ana").count == 20)
    }

    /// Another replica learns of a logged event from the notice it sends, `'<seq> <session>'` on the event channel.
    @Test func anEventLoggedInPostgreSQLNotifiesTheEventChannel() async throws {
        let table = try TableFixture(.postgres)
        let catalog = try #require(table.catalog as? PostgresCatalog)
        let connection = try await PostgresConnection.connect(
            on: PostgresPool.loops.any(), configuration: catalog.database.configuration, id: 1, logger: catalog.database.logger)
        let payloads = try await connection.listen(on: SessionEventLog.channel) { notices in
            try catalog.appendEvent(session: table.session.id, seq: 1, body: "{}")
            #expect(throws: CatalogError.self) { try catalog.appendEvent(session: table.session.id, seq: 1, body: "{}") }
            // A last notice of our own: were the event's missing, or the refused one's sent, this would come too early.
            _ = try await connection.query("SELECT pg_notify(\(SessionEventLog.channel), 'end')", logger: catalog.database.logger).collect()
            var payloads: [String] = []
            for try await notice in notices {
                payloads.append(notice.payload)
                if notice.payload == "end" { break }
            }
            return payloads
        }
        #expect(payloads == ["1 room", "end"])
        try await connection.close()
    }
}
