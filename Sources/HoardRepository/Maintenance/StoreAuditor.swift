import Foundation
import HoardCatalog
import HoardCore
import HoardStore

/// What `hoard verify` found.
public struct VerifyReport: Sendable, Codable, Hashable {
    /// Blobs re-hashed.
    public var blobsChecked = 0
    /// Bytes re-hashed.
    public var bytesChecked: Int64 = 0
    /// Catalog blobs whose bytes are gone.
    public var missing: [Digest] = []
    /// Blobs whose bytes do not hash to their name.
    public var corrupt: [Digest] = []
    /// Blobs whose size differs from the catalog's.
    public var wrongSize: [Digest] = []
    /// Blobs whose files exist but cannot be read (permissions, I/O errors).
    public var unreadable: [Digest] = []
    /// Digests catalog rows point at without a blob row.
    public var dangling: [Digest] = []
    /// Blobs stored but not in the catalog (left by an interrupted import; `hoard gc` removes them).
    public var unreferenced = 0

    /// Whether the store is consistent (unreferenced blobs are harmless).
    public var isHealthy: Bool { missing.isEmpty && corrupt.isEmpty && wrongSize.isEmpty && unreadable.isEmpty && dangling.isEmpty }
}

/// What `hoard gc` did.
public struct GarbageReport: Sendable, Codable, Hashable {
    /// Blobs deleted.
    public var deletedBlobs = 0
    /// Bytes freed.
    public var deletedBytes: Int64 = 0
    /// Unreferenced blobs kept because they are younger than the grace period.
    public var keptYoung = 0
    /// Abandoned staging folders removed.
    public var staleStagingAreas = 0
    /// Abandoned pack-upload spool files removed (`DATA/uploads/`, left by a server killed mid-upload).
    public var staleUploads = 0
}

/// Verification and garbage collection over a store and its catalog.
struct StoreAuditor {
    let store: any BlobStore
    let catalog: Catalog

    func verify(progress: (@Sendable (Int, Int) -> Void)?) async throws -> VerifyReport {
        var report = VerifyReport()
        let rows = try catalog.blobs()
        for (index, row) in rows.enumerated() {
            progress?(index, rows.count)
            let rehashed: (digest: Digest, size: Int64)?
            do {
                rehashed = try await store.rehash(row.digest)
            } catch {
                report.unreadable.append(row.digest)
                continue
            }
            guard let actual = rehashed else {
                report.missing.append(row.digest)
                continue
            }
            report.blobsChecked += 1
            report.bytesChecked += actual.size
            if actual.digest != row.digest {
                report.corrupt.append(row.digest)
            } else if actual.size != row.size {
                report.wrongSize.append(row.digest)
            }
        }
        progress?(rows.count, rows.count)
        report.dangling = try catalog.danglingReferences()
        let known = Set(rows.map(\.digest))
        report.unreferenced = try await store.allDigests().filter { !known.contains($0) }.count
        return report
    }

    /// Catalog rows first, then bytes: the reverse of the import's order, so a crash never leaves a row without bytes.
    func collectGarbage(grace: TimeInterval) async throws -> GarbageReport {
        var report = GarbageReport()
        for digest in try catalog.collectGarbage() {
            if let info = try await store.info(digest) {
                report.deletedBytes += info.size
                report.deletedBlobs += 1
            }
            try await store.delete(digest)
        }
        let known = Set(try catalog.blobs().map(\.digest))
        let cutoff = Date().addingTimeInterval(-grace)
        for digest in try await store.allDigests() where !known.contains(digest) {
            guard let info = try await store.info(digest) else { continue }
            if info.modified < cutoff {
                try await store.delete(digest)
                report.deletedBlobs += 1
                report.deletedBytes += info.size
            } else {
                report.keptYoung += 1
            }
        }
        report.staleStagingAreas = try await store.removeStaleStaging(olderThan: grace)
        return report
    }
}
