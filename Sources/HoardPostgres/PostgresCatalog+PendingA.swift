import Foundation
import HoardCatalog
import HoardCore

// Calls not yet written for PostgreSQL (groups, access, blobs, member space, sessions): each fails with a clear error until it is. Delete a call here when
// PostgresCatalog+<Area>.swift implements it.
extension PostgresCatalog: CatalogBackend {}

extension PostgresCatalog {
    public func ensureGroup(named name: String) throws(CatalogError) -> GroupRecord { throw PostgresCatalog.pending("ensureGroup") }
    public func groups() throws(CatalogError) -> [GroupRecord] { throw PostgresCatalog.pending("groups") }
    public func createGroup(named name: String, quotaBytes: Int64?) throws(CatalogError) -> GroupRecord { throw PostgresCatalog.pending("createGroup") }
    public func setQuota(_ bytes: Int64?, group name: String) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("setQuota") }
    public func addToken( group name: String, label: String, secretHash: String, role: TokenRole) throws(CatalogError) -> TokenRecord { throw PostgresCatalog.pending("addToken") }
    public func tokens(groupId: Int64) throws(CatalogError) -> [TokenRecord] { throw PostgresCatalog.pending("tokens") }
    public func deleteToken(id: Int64, groupId: Int64) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("deleteToken") }
    public func addInvite(_ invite: InviteRecord) throws(CatalogError) { throw PostgresCatalog.pending("addInvite") }
    public func redeemInvite( codeHash: String, label: String, secretHash: String, now: Date) throws(CatalogError) -> (token: TokenRecord, group: String)? { throw PostgresCatalog.pending("redeemInvite") }
    public func usage(groupId: Int64) throws(CatalogError) -> Int64 { throw PostgresCatalog.pending("usage") }
    public func group(named name: String) throws(CatalogError) -> GroupRecord? { throw PostgresCatalog.pending("group") }
    public func group(matching name: String) throws(CatalogError) -> GroupRecord? { throw PostgresCatalog.pending("group") }
    public func quota(groupId: Int64) throws(CatalogError) -> (used: Int64, quota: Int64?, name: String)? { throw PostgresCatalog.pending("quota") }
    public func accessBase() throws(CatalogError) -> AccessBase { throw PostgresCatalog.pending("accessBase") }
    public func blobOwners(_ digest: Digest) throws(CatalogError) -> BlobOwners? { throw PostgresCatalog.pending("blobOwners") }
    public func blobOwners(_ digests: [Digest]) throws(CatalogError) -> [Digest: BlobOwners] { throw PostgresCatalog.pending("blobOwners") }
    public func accessChanges(after seq: Int64, limit: Int) throws(CatalogError) -> (changes: [AccessChange], oldest: Int64?) { throw PostgresCatalog.pending("accessChanges") }
    public func lastAccessChange() throws(CatalogError) -> Int64 { throw PostgresCatalog.pending("lastAccessChange") }
    public func pruneAccessChanges(through seq: Int64, writtenBefore date: Date) throws(CatalogError) { throw PostgresCatalog.pending("pruneAccessChanges") }
    public func packAccess(id: Int64) throws(CatalogError) -> PackAccess? { throw PostgresCatalog.pending("packAccess") }
    public func principal(tokenHash: String) throws(CatalogError) -> Principal? { throw PostgresCatalog.pending("principal") }
    public func versionDigests(id: Int64) throws(CatalogError) -> [Digest] { throw PostgresCatalog.pending("versionDigests") }
    public func packOwner(named name: String, group: String?) throws(CatalogError) -> (groupId: Int64, isPublic: Bool)? { throw PostgresCatalog.pending("packOwner") }
    public func recordUpload(_ blob: BlobRecord, groupId: Int64) throws(CatalogError) { throw PostgresCatalog.pending("recordUpload") }
    public func blob(_ digest: Digest) throws(CatalogError) -> BlobRecord? { throw PostgresCatalog.pending("blob") }
    public func blobs() throws(CatalogError) -> [BlobRecord] { throw PostgresCatalog.pending("blobs") }
    public func danglingReferences() throws(CatalogError) -> [Digest] { throw PostgresCatalog.pending("danglingReferences") }
    public func collectGarbage() throws(CatalogError) -> [Digest] { throw PostgresCatalog.pending("collectGarbage") }
    public func refs(group groupId: Int64, member: String) throws(CatalogError) -> [RefRecord] { throw PostgresCatalog.pending("refs") }
    public func ref(group groupId: Int64, member: String, name: String) throws(CatalogError) -> RefRecord? { throw PostgresCatalog.pending("ref") }
    public func moveRef( group groupId: Int64, member: String, name: String, to digest: Digest, expected: RefExpectation ) throws(CatalogError) -> RefUpdate { throw PostgresCatalog.pending("moveRef") }
    public func deleteRef(group groupId: Int64, member: String, name: String, expected: RefExpectation) throws(CatalogError) -> RefUpdate? { throw PostgresCatalog.pending("deleteRef") }
    public func recordPrivateUpload(_ blob: BlobRecord, _ upload: PrivateUploadRecord, session: String?) throws(CatalogError) { throw PostgresCatalog.pending("recordPrivateUpload") }
    public func privateUpload(_ digest: Digest) throws(CatalogError) -> (blob: BlobRecord, scopes: [String])? { throw PostgresCatalog.pending("privateUpload") }
    public func privateUpload(_ digest: Digest, scope: UploadScope) throws(CatalogError) -> PrivateUploadRecord? { throw PostgresCatalog.pending("privateUpload") }
    public func uploads(by principal: Principal, offset: Int, limit: Int) throws(CatalogError) -> (page: [UploadListing], total: Int) { throw PostgresCatalog.pending("uploads") }
    public func forgetUpload(_ digest: Digest, scope: UploadScope) throws(CatalogError) -> ForgottenUpload? { throw PostgresCatalog.pending("forgetUpload") }
    public func createShare(_ share: ShareRecord) throws(CatalogError) { throw PostgresCatalog.pending("createShare") }
    public func share(id: String) throws(CatalogError) -> ShareRecord? { throw PostgresCatalog.pending("share") }
    public func shares(group groupId: Int64, member: String) throws(CatalogError) -> [ShareRecord] { throw PostgresCatalog.pending("shares") }
    public func deleteShare(id: String) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("deleteShare") }
    public func resolve(_ references: Set<Digest>, group: Int64?) throws(CatalogError) -> ResolvedReferences { throw PostgresCatalog.pending("resolve") }
    public func createSession(_ session: SessionRecord, mapBlob: BlobRecord, reachable: Set<Digest>) throws(CatalogError) { throw PostgresCatalog.pending("createSession") }
    public func setMap(session id: String, mapBlob: BlobRecord, reachable: Set<Digest>, baseSeq: Int64) throws(CatalogError) { throw PostgresCatalog.pending("setMap") }
    public func addReachable(session id: String, _ digests: Set<Digest>) throws(CatalogError) { throw PostgresCatalog.pending("addReachable") }
    public func session(id: String) throws(CatalogError) -> SessionRecord? { throw PostgresCatalog.pending("session") }
    public func sessionIds() throws(CatalogError) -> [String] { throw PostgresCatalog.pending("sessionIds") }
    public func session(code: String) throws(CatalogError) -> SessionRecord? { throw PostgresCatalog.pending("session") }
    public func sessions(groupId: Int64, host: String?) throws(CatalogError) -> [SessionRecord] { throw PostgresCatalog.pending("sessions") }
    public func participants(session id: String) throws(CatalogError) -> [ParticipantRecord] { throw PostgresCatalog.pending("participants") }
    public func participantCount(session id: String) throws(CatalogError) -> Int { throw PostgresCatalog.pending("participantCount") }
    public func addParticipant(_ participant: ParticipantRecord) throws(CatalogError) { throw PostgresCatalog.pending("addParticipant") }
    public func removeParticipant(_ id: String, session: String) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("removeParticipant") }
    public func setCode(_ code: String, session id: String) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("setCode") }
    public func appendEvent(session id: String, seq: Int64, body: String, views: String?) throws(CatalogError) { throw PostgresCatalog.pending("appendEvent") }
    public func events(session id: String, after seq: Int64) throws(CatalogError) -> [LoggedEvent] { throw PostgresCatalog.pending("events") }
    public func eventBytes(session id: String, after seq: Int64) throws(CatalogError) -> Int { throw PostgresCatalog.pending("eventBytes") }
    public func fold(session id: String, mapBlob: BlobRecord, baseSeq: Int64, keeping: Int64) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("fold") }
    public func art(of digests: Set<Digest>) throws(CatalogError) -> [Digest: Set<Digest>] { throw PostgresCatalog.pending("art") }
    public func participantUploads(session id: String) throws(CatalogError) -> [(digest: Digest, participant: String)] { throw PostgresCatalog.pending("participantUploads") }
    public func saveMap(group groupId: Int64, name: String, blob: BlobRecord, reachable: Set<Digest>) throws(CatalogError) -> SavedMapRecord { throw PostgresCatalog.pending("saveMap") }
    public func savedMaps(group groupId: Int64) throws(CatalogError) -> [SavedMapRecord] { throw PostgresCatalog.pending("savedMaps") }
    public func deleteMap(group groupId: Int64, name: String) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("deleteMap") }
    public func deleteSession(id: String) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("deleteSession") }
}
