import Foundation
import HoardCatalog
import HoardCore
import HoardStore

/// What a backup or a restore copied.
public struct BackupReport: Sendable, Codable, Hashable {
    /// Blobs copied.
    public var blobs = 0
    /// Bytes copied.
    public var bytes: Int64 = 0
    /// Where the copy is.
    public var path = ""
}

extension Hoard {
    /// Writes a consistent snapshot of this Hoard to `destination` (a new folder), while it keeps serving:
    /// the catalog first (SQLite online backup), then every blob that snapshot references (hard-linked when on the
    /// same file system, else copied; read from a store without local files), all under the shared lock so garbage
    /// collection cannot remove one in between.
    /// The result is a data directory that `hoard verify` accepts and `hoard serve` can run.
    public func backup(to destination: String) async throws -> BackupReport {
        let fm = FileManager.default
        guard !fm.fileExists(atPath: destination) else {
            throw ProblemMessage("\(destination) already exists; back up into a new folder")
        }
        return try await directory.withLock(exclusive: false) {
            try fm.createDirectory(atPath: destination, withIntermediateDirectories: true)
            try catalog.backup(to: destination + "/catalog.sqlite")
            let copy = try SQLiteCatalog(path: destination + "/catalog.sqlite")
            let target = try FileBlobStore(root: destination + "/blobs")
            var report = BackupReport(path: destination)
            for blob in try copy.blobs() {
                if let path = store.localPath(of: blob.digest) {
                    try Self.copyFile(path, to: target.path(of: blob.digest))
                } else {
                    // A store without local files: the bytes are read and written through the target's staging.
                    guard let bytes = try await store.read(blob.digest, range: nil) else {
                        throw ProblemMessage("the blob \(blob.digest) is missing from the store; run hoard verify")
                    }
                    let area = try target.makeStagingArea()
                    defer { area.discard() }
                    _ = try target.publishBlocking([try area.stage(bytes)])
                }
                report.blobs += 1
                report.bytes += blob.size
            }
            return report
        }
    }

    /// Restores a backup into an empty or new data directory, then checks every blob against its digest.
    public static func restore(from backup: String, into destination: String) async throws -> BackupReport {
        let fm = FileManager.default
        if let contents = try? fm.contentsOfDirectory(atPath: destination), !contents.isEmpty {
            throw ProblemMessage("\(destination) is not empty; restore into a new or empty folder")
        }
        guard fm.fileExists(atPath: backup + "/catalog.sqlite") else {
            throw ProblemMessage("\(backup) holds no catalog.sqlite; is it a Hoard backup?")
        }
        try fm.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try SQLiteCatalog(path: backup + "/catalog.sqlite").backup(to: destination + "/catalog.restoring")
        let source = try FileBlobStore(root: backup + "/blobs")
        let target = try FileBlobStore(root: destination + "/blobs")
        var report = BackupReport(path: destination)
        for blob in try SQLiteCatalog(path: destination + "/catalog.restoring").blobs() {
            try copyFile(source.path(of: blob.digest), to: target.path(of: blob.digest))
            report.blobs += 1
            report.bytes += blob.size
        }
        // The catalog goes in last, so an interrupted restore leaves blobs without rows (harmless), never rows without blobs.
        try fm.moveItem(atPath: destination + "/catalog.restoring", toPath: destination + "/catalog.sqlite")
        return report
    }

    /// Hard-links a blob file into place (same file system), or copies it; an existing target is kept.
    static func copyFile(_ source: String, to target: String) throws {
        let fm = FileManager.default
        if fm.fileExists(atPath: target) { return }
        try fm.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if link(source, target) != 0 {
            guard fm.fileExists(atPath: source) else { throw ProblemMessage("the blob file \(source) is missing; run hoard verify") }
            try fm.copyItem(atPath: source, toPath: target)
        }
    }
}
