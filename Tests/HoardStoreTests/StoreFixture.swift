import BlobStoreConformance
import Foundation
import HoardCore
import HoardStore
import Testing

/// The backends of this target that the conformance suite runs against (HoardS3Tests runs it against S3).
enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case file
    case memory
    /// A local cache in front of a memory store (``CachedBlobStore``): what a replica over S3 runs.
    case cached

    var description: String { rawValue }
}

@Test(arguments: StoreKind.allCases, BlobStoreConformance.checks)
func everyLocalBackendKeepsTheBlobStoreContract(_ kind: StoreKind, _ check: BlobStoreCheck) async throws {
    try await check.run(on: makeStoreUnderTest(kind))
}

/// A fresh, empty folder under the system's temporary directory.
func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "hoard-store-test-" + UUID().uuidString.lowercased()
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// An empty store of `kind` with its ways to age and damage blobs; a file store's folder goes with it.
func makeStoreUnderTest(_ kind: StoreKind) throws -> StoreUnderTest {
    switch kind {
    case .file:
        let directory = try makeTemporaryDirectory()
        let file = try FileBlobStore(root: directory)
        return StoreUnderTest(
            store: file,
            setModified: { digest, date in
                try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: file.path(of: digest))
            },
            corrupt: { digest, bytes in
                let path = file.path(of: digest)
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
            },
            cleanup: { try? FileManager.default.removeItem(atPath: directory) })
    case .memory:
        let memory = MemoryBlobStore()
        return StoreUnderTest(
            store: memory,
            setModified: { digest, date in memory.setModified(digest, to: date) },
            corrupt: { digest, bytes in memory.corrupt(digest, with: bytes) })
    case .cached:
        let directory = try makeTemporaryDirectory()
        let backing = MemoryBlobStore()
        return StoreUnderTest(
            store: try CachedBlobStore(backing: backing, cacheRoot: directory, budget: 32 << 20),
            setModified: { digest, date in backing.setModified(digest, to: date) },
            corrupt: { digest, bytes in backing.corrupt(digest, with: bytes) },
            cleanup: { try? FileManager.default.removeItem(atPath: directory) })
    }
}
