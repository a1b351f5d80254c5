import Foundation
import HoardCatalog
import HoardCore
import Testing

/// Listing and forgetting private uploads and ending sessions in the catalog, on every backend.
@Suite struct ForgettingCatalogTests {
    @Test(arguments: CatalogBackendKind.allCases)
    func aForgottenSessionUploadLeavesTheSessionsReachUnlessAPackOrGroupHoldsTheSameBytes(_ kind: CatalogBackendKind) throws {
        let room = try TableFixture(kind)
        let (catalog, groupId, session) = (room.catalog, room.groupId, room.session)
        try catalog.addParticipant(ParticipantRecord(id: "p1", sessionId: session.id, name: "Ann", tokenHash: "hash", joinedAt: Date()))
        let ann = Principal(participant: "p1", name: "Ann", session: session.id)
        let (photo, alsoUploaded) = (TableFixture.picture("photo"), TableFixture.picture("also a group upload"))
        try catalog.recordUpload(alsoUploaded, groupId: groupId)
        try room.uploadIntoRoom(photo, by: ann)
        try room.uploadIntoRoom(alsoUploaded, by: ann)
        #expect(try catalog.forgetUpload(photo.digest, scope: .session(session.id))?.unreachableIn == session.id)
        #expect(try catalog.forgetUpload(alsoUploaded.digest, scope: .session(session.id))?.unreachableIn == .some(nil))
        #expect(try catalog.accessBase().sessions[session.id] == [alsoUploaded.digest])
        #expect(try catalog.forgetUpload(photo.digest, scope: .session(session.id)) == nil, "forgetting twice finds nothing")
        #expect(try catalog.collectGarbage() == [photo.digest])
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func endingASessionDeletesItsParticipantsEventsReachAndUploads(_ kind: CatalogBackendKind) throws {
        let room = try TableFixture(kind)
        let (catalog, groupId, session) = (room.catalog, room.groupId, room.session)
        try catalog.addParticipant(ParticipantRecord(id: "p1", sessionId: session.id, name: "Ann", tokenHash: "hash", joinedAt: Date()))
        try catalog.appendEvent(session: session.id, seq: 1, body: "{}")
        let member = Principal(groupId: groupId, group: "table", role: .member, member: 1, memberName: "gm", tokenName: "gm")
        try room.uploadIntoRoom(TableFixture.picture("photo"), by: Principal(participant: "p1", name: "Ann", session: session.id))
        try room.uploadIntoRoom(TableFixture.picture("drawing"), by: member)
        let own = TableFixture.picture("own")
        try catalog.recordPrivateUpload(
            own, PrivateUploadRecord(scope: .member(groupId: groupId, id: 1), digest: own.digest, groupId: groupId, uploader: "1"),
            session: nil)
        #expect(try catalog.deleteSession(id: session.id))
        #expect(try catalog.session(code: session.code) == nil)
        #expect(try catalog.participants(session: session.id).isEmpty && catalog.events(session: session.id, after: 0).isEmpty)
        #expect(try catalog.accessBase().sessions[session.id] == nil)
        #expect(try catalog.uploads(by: member, offset: 0, limit: 10).page.map(\.digest) == [own.digest], "the member's own space stays")
        #expect(try catalog.usage(groupId: groupId) == own.size)
        #expect(try !catalog.deleteSession(id: session.id))
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func aMemberListsTheirOwnSpaceAndTheirSessionUploadsAndAParticipantOnlyItsOwn(_ kind: CatalogBackendKind) throws {
        let room = try TableFixture(kind)
        let (catalog, groupId, session) = (room.catalog, room.groupId, room.session)
        let member = Principal(groupId: groupId, group: "table", role: .member, member: 1, memberName: "gm", tokenName: "gm")
        let ann = Principal(participant: "p1", name: "gm", session: session.id)
        let (own, drawing, photo) = (TableFixture.picture("own"), TableFixture.picture("drawing"), TableFixture.picture("photo"))
        try catalog.recordPrivateUpload(
            own, PrivateUploadRecord(scope: .member(groupId: groupId, id: 1), digest: own.digest, groupId: groupId, uploader: "1"),
            session: nil)
        try room.uploadIntoRoom(drawing, by: member)
        try room.uploadIntoRoom(photo, by: ann)
        #expect(Set(try catalog.uploads(by: member, offset: 0, limit: 10).page.map(\.digest)) == [own.digest, drawing.digest])
        #expect(try catalog.uploads(by: ann, offset: 0, limit: 10).page.map(\.digest) == [photo.digest], "a participant named like the member")
        let page = try catalog.uploads(by: member, offset: 1, limit: 1)
        #expect(page.total == 2 && page.page.count == 1)
        let stranger = Principal(groupId: groupId + 1, group: "other", role: .operator, member: 1, memberName: "gm", tokenName: "gm")
        #expect(try catalog.uploads(by: stranger, offset: 0, limit: 10).total == 0)
    }
}
