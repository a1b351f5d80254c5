import Foundation
import HoardCore
import HoardStore

/// The backends the conformance suite runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case file
    case memory
    /// A local cache in front of a memory store (``CachedBlobStore``): what a replica over S3 runs.
    case cached

    var description: String { rawValue }
}

/// A fresh, empty folder under the system's temporary directory.
func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "hoard-store-test-" + UUID().uuidString.lowercased()
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// One store under test, with the backend-specific ways to age and damage blobs. Removes its folder when released.
final class StoreUnderTest: @unchecked Sendable {
    let kind: StoreKind
    let store: any BlobStore
    /// The root folder of a file store; nil for memory.
    let directory: String?

    init(_ kind: StoreKind) throws {
        self.kind = kind
        switch kind {
        case .file:
            let directory = try makeTemporaryDirectory()
            self.directory = directory
            store = try FileBlobStore(root: directory)
        case .memory:
            directory = nil
            store = MemoryBlobStore()
        case .cached:
            let directory = try makeTemporaryDirectory()
            self.directory = directory
            store = try CachedBlobStore(backing: MemoryBlobStore(), cacheRoot: directory, budget: 32 << 20)
        }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Stages each of `contents` in one staging area, publishes them in one batch and discards the area.
    @discardableResult
    func publish(_ contents: [[UInt8]]) async throws -> (summary: PublishSummary, digests: [Digest]) {
        let area = try store.makeStagingArea()
        defer { area.discard() }
        let staged = try contents.map { try area.stage($0) }
        let summary = try await store.publish(staged)
        return (summary, staged.map(\.digest))
    }

    /// Publishes one blob and returns its digest.
    @discardableResult
    func publish(_ bytes: [UInt8]) async throws -> Digest {
        try await publish([bytes]).digests[0]
    }

    /// Sets a blob's modification time, as if it was last published or touched at `date`.
    func setModified(_ digest: Digest, to date: Date) throws {
        switch store {
        case let file as FileBlobStore:
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: file.path(of: digest))
        case let memory as MemoryBlobStore:
            memory.setModified(digest, to: date)
        case let cached as CachedBlobStore:
            (cached.backing as? MemoryBlobStore)?.setModified(digest, to: date)
        default:
            fatalError("unknown store \(store)")
        }
    }

    /// Replaces a stored blob's bytes behind the store's back, as disk corruption would.
    func corrupt(_ digest: Digest, with bytes: [UInt8]) throws {
        switch store {
        case let file as FileBlobStore:
            let path = file.path(of: digest)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        case let memory as MemoryBlobStore:
            memory.corrupt(digest, with: bytes)
        case let cached as CachedBlobStore:
            (cached.backing as? MemoryBlobStore)?.corrupt(digest, with: bytes)
        default:
            fatalError("unknown store \(store)")
        }
    }
}

/// Deterministic bytes of any length (SplitMix64), so large fixtures need no files.
func pseudoRandomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        for shift in stride(from: 0, to: 64, by: 8) where bytes.count < count {
            bytes.append(UInt8(truncatingIfNeeded: z >> UInt64(shift)))
        }
    }
    return bytes
}

/// `sha256:<hex>` as a digest.
func knownDigest(_ hex: String) -> Digest? { Digest("sha256:" + hex) }
