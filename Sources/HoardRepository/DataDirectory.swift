import Foundation
import HoardCore
import HoardStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The on-disk home of one Hoard: the catalog, the blob store and the lock between imports and garbage collection.
///
///     DATA/
///       catalog.sqlite          the catalog (SQLite, WAL mode: also -wal and -shm)
///       gc.lock                 flock: imports hold it shared, garbage collection exclusive
///       blobs/                  the FileBlobStore root (layout in FileBlobStore)
public struct DataDirectory: Sendable {
    /// The folder.
    public let path: String

    /// Uses (creating if needed) a folder as a data directory.
    public init(path: String) throws(ImportError) {
        self.path = path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw ImportError(
                archive: path, problems: [.init(.storageFailure, "cannot create the data directory \(path); check permissions")],
                cause: "\(error)")
        }
    }

    /// The catalog file.
    public var catalogPath: String { path + "/catalog.sqlite" }
    /// The blob store root.
    public var blobsPath: String { path + "/blobs" }
    /// The lock file.
    public var lockPath: String { path + "/gc.lock" }
    /// Where `hoard serve` spools pack uploads (`<uuid>.upload`) before importing them.
    public var uploadsPath: String { path + "/uploads" }

    /// Removes spooled uploads older than `age` that no process holds (left behind when a server was killed
    /// mid-upload; a running upload keeps its file `flock`ed); returns how many.
    public func removeStaleUploads(olderThan age: TimeInterval) -> Int {
        let fm = FileManager.default
        let cutoff = Date().addingTimeInterval(-age)
        var removed = 0
        for name in (try? fm.contentsOfDirectory(atPath: uploadsPath)) ?? [] where name.hasSuffix(".upload") {
            let file = uploadsPath + "/" + name
            guard let modified = try? fm.attributesOfItem(atPath: file)[.modificationDate] as? Date, modified < cutoff else { continue }
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if flock(fd, LOCK_EX | LOCK_NB) == 0, unlink(file) == 0 { removed += 1 }
        }
        return removed
    }

    /// Runs `body` holding the data directory's lock: shared for imports, exclusive for garbage collection.
    /// Waits (without blocking a thread) until the lock is free.
    public func withLock<T>(exclusive: Bool, _ body: () async throws -> T) async throws -> T {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw ProblemMessage("cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        // Poll rather than block: a blocked flock would hold one of the few cooperative threads that the
        // lock's current holder may need to finish.
        while flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw ProblemMessage("cannot lock \(lockPath): \(String(cString: strerror(errno)))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        defer { flock(fd, LOCK_UN) }
        return try await body()
    }
}
