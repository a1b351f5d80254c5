import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// An open descriptor of a blob file whose bytes were read and hashed through it, kept so ``BlobFastPath`` can
/// send large hot blobs with `sendfile` (the kernel sends from the page cache; the bytes are not copied through
/// Hoard).
///
/// Every use takes its own duplicate of the descriptor (NIO's file handles allow one user at a time), and only
/// while the file is unchanged since it was verified: the same device, inode, size, modification and change
/// times. A file written, truncated, renamed over or re-permissioned since is never sent this way again; the
/// caller then serves the verified bytes it holds in memory.
final class VerifiedBlobFile: Sendable {
    private struct Identity: Equatable {
        var device: UInt64, inode: UInt64, size: Int64
        var modified: Int, modifiedNanos: Int, changed: Int, changedNanos: Int

        init?(_ descriptor: CInt) {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            #if canImport(Darwin)
            modified = info.st_mtimespec.tv_sec
            modifiedNanos = info.st_mtimespec.tv_nsec
            changed = info.st_ctimespec.tv_sec
            changedNanos = info.st_ctimespec.tv_nsec
            #else
            modified = info.st_mtim.tv_sec
            modifiedNanos = info.st_mtim.tv_nsec
            changed = info.st_ctim.tv_sec
            changedNanos = info.st_ctim.tv_nsec
            #endif
        }
    }

    private let identity: Identity
    /// The descriptor; -1 once closed.
    private let descriptor: NIOLockedValueBox<CInt>

    /// Takes ownership of `descriptor`, whose file was just read whole and verified; nil (and the descriptor
    /// closed) when the system will not describe it.
    init?(verified descriptor: CInt) {
        guard let identity = Identity(descriptor) else {
            Foundation.close(descriptor)
            return nil
        }
        self.identity = identity
        self.descriptor = NIOLockedValueBox(descriptor)
    }

    /// The blob's bytes `range` as a region to write, with a descriptor of its own that the writer closes; nil
    /// when this file is closed or changed since it was verified.
    func region(_ range: ClosedRange<Int64>) -> FileRegion? {
        let copy = descriptor.withLockedValue { $0 >= 0 ? dup($0) : -1 }
        guard copy >= 0 else { return nil }
        guard Identity(copy) == identity else {
            Foundation.close(copy)
            close()
            return nil
        }
        return FileRegion(
            fileHandle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: copy),
            readerIndex: Int(range.lowerBound), endIndex: Int(range.upperBound) + 1)
    }

    /// Closes the descriptor (regions already handed out keep their own).
    func close() {
        descriptor.withLockedValue { descriptor in
            if descriptor >= 0 { Foundation.close(descriptor) }
            descriptor = -1
        }
    }

    deinit { close() }
}
