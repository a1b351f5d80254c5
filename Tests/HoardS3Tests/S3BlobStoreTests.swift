import BlobStoreConformance
import Foundation
import HoardCore
import HoardStore
import NIOCore
import Testing

@testable import HoardS3

// The S3 blob store against a real S3 service that checks signatures (OpenStack Swift's S3 API, started by
// tools/s3-server.sh; scripts/test.sh starts it and passes HOARD_TEST_S3_*). Without it these tests fail: they are
// never skipped.

/// The service the tests use, from the environment.
private struct TestService {
    var endpoint: String
    var credentials: S3Credentials

    static func fromEnvironment() throws -> TestService {
        let environment = ProcessInfo.processInfo.environment
        guard let endpoint = environment["HOARD_TEST_S3_ENDPOINT"], !endpoint.isEmpty else {
            throw BlobStoreError(.misconfigured, "HOARD_TEST_S3_ENDPOINT is not set: start the S3 service with "
                + "`eval \"$(tools/s3-server.sh start DIR)\"` before `swift test` (scripts/test.sh does)")
        }
        return TestService(
            endpoint: endpoint,
            credentials: S3Credentials(accessKeyID: environment["HOARD_TEST_S3_ACCESS_KEY"] ?? "test:tester",
                                       secretAccessKey: environment["HOARD_TEST_S3_SECRET"] ?? "testing"))
    }
}

/// A store on the test service under a fresh prefix of a shared bucket (or in a fresh bucket), made ready with
/// `validate()`; `adjust` changes the configuration first.
private func makeS3Store(freshBucket: Bool = false, secret: String? = nil,
                         adjust: (inout S3Configuration) -> Void = { _ in }) async throws -> S3BlobStore {
    let service = try TestService.fromEnvironment()
    let unique = UUID().uuidString.lowercased()
    var credentials = service.credentials
    if let secret { credentials.secretAccessKey = secret }
    let location = freshBucket ? "s3://hoard-\(unique.prefix(18))" : "s3://hoard-tests/runs/ü +\(unique)"
    var configuration = try S3Configuration(location: location, endpoint: service.endpoint, credentials: credentials,
                                            stagingDirectory: NSTemporaryDirectory() + "hoard-s3-staging-" + unique)
    adjust(&configuration)
    let store = try S3BlobStore(configuration: configuration)
    try await store.validate()
    return store
}

/// The S3 store with its ways to age a blob (its `touched` metadata) and damage one (a PUT behind its back).
private func makeS3StoreUnderTest(adjust: (inout S3Configuration) -> Void = { _ in }) async throws -> StoreUnderTest {
    let store = try await makeS3Store(adjust: adjust)
    return StoreUnderTest(
        store: store,
        setModified: { digest, date in try await store.setTouched(digest, to: date) },
        corrupt: { digest, bytes in
            try await store.client.put(store.key(of: digest), body: ByteBuffer(bytes: bytes), payloadHash: BlobHasher.digest(of: bytes).hex)
        },
        cleanup: { try? FileManager.default.removeItem(atPath: store.configuration.stagingDirectory) })
}

/// One test at a time: the test service is a single Python process per server, and the rest of the suite runs beside.
@Suite(.serialized)
struct TheS3StoreOnARealService {
    @Test(arguments: BlobStoreConformance.checks)
    func theS3StoreKeepsTheBlobStoreContract(_ check: BlobStoreCheck) async throws {
        try await check.run(on: makeS3StoreUnderTest())
    }

    /// The same contract when every publish lists the bucket first (``S3BlobStore/absentByListing(_:)``).
    @Test(arguments: BlobStoreConformance.checks)
    func theS3StoreKeepsTheBlobStoreContractWhenEveryPublishLists(_ check: BlobStoreCheck) async throws {
        try await check.run(on: makeS3StoreUnderTest { $0.listingMinimum = 1 })
    }

    @Test func aBlobAboveTheThresholdGoesUpInPartsAndReadsBackWhole() async throws {
        let store = try await makeS3Store { configuration in
            configuration.partSize = S3Configuration.minimumPartSize
            configuration.multipartThreshold = Int64(S3Configuration.minimumPartSize)
        }
        let subject = StoreUnderTest(store: store, setModified: { _, _ in }, corrupt: { _, _ in })
        // Two whole parts and a short third one.
        let bytes = pseudoRandomBytes(count: 2 * S3Configuration.minimumPartSize + 12_345, seed: 11)
        let (summary, digests) = try await subject.publish([bytes])
        #expect(summary.newBytes == Int64(bytes.count))
        let digest = try #require(digests.first)
        #expect(try await store.read(digest, range: nil) == bytes)
        #expect(try await store.rehash(digest)?.digest == digest)
        #expect(try await store.info(digest)?.size == Int64(bytes.count))
        // S3 marks an object joined from N parts by an ETag ending in -N.
        #expect(try await store.client.head(store.key(of: digest))?.etag.hasSuffix("-3\"") == true)
        // A range across the first part boundary.
        let boundary = Int64(S3Configuration.minimumPartSize)
        #expect(try await store.read(digest, range: (boundary - 10)..<(boundary + 10)) == Array(bytes[Int(boundary - 10)..<Int(boundary + 10)]))
        // Published again, nothing goes up; touched (a copy onto itself), it keeps its bytes and gets a new date.
        #expect(try await subject.publish([bytes]).summary.newBlobs.isEmpty)
        try await store.setTouched(digest, to: Date(timeIntervalSinceNow: -86_400))
        try await store.touch(digest)
        #expect(try #require(try await store.info(digest)).modified > Date(timeIntervalSinceNow: -60))
        #expect(try await store.rehash(digest)?.digest == digest)
    }

    @Test(arguments: [false, true])
    func stagedBytesThatDoNotMatchTheirDigestAreNeverUploaded(multipart: Bool) async throws {
        let store = try await makeS3Store { configuration in
            configuration.partSize = S3Configuration.minimumPartSize
            configuration.multipartThreshold = Int64(S3Configuration.minimumPartSize)
        }
        let area = try store.makeStagingArea()
        defer { area.discard() }
        let size = multipart ? S3Configuration.minimumPartSize + 100 : 1000
        let staged = try area.stage(pseudoRandomBytes(count: size, seed: 12))
        // A staged blob that claims another blob's digest.
        let claimed = BlobHasher.digest(of: pseudoRandomBytes(count: size, seed: 13))
        var forged = staged
        forged.digest = claimed
        let error = await #expect(throws: BlobStoreError.self) { try await store.publish([forged]) }
        #expect(error?.code == .corrupt)
        #expect(try await store.info(claimed) == nil)
        #expect(try await store.allDigests().isEmpty)
    }

    @Test func theServiceRefusesBytesThatDoNotMatchTheSignedHash() async throws {
        // What publish relies on: the upload is signed with the digest's hex, and the service checks the body against it.
        let store = try await makeS3Store()
        let claimed = BlobHasher.digest(of: Array("the bytes the digest names".utf8))
        let error = await #expect(throws: BlobStoreError.self) {
            try await store.client.put(store.key(of: claimed), body: ByteBuffer(string: "other bytes"), payloadHash: claimed.hex)
        }
        #expect(error?.message.contains("would not store") == true)
        #expect(try await store.info(claimed) == nil)
    }

    @Test func listingFollowsContinuationTokensPastOnePage() async throws {
        let store = try await makeS3Store { $0.listPageSize = 3 }
        let subject = StoreUnderTest(store: store, setModified: { _, _ in }, corrupt: { _, _ in })
        let (_, digests) = try await subject.publish((0..<10).map { pseudoRandomBytes(count: 40 + $0, seed: UInt64(100 + $0)) })
        let firstPage = try await store.client.listPage(prefix: store.configuration.prefix + "/", continuation: nil, maxKeys: 3)
        #expect(firstPage.keys.count == 3)
        #expect(firstPage.next != nil)
        let listed = try await store.allDigests()
        #expect(listed.count == 10)
        #expect(Set(listed) == Set(digests))
    }

    @Test func aPublishOfManyListsTheBucketAndLooksUpOnlyWhatTheListingShows() async throws {
        // Pages of 3 keys and a listing from one blob on: the walk crosses several pages, jumping from key to key.
        let store = try await makeS3Store { configuration in
            configuration.listPageSize = 3
            configuration.listingMinimum = 1
        }
        let subject = StoreUnderTest(store: store, setModified: { _, _ in }, corrupt: { _, _ in })
        let all = (0..<12).map { pseudoRandomBytes(count: 60 + $0, seed: UInt64(300 + $0)) }
        let digests = all.map { BlobHasher.digest(of: $0) }
        #expect(try await store.absentByListing(digests) == Set(digests))
        let before = [1, 4, 5, 9].map { all[$0] }
        _ = try await subject.publish(before)
        let present = Set(before.map { BlobHasher.digest(of: $0) })
        #expect(try await store.absentByListing(digests) == Set(digests).subtracting(present))
        // Below the minimum, nothing is listed: each blob is looked up.
        let unlisted = try await makeS3Store { $0.listingMinimum = 13 }
        #expect(try await unlisted.absentByListing(digests).isEmpty)

        // A present blob is still looked up and refreshed; the absent ones are uploaded, and every blob reads back.
        let aged = BlobHasher.digest(of: all[4])
        try await store.setTouched(aged, to: Date(timeIntervalSinceNow: -86_400))
        let (summary, published) = try await subject.publish(all)
        #expect(published == digests)
        #expect(summary.newBlobs == Set(digests).subtracting(present))
        #expect(try #require(try await store.info(aged)).modified > Date(timeIntervalSinceNow: -60))
        for (bytes, digest) in zip(all, digests) { #expect(try await store.read(digest, range: nil) == bytes) }
        #expect(try await store.absentByListing(digests).isEmpty)
    }

    @Test func aKeyJustBeforeSortsBetweenItsNeighbours() {
        #expect(S3BlobStore.keyJustBefore("v1/sha256/ab/ab0") == "v1/sha256/ab/ab/")
        #expect(S3BlobStore.keyJustBefore("v1/sha256/ab/abf") == "v1/sha256/ab/abe")
        #expect("v1/sha256/ab/abe".utf8.lexicographicallyPrecedes("v1/sha256/ab/abf".utf8))
    }

    @Test func aWrongSecretIsAClearErrorAtStart() async throws {
        do {
            _ = try await makeS3Store(secret: "not-the-secret")
            Issue.record("a wrong secret was accepted")
        } catch let error as BlobStoreError {
            #expect(error.code == .misconfigured)
            #expect(error.message == "the S3 store refused the credentials (SignatureDoesNotMatch) — check AWS_SECRET_ACCESS_KEY")
        }
    }

    @Test func aWrongRegionIsAClearErrorAtStart() async throws {
        let service = try TestService.fromEnvironment()
        let configuration = try S3Configuration(
            location: "s3://hoard-tests", endpoint: service.endpoint, region: "eu-west-3", credentials: service.credentials,
            stagingDirectory: NSTemporaryDirectory() + "hoard-s3-unused")
        let error = await #expect(throws: BlobStoreError.self) { try await S3BlobStore(configuration: configuration).validate() }
        #expect(error?.code == .misconfigured)
        #expect(error?.message.contains("--s3-region") == true)
    }

    @Test func anUnknownAccessKeyIsRefusedAtStart() async throws {
        let service = try TestService.fromEnvironment()
        let configuration = try S3Configuration(
            location: "s3://hoard-tests", endpoint: service.endpoint,
            credentials: S3Credentials(accessKeyID: "nobody:none", secretAccessKey: "x"), stagingDirectory: NSTemporaryDirectory() + "hoard-s3-unused")
        let error = await #expect(throws: BlobStoreError.self) { try await S3BlobStore(configuration: configuration).validate() }
        #expect(error?.code == .misconfigured)
    }

    @Test func theBucketIsMadeWhenMissing() async throws {
        let store = try await makeS3Store(freshBucket: true)
        let subject = StoreUnderTest(store: store, setModified: { _, _ in }, corrupt: { _, _ in })
        let digest = try await subject.publish(Array("first blob in a new bucket".utf8))
        #expect(try await store.read(digest, range: nil) == Array("first blob in a new bucket".utf8))
        // Validating again finds the bucket there.
        try await store.validate()
    }

    @Test func anUnreachableServiceIsUnavailableNotAnotherError() async throws {
        let configuration = try S3Configuration(
            location: "s3://hoard-tests", endpoint: "http://127.0.0.1:1",
            credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"), stagingDirectory: NSTemporaryDirectory() + "hoard-s3-unused")
        let error = await #expect(throws: BlobStoreError.self) { try await S3BlobStore(configuration: configuration).validate() }
        #expect(error?.code == .unavailable)
    }
}

@Test func blobKeysMirrorTheFileStoresLayoutUnderThePrefix() throws {
    let configuration = try S3Configuration(location: "s3://bucket/some/prefix/", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"),
                                            stagingDirectory: NSTemporaryDirectory() + "hoard-s3-unused")
    let store = try S3BlobStore(configuration: configuration)
    let digest = BlobHasher.digest(of: Array("abc".utf8))
    #expect(store.key(of: digest) == "some/prefix/v1/sha256/ba/" + digest.hex)
}
