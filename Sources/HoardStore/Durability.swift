import CHoardSystem
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system calls that make writes survive a crash, batched where the platform allows.
enum Durability {
    /// Flushes every file in `paths` to stable storage. On Linux one `syncfs` covers the whole file system that
    /// holds `directory` (one call for thousands of files); elsewhere each file is synced.
    static func syncFiles(_ paths: [String], onFileSystemOf directory: String) throws {
        #if os(Linux)
        try syncFileSystem(of: directory)
        #else
        for path in paths { try syncPath(path) }
        #endif
    }

    /// Flushes directory entries (renames, creations) in `directories` to stable storage.
    static func syncDirectories(_ directories: [String], onFileSystemOf directory: String) throws {
        #if os(Linux)
        try syncFileSystem(of: directory)
        #else
        for path in directories { try syncPath(path) }
        #endif
    }

    /// `fsync` of one file or directory.
    static func syncPath(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobStoreError(.io, "cannot open \(path) to sync it", cause: String(cString: strerror(errno))) }
        defer { close(fd) }
        #if canImport(Darwin)
        let status = fcntl(fd, F_FULLFSYNC)
        #else
        let status = fsync(fd)
        #endif
        guard status == 0 else {
            throw BlobStoreError(.io, "the disk did not confirm writing \(path); check the device", cause: String(cString: strerror(errno)))
        }
    }

    #if os(Linux)
    private static func syncFileSystem(of directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw BlobStoreError(.io, "cannot open \(directory) to sync it", cause: String(cString: strerror(errno))) }
        defer { close(fd) }
        guard hoard_syncfs(fd) == 0 else {
            throw BlobStoreError(.io, "the disk did not confirm the writes under \(directory); check the device",
                                 cause: String(cString: strerror(errno)))
        }
    }
    #endif
}
