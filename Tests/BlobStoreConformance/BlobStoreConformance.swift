import Foundation
import HoardCore
import HoardStore
import Testing

/// The contract of `BlobStore` as a list of named checks, run against every backend by that backend's test target:
/// `@Test(arguments: BlobStoreConformance.checks) func …(_ check: BlobStoreCheck) { try await check.run(on: …) }`.
public enum BlobStoreConformance {
    /// Every check, each on a fresh, empty store.
    public static let checks: [BlobStoreCheck] = [
        BlobStoreCheck("stagingThenPublishingMakesEveryBlobReadableWithExactlyItsBytes", stagingThenPublishingMakesEveryBlobReadableWithExactlyItsBytes),
        BlobStoreCheck("aBlobsDigestIsTheSHA256OfItsBytes", aBlobsDigestIsTheSHA256OfItsBytes),
        BlobStoreCheck("aBlobWrittenInPiecesHashesLikeTheWhole", aBlobWrittenInPiecesHashesLikeTheWhole),
        BlobStoreCheck("publishingTheSameBlobTwiceStoresNothingNewTheSecondTime", publishingTheSameBlobTwiceStoresNothingNewTheSecondTime),
        BlobStoreCheck("duplicateBlobsInOneBatchCountOnce", duplicateBlobsInOneBatchCountOnce),
        BlobStoreCheck("readingARangeReturnsExactlyThoseBytes", readingARangeReturnsExactlyThoseBytes),
        BlobStoreCheck("anAbsentBlobReadsAsNil", anAbsentBlobReadsAsNil),
        BlobStoreCheck("deletingRemovesABlobAndDeletingAnAbsentOneSucceeds", deletingRemovesABlobAndDeletingAnAbsentOneSucceeds),
        BlobStoreCheck("aDeletedBlobCanBePublishedAgain", aDeletedBlobCanBePublishedAgain),
        BlobStoreCheck("allDigestsListsExactlyWhatWasPublished", allDigestsListsExactlyWhatWasPublished),
        BlobStoreCheck("touchingABlobUpdatesItsModificationTime", touchingABlobUpdatesItsModificationTime),
        BlobStoreCheck("republishingAnExistingBlobRefreshesItsModificationTime", republishingAnExistingBlobRefreshesItsModificationTime),
        BlobStoreCheck("discardingAStagingAreaLeavesNoFiles", discardingAStagingAreaLeavesNoFiles),
        BlobStoreCheck("publishingFromADiscardedStagingAreaFailsAndStoresNothing", publishingFromADiscardedStagingAreaFailsAndStoresNothing),
        BlobStoreCheck("rehashingDetectsCorruption", rehashingDetectsCorruption),
        BlobStoreCheck("concurrentPublishesOfTheSameBlobBothSucceed", concurrentPublishesOfTheSameBlobBothSucceed),
    ]
}

/// One behaviour every blob store must have, run on a store under test.
public struct BlobStoreCheck: Sendable, CustomTestStringConvertible {
    /// The behaviour, as a phrase (the original test's name).
    public let name: String
    private let body: @Sendable (StoreUnderTest) async throws -> Void

    init(_ name: String, _ body: @escaping @Sendable (StoreUnderTest) async throws -> Void) {
        self.name = name
        self.body = body
    }

    public var testDescription: String { name }

    /// Runs the check on `subject`, which must be empty.
    public func run(on subject: StoreUnderTest) async throws { try await body(subject) }
}

/// SHA-256 test vectors (FIPS 180-2).
private let vectors: [(input: [UInt8], hex: String)] = [
    ([], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
]

private func stagingThenPublishingMakesEveryBlobReadableWithExactlyItsBytes(_ subject: StoreUnderTest) async throws {
    let contents: [[UInt8]] = [[], [0], Array("goblin".utf8), pseudoRandomBytes(count: 70_000, seed: 1),
                               pseudoRandomBytes(count: 3 << 20, seed: 2)]
    let (summary, digests) = try await subject.publish(contents)
    #expect(summary.newBlobs == Set(digests))
    #expect(summary.newBytes == Int64(contents.map(\.count).reduce(0, +)))
    for (bytes, digest) in zip(contents, digests) {
        let read = try #require(try await subject.store.read(digest, range: nil))
        #expect(read == bytes)
        let info = try #require(try await subject.store.info(digest))
        #expect(info.size == Int64(bytes.count))
    }
}

private func aBlobsDigestIsTheSHA256OfItsBytes(_ subject: StoreUnderTest) async throws {
    for vector in vectors {
        let expected = try #require(knownDigest(vector.hex))
        let digest = try await subject.publish(vector.input)
        #expect(digest == expected)
        #expect(BlobHasher.digest(of: vector.input) == expected)
        #expect(try await subject.store.read(expected, range: nil) == vector.input)
        #expect(try await subject.store.rehash(expected)?.digest == expected)
    }
}

private func aBlobWrittenInPiecesHashesLikeTheWhole(_ subject: StoreUnderTest) async throws {
    // One million "a": the long FIPS 180-2 vector, written in uneven pieces.
    let area = try subject.store.makeStagingArea()
    defer { area.discard() }
    let writer = try area.makeWriter(keepingPrefix: 10)
    var written = 0
    var piece = 1
    while written < 1_000_000 {
        let count = min(piece, 1_000_000 - written)
        try [UInt8](repeating: UInt8(ascii: "a"), count: count).withUnsafeBytes { try writer.write($0) }
        written += count
        piece = piece * 3 + 7
    }
    #expect(writer.prefix == [UInt8](repeating: UInt8(ascii: "a"), count: 10))
    let staged = try writer.finish()
    #expect(staged.size == 1_000_000)
    #expect(staged.digest == knownDigest("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"))
    let summary = try await subject.store.publish([staged])
    #expect(summary.newBytes == 1_000_000)
    #expect(try await subject.store.rehash(staged.digest)?.size == 1_000_000)
}

private func publishingTheSameBlobTwiceStoresNothingNewTheSecondTime(_ subject: StoreUnderTest) async throws {
    let bytes = pseudoRandomBytes(count: 4096, seed: 3)
    let first = try await subject.publish([bytes])
    #expect(first.summary.newBlobs.count == 1)
    #expect(first.summary.newBytes == 4096)
    let second = try await subject.publish([bytes, Array("new".utf8)])
    #expect(second.summary.newBlobs == [second.digests[1]])
    #expect(second.summary.newBytes == 3)
    let third = try await subject.publish([bytes])
    #expect(third.summary.newBlobs.isEmpty)
    #expect(third.summary.newBytes == 0)
    #expect(try await subject.store.allDigests().count == 2)
    #expect(try await subject.store.read(first.digests[0], range: nil) == bytes)
}

private func duplicateBlobsInOneBatchCountOnce(_ subject: StoreUnderTest) async throws {
    let bytes = Array("the same token art".utf8)
    let (summary, digests) = try await subject.publish([bytes, Array("other".utf8), bytes, bytes])
    #expect(digests[0] == digests[2])
    #expect(summary.newBlobs.count == 2)
    #expect(summary.newBytes == Int64(bytes.count + 5))
    #expect(try await subject.store.allDigests().count == 2)
    #expect(try await subject.store.read(digests[0], range: nil) == bytes)
}

private func readingARangeReturnsExactlyThoseBytes(_ subject: StoreUnderTest) async throws {
    let bytes = pseudoRandomBytes(count: 10_000, seed: 4)
    let digest = try await subject.publish(bytes)
    for range: Range<Int64> in [0..<1, 2..<5, 0..<10_000, 9_999..<10_000, 4_096..<8_193, 100..<100] {
        let read = try await subject.store.read(digest, range: range)
        #expect(read == Array(bytes[Int(range.lowerBound)..<Int(range.upperBound)]), "range \(range)")
    }
    // A range past the end gives what there is.
    #expect(try await subject.store.read(digest, range: 9_990..<20_000) == Array(bytes[9_990...]))
    #expect(try await subject.store.read(digest, range: 20_000..<20_010) == [])
}

private func anAbsentBlobReadsAsNil(_ subject: StoreUnderTest) async throws {
    try await subject.publish(Array("present".utf8))
    let absent = BlobHasher.digest(of: Array("absent".utf8))
    #expect(try await subject.store.read(absent, range: nil) == nil)
    #expect(try await subject.store.read(absent, range: 0..<1) == nil)
    #expect(try await subject.store.info(absent) == nil)
    #expect(try await subject.store.rehash(absent) == nil)
}

private func deletingRemovesABlobAndDeletingAnAbsentOneSucceeds(_ subject: StoreUnderTest) async throws {
    let kept = try await subject.publish(Array("kept".utf8))
    let doomed = try await subject.publish(Array("doomed".utf8))
    try await subject.store.delete(doomed)
    #expect(try await subject.store.read(doomed, range: nil) == nil)
    #expect(try await subject.store.info(doomed) == nil)
    #expect(try await subject.store.allDigests() == [kept])
    // Again, now absent, and a digest never stored.
    try await subject.store.delete(doomed)
    try await subject.store.delete(BlobHasher.digest(of: Array("never".utf8)))
    #expect(try await subject.store.read(kept, range: nil) == Array("kept".utf8))
}

private func aDeletedBlobCanBePublishedAgain(_ subject: StoreUnderTest) async throws {
    let bytes = Array("phoenix".utf8)
    let digest = try await subject.publish(bytes)
    try await subject.store.delete(digest)
    let again = try await subject.publish([bytes])
    #expect(again.summary.newBlobs == [digest])
    #expect(try await subject.store.read(digest, range: nil) == bytes)
}

private func allDigestsListsExactlyWhatWasPublished(_ subject: StoreUnderTest) async throws {
    #expect(try await subject.store.allDigests().isEmpty)
    let contents = (0..<40).map { pseudoRandomBytes(count: 17 + $0, seed: UInt64($0)) }
    let (_, digests) = try await subject.publish(contents)
    let listed = try await subject.store.allDigests()
    #expect(listed.count == 40)
    #expect(Set(listed) == Set(digests))
    // Staged but never published blobs are not listed.
    let area = try subject.store.makeStagingArea()
    let unpublished = try area.stage(Array("unpublished".utf8))
    #expect(try await !subject.store.allDigests().contains(unpublished.digest))
    area.discard()
}

private func touchingABlobUpdatesItsModificationTime(_ subject: StoreUnderTest) async throws {
    let digest = try await subject.publish(Array("old map".utf8))
    let past = Date(timeIntervalSinceNow: -86_400 * 3)
    try await subject.setModified(digest, to: past)
    let aged = try #require(try await subject.store.info(digest))
    #expect(abs(aged.modified.timeIntervalSince(past)) < 2)
    let before = Date()
    try await subject.store.touch(digest)
    let touched = try #require(try await subject.store.info(digest))
    #expect(touched.modified > past.addingTimeInterval(86_400))
    #expect(touched.modified >= before.addingTimeInterval(-2))
    // Touching an absent blob is not an error.
    try await subject.store.touch(BlobHasher.digest(of: Array("absent".utf8)))
}

private func republishingAnExistingBlobRefreshesItsModificationTime(_ subject: StoreUnderTest) async throws {
    let bytes = Array("reused art".utf8)
    let digest = try await subject.publish(bytes)
    try await subject.setModified(digest, to: Date(timeIntervalSinceNow: -86_400))
    try await subject.publish([bytes])
    let info = try #require(try await subject.store.info(digest))
    #expect(info.modified > Date(timeIntervalSinceNow: -60))
}

private func discardingAStagingAreaLeavesNoFiles(_ subject: StoreUnderTest) async throws {
    let area = try subject.store.makeStagingArea()
    let staged = try [area.stage(Array("one".utf8)), area.stage(pseudoRandomBytes(count: 100_000, seed: 5))]
    for blob in staged { #expect(FileManager.default.fileExists(atPath: blob.path)) }
    #expect(FileManager.default.fileExists(atPath: area.directory))
    area.discard()
    #expect(!FileManager.default.fileExists(atPath: area.directory))
    for blob in staged { #expect(!FileManager.default.fileExists(atPath: blob.path)) }
    area.discard()  // a second discard is harmless
    #expect(try await subject.store.allDigests().isEmpty)
}

private func publishingFromADiscardedStagingAreaFailsAndStoresNothing(_ subject: StoreUnderTest) async throws {
    let area = try subject.store.makeStagingArea()
    let staged = try area.stage(Array("vanished".utf8))
    area.discard()
    await #expect(throws: BlobStoreError.self) { try await subject.store.publish([staged]) }
    #expect(try await subject.store.read(staged.digest, range: nil) == nil)
}

private func rehashingDetectsCorruption(_ subject: StoreUnderTest) async throws {
    let bytes = Array("abc".utf8)
    let digest = try await subject.publish(bytes)
    let healthy = try #require(try await subject.store.rehash(digest))
    #expect(healthy.digest == digest)
    #expect(healthy.size == 3)
    let damaged = Array("abd!".utf8)
    try await subject.corrupt(digest, with: damaged)
    let rehashed = try #require(try await subject.store.rehash(digest))
    #expect(rehashed.digest != digest)
    #expect(rehashed.digest == BlobHasher.digest(of: damaged))
    #expect(rehashed.size == 4)
}

private func concurrentPublishesOfTheSameBlobBothSucceed(_ subject: StoreUnderTest) async throws {
    let bytes = pseudoRandomBytes(count: 200_000, seed: 6)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<4 {
            group.addTask { _ = try await subject.publish([bytes]) }
        }
        try await group.waitForAll()
    }
    let digest = BlobHasher.digest(of: bytes)
    #expect(try await subject.store.allDigests() == [digest])
    #expect(try await subject.store.read(digest, range: nil) == bytes)
}
