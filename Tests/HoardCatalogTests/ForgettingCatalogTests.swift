import Foundation
import HoardCatalog
import HoardCore
import Testing

/// Listing and forgetting private uploads and ending sessions in the catalog.
@Suite struct ForgettingCatalogTests {
    let catalog: Catalog
    let groupId: Int64
    let session: SessionRecord

    init() throws {
        catalog = try SQLiteCatalog.inMemory()
        groupId = try #require(try catalog.ensureGroup(named: "table").id)
        let map = BlobRecord(digest: fakeDigest("map"), size: 2, mediaType: "application/vnd.hoard.map+json")
        session = SessionRecord(
            id: "room", name: "Room", groupId: groupId, host: "gm", visibility: "group", code: "ABCD-EFGH", mapDigest: map.digest,
            baseSeq: 0, lastSeq: 0, createdAt: Date())
        try catalog.createSession(session, mapBlob: map, reachable: [])
    }

    func picture(_ label: String) -> BlobRecord { BlobRecord(digest: fakeDigest(label), size: 10, mediaType: "image/png") }

    /// Records a session upload as the server does: a participant's names its id, a member's their token name.
    func uploadIntoRoom(_ blob: BlobRecord, by principal: Principal) throws {
        let uploader = principal.participantId ?? principal.tokenName
        try catalog.recordPrivateUpload(
            blob, PrivateUploadRecord(scope: .session(session.id), digest: blob.digest, groupId: groupId, uploader: uploader), session: session.id)
    }

    @Test func aForgottenSessionUploadLeavesTheSessionsReachUnlessAPackOrGroupHoldsTheSameBytes() throws {
        try catalog.addParticipant(ParticipantRecord(id: "p1", sessionId: session.id, name: "Ann", tokenHash: "hash", joinedAt: Date()))
        let ann = Principal(participant: "p1", name: "Ann", session: session.id)
        let (photo, alsoUploaded) = (picture("photo"), picture("also a group upload"))
        try catalog.recordUpload(alsoUploaded, groupId: groupId)
        try uploadIntoRoom(photo, by: ann)
        try uploadIntoRoom(alsoUploaded, by: ann)
        #expect(try catalog.forgetUpload(photo.digest, scope: .session(session.id))?.unreachableIn == session.id)
        #expect(try catalog.forgetUpload(alsoUploaded.digest, scope: .session(session.id))?.unreachableIn == .some(nil))
        #expect(try catalog.accessBase().sessions[session.id] == [alsoUploaded.digest])
        #expect(try catalog.forgetUpload(photo.digest, scope: .session(session.id)) == nil, "forgetting twice finds nothing")
        #expect(try catalog.collectGarbage() == [photo.digest])
    }

    @Test func endingASessionDeletesItsParticipantsEventsReachAndUploads() throws {
        try catalog.addParticipant(ParticipantRecord(id: "p1", sessionId: session.id, name: "Ann", tokenHash: "hash", joinedAt: Date()))
        try catalog.appendEvent(session: session.id, seq: 1, body: "{}")
        let member = Principal(groupId: groupId, group: "table", isAdmin: false, tokenName: "gm")
        try uploadIntoRoom(picture("photo"), by: Principal(participant: "p1", name: "Ann", session: session.id))
        try uploadIntoRoom(picture("drawing"), by: member)
        let own = picture("own")
        try catalog.recordPrivateUpload(
            own, PrivateUploadRecord(scope: .member(groupId: groupId, name: "gm"), digest: own.digest, groupId: groupId, uploader: "gm"),
            session: nil)
        #expect(try catalog.deleteSession(id: session.id))
        #expect(try catalog.session(code: session.code) == nil)
        #expect(try catalog.participants(session: session.id).isEmpty && catalog.events(session: session.id, after: 0).isEmpty)
        #expect(try catalog.accessBase().sessions[session.id] == nil)
        #expect(try catalog.uploads(by: member, offset: 0, limit: 10).page.map(\.digest) == [own.digest], "the member's own space stays")
        #expect(try catalog.usage(groupId: groupId) == own.size)
        #expect(try !catalog.deleteSession(id: session.id))
    }

    @Test func aMemberListsTheirOwnSpaceAndTheirSessionUploadsAndAParticipantOnlyItsOwn() throws {
        let member = Principal(groupId: groupId, group: "table", isAdmin: false, tokenName: "gm")
        let ann = Principal(participant: "p1", name: "gm", session: session.id)
        let (own, drawing, photo) = (picture("own"), picture("drawing"), picture("photo"))
        try catalog.recordPrivateUpload(
            own, PrivateUploadRecord(scope: .member(groupId: groupId, name: "gm"), digest: own.digest, groupId: groupId, uploader: "gm"),
            session: nil)
        try uploadIntoRoom(drawing, by: member)
        try uploadIntoRoom(photo, by: ann)
        #expect(Set(try catalog.uploads(by: member, offset: 0, limit: 10).page.map(\.digest)) == [own.digest, drawing.digest])
        #expect(try catalog.uploads(by: ann, offset: 0, limit: 10).page.map(\.digest) == [photo.digest], "a participant named like the member")
        let page = try catalog.uploads(by: member, offset: 1, limit: 1)
        #expect(page.total == 2 && page.page.count == 1)
        let stranger = Principal(groupId: groupId + 1, group: "other", isAdmin: true, tokenName: "gm")
        #expect(try catalog.uploads(by: stranger, offset: 0, limit: 10).total == 0)
    }
}
