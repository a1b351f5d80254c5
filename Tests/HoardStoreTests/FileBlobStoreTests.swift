import BlobStoreConformance
import Foundation
import HoardCore
import Testing

@testable import HoardStore

// What only the file backend promises: its layout on disk, read-only blobs, and staging clean-up.

/// A file store in a fresh folder, removed when `body` returns.
private func withFileStore<T>(_ body: (FileBlobStore, String) async throws -> T) async throws -> T {
    let root = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: root) }
    return try await body(try FileBlobStore(root: root), root)
}

private func publish(_ bytes: [UInt8], to store: FileBlobStore) async throws -> Digest {
    let area = try store.makeStagingArea()
    defer { area.discard() }
    let staged = try area.stage(bytes)
    _ = try await store.publish([staged])
    return staged.digest
}

private func contents(of directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

@Test func openingAStoreCreatesItsVersionedFolders() async throws {
    try await withFileStore { store, root in
        var isDirectory: ObjCBool = false
        for folder in ["v1", "v1/sha256", "v1/staging"] {
            #expect(FileManager.default.fileExists(atPath: "\(root)/\(folder)", isDirectory: &isDirectory) && isDirectory.boolValue)
        }
        #expect(store.versionDirectory == root + "/v1")
    }
}

@Test func blobsAreStoredUnderTheirShardedHexDigest() async throws {
    try await withFileStore { store, root in
        let bytes = Array("abc".utf8)
        let digest = try await publish(bytes, to: store)
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        let expected = "\(root)/v1/sha256/ba/\(hex)"
        #expect(store.path(of: digest) == expected)
        #expect(FileManager.default.contents(atPath: expected) == Data(bytes))
        #expect(try contents(of: "\(root)/v1/sha256") == ["ba"])
        #expect(try contents(of: "\(root)/v1/sha256/ba") == [hex])
    }
}

@Test func everyBlobLandsInTheShardOfItsFirstTwoHexDigits() async throws {
    try await withFileStore { store, root in
        for seed in 0..<30 {
            let digest = try await publish(pseudoRandomBytes(count: 64, seed: UInt64(seed)), to: store)
            let shard = String(digest.hex.prefix(2))
            #expect(FileManager.default.fileExists(atPath: "\(root)/v1/sha256/\(shard)/\(digest.hex)"))
        }
    }
}

@Test func aPublishedBlobIsReadOnly() async throws {
    try await withFileStore { store, _ in
        let digest = try await publish(Array("immutable".utf8), to: store)
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path(of: digest))
        let mode = try #require(attributes[.posixPermissions] as? NSNumber).intValue
        #expect(mode & 0o777 == 0o444)
    }
}

@Test func nothingIsLeftInStagingAfterPublishingAndDiscarding() async throws {
    try await withFileStore { store, root in
        let area = try store.makeStagingArea()
        #expect(area.directory.hasPrefix("\(root)/v1/staging/"))
        let staged = try [area.stage(Array("a".utf8)), area.stage(Array("b".utf8))]
        #expect(try contents(of: "\(root)/v1/staging").count == 1)
        _ = try await store.publish(staged)
        area.discard()
        #expect(try contents(of: "\(root)/v1/staging").isEmpty)
        // Discarding without publishing leaves nothing either.
        let abandoned = try store.makeStagingArea()
        _ = try abandoned.stage(pseudoRandomBytes(count: 50_000, seed: 9))
        abandoned.discard()
        #expect(try contents(of: "\(root)/v1/staging").isEmpty)
    }
}

@Test func aStagingAreaReleasedWithoutDiscardIsRemovedToo() async throws {
    try await withFileStore { store, root in
        do {
            let area = try store.makeStagingArea()
            _ = try area.stage(Array("forgotten".utf8))
            #expect(try contents(of: "\(root)/v1/staging").count == 1)
        }
        #expect(try contents(of: "\(root)/v1/staging").isEmpty)
    }
}

@Test func removingStaleStagingRemovesOldAreasAndKeepsYoungOnes() async throws {
    try await withFileStore { store, root in
        // What a crashed import leaves: a folder with a staged file, held by no one.
        let old = "\(root)/v1/staging/crashed-import"
        try FileManager.default.createDirectory(atPath: old, withIntermediateDirectories: true)
        try Data("crashed import".utf8).write(to: URL(fileURLWithPath: "\(old)/1.blob"))
        let young = try store.makeStagingArea()
        _ = try young.stage(Array("import in progress".utf8))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7_200)], ofItemAtPath: old)
        let removed = try await store.removeStaleStaging(olderThan: 3_600)
        #expect(removed == 1)
        #expect(!FileManager.default.fileExists(atPath: old))
        #expect(FileManager.default.fileExists(atPath: young.directory))
        #expect(try contents(of: "\(root)/v1/staging") == [URL(fileURLWithPath: young.directory).lastPathComponent])
        // Nothing stale remains, so a second pass removes nothing.
        #expect(try await store.removeStaleStaging(olderThan: 3_600) == 0)
        young.discard()
    }
}

/// Garbage collection with no grace at all (as tests and impatient admins run it) racing an import or a session's
/// map: the area its writer holds is kept however old it looks, and the writer goes on.
@Test func aStagingAreaInUseIsNeverRemovedHoweverOld() async throws {
    try await withFileStore { store, root in
        let area = try store.makeStagingArea()
        _ = try area.stage(Array("first".utf8))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -86_400)], ofItemAtPath: area.directory)
        #expect(try await store.removeStaleStaging(olderThan: 0) == 0)
        let staged = try area.stage(Array("second".utf8))
        _ = try await store.publish([staged])
        #expect(try await store.read(staged.digest, range: nil) == Array("second".utf8))
        area.discard()
        #expect(try contents(of: "\(root)/v1/staging").isEmpty)
    }
}

@Test func removingStaleStagingLeavesPublishedBlobsAlone() async throws {
    try await withFileStore { store, _ in
        let digest = try await publish(Array("published".utf8), to: store)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -86_400)], ofItemAtPath: store.path(of: digest))
        #expect(try await store.removeStaleStaging(olderThan: 60) == 0)
        #expect(try await store.read(digest, range: nil) == Array("published".utf8))
    }
}

@Test func aStoreReopenedOnTheSameFolderSeesItsBlobs() async throws {
    try await withFileStore { store, root in
        let digest = try await publish(Array("persistent".utf8), to: store)
        let reopened = try FileBlobStore(root: root)
        #expect(try await reopened.read(digest, range: nil) == Array("persistent".utf8))
        #expect(try await reopened.allDigests() == [digest])
    }
}

@Test func allDigestsIgnoresStrayFiles() async throws {
    try await withFileStore { store, root in
        let digest = try await publish(Array("real".utf8), to: store)
        let base = "\(root)/v1/sha256"
        // A note in a shard, a blob name in the wrong shard, and a folder that is not a shard.
        _ = FileManager.default.createFile(atPath: "\(base)/\(digest.hex.prefix(2))/README", contents: Data("x".utf8))
        let wrongShard = digest.hex.hasPrefix("00") ? "01" : "00"
        let stray = String(repeating: "f", count: 64)
        try FileManager.default.createDirectory(atPath: "\(base)/\(wrongShard)", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: "\(base)/\(wrongShard)/\(stray)", contents: Data("y".utf8))
        try FileManager.default.createDirectory(atPath: "\(base)/tmp", withIntermediateDirectories: true)
        #expect(try await store.allDigests() == [digest])
    }
}

#if os(Linux)
@Test func largeStagedBlobsAskTheDiskToFlushEarly() async throws {
    try await withFileStore { store, _ in
        let before = Durability.earlyFlushes
        let area = try store.makeStagingArea()
        defer { area.discard() }
        // Past the flush threshold in blobs above the write-out threshold.
        let block = [UInt8](repeating: 7, count: 1 << 20)
        let count = Int(Durability.flushEvery >> 20) + 2
        for index in 0..<count {
            let writer = try area.makeWriter()
            try block.withUnsafeBytes { try writer.write($0) }
            try [UInt8(truncatingIfNeeded: index)].withUnsafeBytes { try writer.write($0) }
            _ = try writer.finish()
        }
        let deadline = Date().addingTimeInterval(20)
        while Durability.earlyFlushes == before, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(Durability.earlyFlushes > before)
    }
}
#endif

@Test func aStagedBlobIsMappedWithExactlyItsBytes() async throws {
    try await withFileStore { store, _ in
        let area = try store.makeStagingArea()
        defer { area.discard() }
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try area.stage(bytes).withMappedBytes { Array($0) } == bytes)
        #expect(try area.stage([]).withMappedBytes { $0.count } == 0)
        var gone = try area.stage([1, 2, 3])
        gone.path += ".missing"
        #expect(throws: BlobStoreError.self) { try gone.withMappedBytes { $0.count } }
    }
}

@Test func aPublishedBlobKeepsOnlyItsStoreNameOnceItsStagedNameIsRemoved() async throws {
    func links(_ path: String) throws -> Int {
        var status = stat()
        try #require(stat(path, &status) == 0)
        return Int(status.st_nlink)
    }
    try await withFileStore { store, root in
        let area = try store.makeStagingArea()
        let contents = (0..<20).map { pseudoRandomBytes(count: 1000 + $0, seed: UInt64($0)) }
        let staged = try contents.map { try area.stage($0) }
        let summary = try await store.publish(staged)
        #expect(summary.newBlobs.count == 20)
        // Published by a hard link: until the staged name goes, both names are the one file.
        #expect(try links(store.path(of: staged[0].digest)) == 2)
        area.removeInBackground(staged)
        area.discard()
        for (blob, bytes) in zip(staged, contents) {
            #expect(try links(store.path(of: blob.digest)) == 1)
            #expect(try await store.read(blob.digest, range: nil) == bytes)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(root)/v1/staging").isEmpty)
    }
}
