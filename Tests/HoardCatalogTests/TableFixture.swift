import Foundation
import HoardCatalog
import HoardCore
import Testing

/// A new catalog of one backend with a group "table" and one session, "room", at seq 0.
struct TableFixture {
    let catalog: Catalog
    let groupId: Int64
    let session: SessionRecord

    init(_ kind: CatalogBackendKind) throws {
        catalog = try kind.makeCatalog()
        groupId = try #require(try catalog.ensureGroup(named: "table").id)
        session = try Self.makeSession("room", code: "ROOM-CODE", groupId: groupId, in: catalog)
    }

    /// Stores a session of `groupId` whose map is a new blob.
    static func makeSession(
        _ id: String, code: String, groupId: Int64, host: String = "gm", visibility: String = "group", in catalog: Catalog
    ) throws -> SessionRecord {
        let map = BlobRecord(digest: fakeDigest("map of \(id)"), size: 2, mediaType: "application/vnd.hoard.map+json")
        let session = SessionRecord(
            id: id, name: id.capitalized, groupId: groupId, host: host, visibility: visibility, code: code, mapDigest: map.digest,
            baseSeq: 0, lastSeq: 0, createdAt: Date())
        try catalog.createSession(session, mapBlob: map, reachable: [])
        return session
    }

    /// A picture's blob row for `label`.
    static func picture(_ label: String) -> BlobRecord { BlobRecord(digest: fakeDigest(label), size: 10, mediaType: "image/png") }

    /// Records an upload into the room as the server does: a participant's names its id, a member's their member id.
    func uploadIntoRoom(_ blob: BlobRecord, by principal: Principal) throws {
        let uploader = principal.participantId ?? principal.owner
        try catalog.recordPrivateUpload(
            blob, PrivateUploadRecord(scope: .session(session.id), digest: blob.digest, groupId: groupId, uploader: uploader),
            session: session.id)
    }
}

/// The code of the catalog error `body` throws, recording an issue when it throws nothing.
func errorCode(_ body: () throws(CatalogError) -> Void) -> CatalogFailure? {
    let error = #expect(throws: CatalogError.self) { try body() }
    return error?.code
}
