import Foundation
import HoardCore
import HoardStore

/// One store under test, with its backend's ways to age and damage blobs behind the store's back. Runs `cleanup`
/// when released.
public final class StoreUnderTest: @unchecked Sendable {
    /// The store.
    public let store: any BlobStore
    private let ageBlob: @Sendable (Digest, Date) async throws -> Void
    private let damageBlob: @Sendable (Digest, [UInt8]) async throws -> Void
    private let cleanup: @Sendable () -> Void

    /// A subject: `setModified` makes a blob look last published or touched at a date, `corrupt` replaces its bytes
    /// without the store checking them.
    public init(store: any BlobStore, setModified: @escaping @Sendable (Digest, Date) async throws -> Void,
                corrupt: @escaping @Sendable (Digest, [UInt8]) async throws -> Void, cleanup: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.ageBlob = setModified
        self.damageBlob = corrupt
        self.cleanup = cleanup
    }

    deinit { cleanup() }

    /// Stages each of `contents` in one staging area, publishes them in one batch and discards the area.
    @discardableResult
    public func publish(_ contents: [[UInt8]]) async throws -> (summary: PublishSummary, digests: [Digest]) {
        let area = try store.makeStagingArea()
        defer { area.discard() }
        let staged = try contents.map { try area.stage($0) }
        let summary = try await store.publish(staged)
        return (summary, staged.map(\.digest))
    }

    /// Publishes one blob and returns its digest.
    @discardableResult
    public func publish(_ bytes: [UInt8]) async throws -> Digest {
        try await publish([bytes]).digests[0]
    }

    /// Sets a blob's modification time, as if it was last published or touched at `date`.
    public func setModified(_ digest: Digest, to date: Date) async throws { try await ageBlob(digest, date) }

    /// Replaces a stored blob's bytes behind the store's back, as disk corruption would.
    public func corrupt(_ digest: Digest, with bytes: [UInt8]) async throws { try await damageBlob(digest, bytes) }
}

/// Deterministic bytes of any length (SplitMix64), so large fixtures need no files.
public func pseudoRandomBytes(count: Int, seed: UInt64) -> [UInt8] {
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
public func knownDigest(_ hex: String) -> Digest? { Digest("sha256:" + hex) }
