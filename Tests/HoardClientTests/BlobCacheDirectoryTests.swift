import Foundation
import HoardCore
import Testing

@testable import HoardClient

@Suite struct BlobCacheDirectoryTests {
    func files(under folder: URL) -> [String] {
        FileManager.default.subpaths(atPath: folder.path)?.filter { !$0.hasSuffix("/") } ?? []
    }

    @Test func aNewCacheHasItsShardsAndReopensWithItsBlobs() async throws {
        try await withCache { cache in
            let shards = try FileManager.default.contentsOfDirectory(atPath: cache.root.appendingPathComponent("sha256").path)
            #expect(Set(shards) == Set((0..<256).map { String(format: "%02x", $0) }))
            let bytes = randomData(100)
            try cache.insert(bytes, as: digest(of: bytes))
            let reopened = try BlobCacheDirectory(root: cache.root)
            #expect(try reopened.read(digest(of: bytes)) == bytes && reopened.digests() == [digest(of: bytes)])
        }
    }

    @Test func overItsBudgetTheCacheForgetsTheLeastRecentlyUsedBlobsNotInUse() async throws {
        try await withCache { unlimited in
            let blobs = (0..<5).map { _ in randomData(3_000) }
            let digests = blobs.map { digest(of: $0) }
            for (bytes, digest) in zip(blobs.prefix(3), digests) { try unlimited.insert(bytes, as: digest) }
            // Last uses, oldest first: 1, 2, 0 (a file's modification time is its last use, so a reopened cache knows).
            for (index, age) in [(1, 30.0), (2, 20.0), (0, 10.0)] {
                var times = [timespec](repeating: timespec(tv_sec: time(nil) - Int(age), tv_nsec: 0), count: 2)
                #expect(utimensat(AT_FDCWD, unlimited.url(for: digests[index]).path, &times, 0) == 0)
            }
            let cache = try BlobCacheDirectory(root: unlimited.root, budget: 10_000)
            #expect(cache.countedBytes == 9_000)
            cache.keep([digests[1]: [digests[1]]], replacing: true)
            try cache.insert(blobs[3], as: digests[3])
            // 12,000 bytes: down to 9,000 (nine tenths of the budget), the oldest first, never the one in use.
            #expect(digests.prefix(4).map(cache.contains) == [true, true, false, true])
            cache.markUsed([digests[0]])
            try cache.insert(blobs[4], as: digests[4])
            #expect(digests.map(cache.contains) == [true, true, false, false, true], "blob 3 is now the least recently used")
            #expect(cache.countedBytes == 9_000)
            // Everything in use: over budget, nothing goes.
            cache.keep(Dictionary(uniqueKeysWithValues: digests.map { ($0, [$0]) }), replacing: true)
            try cache.insert(blobs[2], as: digests[2])
            try cache.insert(blobs[3], as: digests[3])
            #expect(digests.allSatisfy(cache.contains) && cache.countedBytes == 15_000)
            cache.keep([:], replacing: true)
            cache.trim()
            #expect(cache.countedBytes == 9_000 && cache.digests().count == 3)
        }
    }

    @Test func bytesThatDoNotMatchTheirDigestNeverEnterTheCache() async throws {
        try await withCache { cache in
            let claimed = digest(of: Data("the real blob".utf8))
            #expect(throws: HoardClientError.self) { try cache.insert(Data("something else".utf8), as: claimed) }
            do {
                try cache.insert(Data("something else".utf8), as: claimed)
            } catch let error as HoardClientError {
                #expect(error.code == .digestMismatch)
                #expect(error.digests == [claimed])
            }
            #expect(!cache.contains(claimed))
            #expect(!FileManager.default.fileExists(atPath: cache.url(for: claimed).path))
            #expect(files(under: cache.root.appendingPathComponent("tmp")).isEmpty, "no temporary file is left behind")
            #expect(cache.digests().isEmpty)
        }
    }

    @Test func blobsAreShardedByTheFirstTwoHexDigitsOfTheirDigest() async throws {
        try await withCache { cache in
            let bytes = randomData(300)
            let name = digest(of: bytes)
            try cache.insert(bytes, as: name)
            let expected = cache.root.appendingPathComponent("sha256/\(name.hex.prefix(2))/\(name.hex)")
            #expect(cache.url(for: name) == expected)
            #expect(try Data(contentsOf: expected) == bytes)
            #expect(try cache.read(name) == bytes)
            #expect(cache.digests() == [name])
            #expect(files(under: cache.root.appendingPathComponent("tmp")).isEmpty)
        }
    }

    @Test func insertingABlobTwiceKeepsOneCopy() async throws {
        try await withCache { cache in
            let bytes = randomData(100)
            try cache.insert(bytes, as: digest(of: bytes))
            try cache.insert(bytes, as: digest(of: bytes))
            #expect(cache.digests().count == 1)
        }
    }

    /// Writers race to insert the same large blob while readers watch its final path: whenever the file exists,
    /// it holds every byte, because it only ever appears there by rename.
    @Test func aBlobAppearsWholeOrNotAtAll() async throws {
        try await withCache { cache in
            let bytes = randomData(4 << 20)
            let name = digest(of: bytes)
            let path = cache.url(for: name).path
            let torn = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try cache.insert(bytes, as: name); return 0 } }
                group.addTask {
                    var torn = 0
                    var seen = 0
                    let deadline = Date().addingTimeInterval(10)
                    while seen < 50, Date() < deadline {
                        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber {
                            seen += 1
                            if size.intValue != bytes.count { torn += 1 }
                        }
                        await Task.yield()
                    }
                    return torn
                }
                return try await group.reduce(0, +)
            }
            #expect(torn == 0)
            #expect(try cache.read(name) == bytes)
            #expect(files(under: cache.root.appendingPathComponent("tmp")).isEmpty)
        }
    }

    @Test func aPartialDownloadThatHashesWrongIsDeletedNotCached() async throws {
        try await withCache { cache in
            let name = digest(of: Data("expected".utf8))
            try Data("unexpected".utf8).write(to: cache.partialURL(for: name))
            #expect(throws: HoardClientError.self) { try cache.insertFile(at: cache.partialURL(for: name), as: name) }
            #expect(!cache.contains(name))
            #expect(cache.partialSize(of: name) == 0)
        }
    }

    @Test func verifyRemovesBlobsWhoseBytesChangedOnDisk() async throws {
        try await withCache { cache in
            let good = randomData(50)
            let bad = randomData(50)
            try cache.insert(good, as: digest(of: good))
            try cache.insert(bad, as: digest(of: bad))
            try Data("tampered".utf8).write(to: cache.url(for: digest(of: bad)))
            #expect(try cache.verify() == [digest(of: bad)])
            #expect(cache.contains(digest(of: good)))
            #expect(!cache.contains(digest(of: bad)))
        }
    }

    @Test func aBlobFolderFindsFilesByHexByDigestAndInCacheLayout() async throws {
        try await withCache { cache in
            let folder = cache.root.appendingPathComponent("folder")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let a = randomData(10), b = randomData(10), c = randomData(10)
            try a.write(to: folder.appendingPathComponent(digest(of: a).hex))
            try b.write(to: folder.appendingPathComponent(digest(of: b).description))
            try cache.insert(c, as: digest(of: c))
            let source = BlobFolder(directory: folder)
            #expect(source.file(for: digest(of: a)) != nil)
            #expect(source.file(for: digest(of: b)) != nil)
            #expect(BlobFolder(directory: cache.root).file(for: digest(of: c)) == cache.url(for: digest(of: c)))
            #expect(source.file(for: digest(of: c)) == nil)
        }
    }
}
