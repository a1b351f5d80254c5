import CHoardSystem
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system calls that make writes survive a crash, batched where the platform allows.
enum Durability {
    /// Flushes every file in `paths` to stable storage. On Linux, for more than ``fewPaths`` files, one `syncfs`
    /// covers the whole file system that holds `directory` (one call for thousands of files); otherwise each file is
    /// synced.
    static func syncFiles(_ paths: [String], onFileSystemOf directory: String) throws {
        try sync(paths, onFileSystemOf: directory)
    }

    /// Flushes directory entries (renames, creations) in `directories` to stable storage, as ``syncFiles(_:onFileSystemOf:)``.
    static func syncDirectories(_ directories: [String], onFileSystemOf directory: String) throws {
        try sync(directories, onFileSystemOf: directory)
    }

    /// Up to this many paths are synced one by one even on Linux: `syncfs` also writes every other process's dirty
    /// data on the file system, so one `PUT /v1/blobs` waited for a build's object files (measured while one ran: a
    /// 4 KiB blob published with `syncfs` p50 4.7 ms, max 204 ms; with `fsync` of the file and its folder 3.5 / 16 ms).
    static let fewPaths = 8

    private static func sync(_ paths: [String], onFileSystemOf directory: String) throws {
        #if os(Linux)
        if paths.count > fewPaths { return try syncFileSystem(of: directory) }
        #endif
        for path in paths { try syncPath(path) }
    }

    /// Starts writing a finished file's bytes to the disk without waiting for them, so the publish's sync finds little
    /// left to do. Starting a write-out makes the caller allocate blocks and submit the I/O, so a background queue does
    /// it on a `dup` of `fd` (the caller may close its own at once) while the caller goes on with the next file. At
    /// most 64 wait there, each holding a descriptor; past that the caller starts its own.
    ///
    /// Every ``flushEvery`` bytes started, the disk is also asked to empty its volatile cache (one `fdatasync`, on a
    /// queue of its own, never two at once): a disk that acknowledges writes into a cache (most SSDs, virtual disks)
    /// otherwise writes all of an import's bytes during the publish's one sync. These early flushes only move work
    /// earlier; the publish still syncs everything before any blob becomes visible.
    static func startWriteOut(_ fd: Int32, bytes: Int64) {
        var copy: Int32 = -1
        if WriteOut.slots.wait(timeout: .now()) == .success {
            copy = dup(fd)
            if copy < 0 { WriteOut.slots.signal() }
        }
        guard copy >= 0 else {
            hoard_start_writeback(fd)
            return
        }
        let descriptor = copy
        WriteOut.queue.async {
            hoard_start_writeback(descriptor)
            WriteOut.started(descriptor, bytes: bytes)
            close(descriptor)
            WriteOut.slots.signal()
        }
    }

    /// How many bytes of started write-outs call for an early flush of the disk's cache (measured on the import
    /// benchmark: 64 MiB left 0.11 s for the publish's sync, 16 MiB 0.05 s, none 0.5–0.7 s).
    static let flushEvery: Int64 = 16 << 20

    /// How many early flushes have finished in this process.
    static var earlyFlushes: Int { WriteOut.queue.sync { WriteOut.flushes } }

    /// State of ``startWriteOut(_:bytes:)``: touched only on `queue`.
    private enum WriteOut {
        static let queue = DispatchQueue(label: "hoard.write-out")
        static let slots = DispatchSemaphore(value: 64)
        static let flusher = DispatchQueue(label: "hoard.flush")
        nonisolated(unsafe) static var unflushed: Int64 = 0
        nonisolated(unsafe) static var isFlushing = false
        nonisolated(unsafe) static var flushes = 0

        static func started(_ descriptor: Int32, bytes: Int64) {
            #if os(Linux)
            unflushed += bytes
            guard unflushed >= flushEvery, !isFlushing else { return }
            let flushed = dup(descriptor)
            guard flushed >= 0 else { return }
            unflushed = 0
            isFlushing = true
            flusher.async {
                _ = fdatasync(flushed)
                close(flushed)
                queue.async {
                    isFlushing = false
                    flushes += 1
                }
            }
            #endif
        }
    }

    /// Starts syncing the file system that holds `directory` on a thread of its own and returns at once (Linux; elsewhere
    /// nothing). Only a head start: whoever needs durability still syncs, and then finds less to wait for.
    static func startSyncing(fileSystemOf directory: String) {
        #if os(Linux)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        Thread {
            _ = hoard_syncfs(fd)
            close(fd)
        }.start()
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
