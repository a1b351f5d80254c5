import Foundation
import HoardCatalog
import HoardCore
import Testing

/// Refs, private uploads and shares in the catalog: compare-and-set, quota and garbage collection, on every backend.
@Suite struct MemberSpaceCatalogTests {
    /// A group whose member "ana" (member id 7) uploaded three pictures into her own space.
    struct Space {
        let catalog: Catalog
        let groupId: Int64
        let blobs: [BlobRecord]

        init(_ kind: CatalogBackendKind) throws {
            catalog = try kind.makeCatalog()
            groupId = try #require(try catalog.ensureGroup(named: "table").id)
            blobs = (0..<3).map { BlobRecord(digest: fakeDigest("picture \($0)"), size: 100 + Int64($0), mediaType: "image/png") }
            for blob in blobs {
                try catalog.recordPrivateUpload(
                    blob, PrivateUploadRecord(scope: .member(groupId: groupId, id: 7), digest: blob.digest, groupId: groupId, uploader: "7"),
                    session: nil)
            }
        }
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func aRefMovesOnlyFromWhatTheCallerExpected(_ kind: CatalogBackendKind) throws {
        let space = try Space(kind)
        let (catalog, groupId, blobs) = (space.catalog, space.groupId, space.blobs)
        let (a, b, c) = (blobs[0].digest, blobs[1].digest, blobs[2].digest)
        let move = { (to: Digest, expected: RefExpectation) in
            try catalog.moveRef(group: groupId, member: "ana", name: "last", to: to, expected: expected)
        }
        #expect(try move(b, .pointing(at: a)) == .conflict(current: nil))
        guard case .moved = try move(a, .absent) else { Issue.record("creating an absent ref failed"); return }
        #expect(try move(b, .absent) == .conflict(current: a))
        guard case .moved = try move(b, .pointing(at: a)) else { Issue.record("moving from the expected digest failed"); return }
        #expect(try move(c, .pointing(at: a)) == .conflict(current: b))
        guard case .moved = try move(c, .any) else { Issue.record("an unconditional move failed"); return }
        #expect(try catalog.ref(group: groupId, member: "ana", name: "last")?.digest == c)
        #expect(try catalog.ref(group: groupId, member: "bo", name: "last") == nil)
        #expect(try catalog.deleteRef(group: groupId, member: "ana", name: "last", expected: .pointing(at: b)) == .conflict(current: c))
        #expect(try catalog.deleteRef(group: groupId, member: "ana", name: "nothing", expected: .any) == nil)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func privateUploadsCountInTheGroupsUsage(_ kind: CatalogBackendKind) throws {
        let space = try Space(kind)
        let (catalog, groupId, blobs) = (space.catalog, space.groupId, space.blobs)
        #expect(try catalog.usage(groupId: groupId) == blobs.reduce(0) { $0 + $1.size })
        #expect(try catalog.privateUpload(blobs[0].digest)?.scopes == ["member:\(groupId):7"])
        #expect(try catalog.privateUpload(fakeDigest("never")) == nil)
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func garbageCollectionKeepsUploadsRefsAndShares(_ kind: CatalogBackendKind) throws {
        let space = try Space(kind)
        let (catalog, groupId, blobs) = (space.catalog, space.groupId, space.blobs)
        let shared = BlobRecord(digest: fakeDigest("shared upload"), size: 7, mediaType: "image/png")
        try catalog.recordPrivateUpload(
            shared, PrivateUploadRecord(scope: .session("s"), digest: shared.digest, groupId: groupId, uploader: "eve"), session: nil)
        try catalog.createShare(ShareRecord(
            id: "abc", groupId: groupId, member: "ana", digest: shared.digest, pictureDigest: shared.digest, name: nil))
        _ = try catalog.moveRef(group: groupId, member: "ana", name: "last", to: blobs[0].digest, expected: .any)
        #expect(try catalog.collectGarbage().isEmpty)
        #expect(try catalog.share(id: "abc")?.digest == shared.digest)
        #expect(try catalog.deleteShare(id: "abc"))
        #expect(try catalog.share(id: "abc") == nil)
        #expect(try !catalog.deleteShare(id: "abc"))
    }

    @Test(arguments: CatalogBackendKind.allCases)
    func refsListByNameByteForByteSharesNewestFirstAndUploadsOneScopeExactly(_ kind: CatalogBackendKind) throws {
        let space = try Space(kind)
        let (catalog, groupId, blobs) = (space.catalog, space.groupId, space.blobs)
        for name in ["b", "B", "a"] { _ = try catalog.moveRef(group: groupId, member: "ana", name: name, to: blobs[0].digest, expected: .absent) }
        #expect(try catalog.refs(group: groupId, member: "ana").map(\.name) == ["B", "a", "b"])
        #expect(try catalog.refs(group: groupId, member: "bo").isEmpty)
        let now = Date()
        for (index, id) in ["old", "new"].enumerated() {
            try catalog.createShare(ShareRecord(
                id: id, groupId: groupId, member: "ana", digest: blobs[index].digest, pictureDigest: blobs[index].digest, name: id,
                createdAt: now.addingTimeInterval(Double(index))))
        }
        #expect(try catalog.shares(group: groupId, member: "ana").map(\.id) == ["new", "old"])
        #expect(try catalog.shares(group: groupId, member: "ana").first?.name == "new")
        let upload = try #require(try catalog.privateUpload(blobs[1].digest, scope: .member(groupId: groupId, id: 7)))
        #expect(upload.uploader == "7" && upload.groupId == groupId && upload.digest == blobs[1].digest)
        #expect(try catalog.privateUpload(blobs[1].digest, scope: .member(groupId: groupId, id: 8)) == nil)
        let ana = Principal(groupId: groupId, group: "table", role: .member, member: 7, memberName: "ana", tokenName: "ana")
        let pastTheEnd = try catalog.uploads(by: ana, offset: 10, limit: 5)
        #expect(pastTheEnd.page.isEmpty && pastTheEnd.total == 3, "the count comes past the last page too")
        #expect(try catalog.forgetUpload(blobs[2].digest, scope: .member(groupId: groupId, id: 7)) == ForgottenUpload(unreachableIn: nil))
        #expect(try catalog.uploads(by: ana, offset: 0, limit: 5).total == 2)
    }
}
