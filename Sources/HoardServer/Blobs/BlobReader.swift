import Foundation
import HoardCore
import HoardRepository
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Reads blob bytes for responses: small blobs whole (verified against their digest, then cached), large ones
/// streamed from disk in chunks once their file has been verified whole (once per process). Corrupt bytes are
/// never served: they answer `CORRUPT_BLOB`; a file that cannot be read answers `UNREADABLE_BLOB`.
struct BlobReader: Sendable {
    let hoard: Hoard
    let cache: BlobCache
    let metrics: ServerMetrics
    let fileIO = FileIO(threadPool: .singleton)
    /// Large blobs whose files hashed to their digest since this process started.
    let verifiedLarge = NIOLockedValueBox(Set<Digest>())

    /// The response body for a blob (all of it, or `range`).
    func body(_ digest: Digest, size: Int64, range: ClosedRange<Int64>?, context: HoardRequestContext) async throws -> ResponseBody {
        if size <= Int64(cache.maxEntry) {
            return .init(byteBuffer: slice(try await buffer(digest, size: size, logger: context.logger), range))
        }
        metrics.cacheMisses.increment()
        guard let path = hoard.localPath(of: digest) else {
            let bytes = try await hoard.read(digest, range: range.map { $0.lowerBound..<($0.upperBound + 1) }) ?? []
            return .init(byteBuffer: ByteBuffer(bytes: bytes))
        }
        if !verifiedLarge.withLockedValue({ $0.contains(digest) }) {
            let actual = try await NIOThreadPool.singleton.runIfActive { () throws -> (digest: Digest, size: Int64)? in
                do {
                    return try Hoard.hashFile(atPath: path, label: "the stored copy of \(digest)")
                } catch {
                    throw Self.unreadable(digest, error, logger: context.logger)
                }
            }
            guard let actual else { throw APIError.notFound("the blob's file is missing") }
            try Self.check(actual.digest, actual.size, against: digest, size: size, logger: context.logger)
            verifiedLarge.withLockedValue { _ = $0.insert(digest) }
        }
        let whole = 0...(size - 1)
        let wanted = range ?? whole
        return try await fileIO.loadFile(
            path: path, range: Int(wanted.lowerBound)...Int(wanted.upperBound), context: context,
            chunkLength: 256 << 10)
    }

    /// A whole small blob, from the cache or from disk (verified, then cached).
    func buffer(_ digest: Digest, size: Int64, logger: Logger) async throws -> ByteBuffer {
        try await buffers([(digest, size)], logger: logger)[0]
    }

    /// Whole small blobs, in order, from the cache or from disk (verified, then cached). The ones not cached are read
    /// and checked in one job on the blocking-I/O pool rather than one hop per blob: a batch request of 125 small
    /// blobs on a cold cache spent most of its time on the hops.
    func buffers(_ wanted: [(digest: Digest, size: Int64)], logger: Logger) async throws -> [ByteBuffer] {
        var found = wanted.map { cache.get($0.digest) }
        let missing = found.indices.filter { found[$0] == nil }
        metrics.cacheHits.increment(by: Int64(wanted.count - missing.count))
        guard !missing.isEmpty else { return found.map { $0! } }
        metrics.cacheMisses.increment(by: Int64(missing.count))
        let loaded = try await load(missing.map { (wanted[$0].digest, wanted[$0].size, wanted[$0].size >= cache.minFileSize ?? .max) }, logger: logger)
        for (index, (buffer, file)) in zip(missing, loaded) {
            cache.put(wanted[index].digest, buffer, file: file)
            found[index] = buffer
        }
        return found.map { $0! }
    }

    private func slice(_ buffer: ByteBuffer, _ range: ClosedRange<Int64>?) -> ByteBuffer {
        guard let range else { return buffer }
        return buffer.getSlice(at: buffer.readerIndex + Int(range.lowerBound), length: Int(range.count)) ?? ByteBuffer()
    }

    /// Reads a whole blob and checks it hashes to its name: corrupt bytes are never served. From a file store, and
    /// when `keepingFile`, also the file it was read from, still open, for ``BlobFastPath`` to send.
    func load(_ digest: Digest, size: Int64, logger: Logger, keepingFile: Bool = false) async throws -> (ByteBuffer, VerifiedBlobFile?) {
        try await load([(digest, size, keepingFile)], logger: logger)[0]
    }

    /// ``load(_:size:logger:keepingFile:)`` of several blobs; from a file store in one job on the blocking-I/O pool.
    private func load(_ items: [(digest: Digest, size: Int64, keepingFile: Bool)], logger: Logger) async throws -> [(ByteBuffer, VerifiedBlobFile?)] {
        let paths = items.compactMap { hoard.localPath(of: $0.digest) }
        guard paths.count == items.count else {
            var loaded: [(ByteBuffer, VerifiedBlobFile?)] = []
            for item in items {
                guard let bytes = try await hoard.read(item.digest) else { throw APIError.notFound("no blob \(item.digest)") }
                let buffer = ByteBuffer(bytes: bytes)
                try Self.verify(buffer, item.digest, size: item.size, logger: logger)
                loaded.append((buffer, nil))
            }
            return loaded
        }
        let files = zip(paths, items).map { (path: $0, item: $1) }
        let loaded = try await NIOThreadPool.singleton.runIfActive {
            var loaded: [(ByteBuffer, CInt)] = []
            do {
                for (path, item) in files {
                    let (buffer, descriptor) = try Self.readFile(
                        path, digest: item.digest, size: Int(item.size), keepingOpen: item.keepingFile, logger: logger)
                    loaded.append((buffer, descriptor))
                    try Self.verify(buffer, item.digest, size: item.size, logger: logger)
                }
            } catch {
                for (_, descriptor) in loaded where descriptor >= 0 { close(descriptor) }
                throw error
            }
            return loaded
        }
        return loaded.map { buffer, descriptor in (buffer, descriptor >= 0 ? VerifiedBlobFile(verified: descriptor) : nil) }
    }

    /// Throws unless `buffer` hashes to `digest` and has `size` bytes.
    private static func verify(_ buffer: ByteBuffer, _ digest: Digest, size: Int64, logger: Logger) throws {
        var hasher = BlobHasher()
        buffer.withUnsafeReadableBytes { hasher.update($0) }
        try check(hasher.finalize(), Int64(buffer.readableBytes), against: digest, size: size, logger: logger)
    }

    /// Refuses bytes that do not hash to their name (or have another size): they are never served.
    private static func check(_ actual: Digest, _ actualSize: Int64, against digest: Digest, size: Int64, logger: Logger) throws {
        guard actual == digest, actualSize == size else {
            logger.critical("stored blob does not match its digest; run `hoard verify`", metadata: ["digest": "\(digest)"])
            throw APIError("CORRUPT_BLOB", .internalServerError, "the stored copy of \(digest) is damaged; an admin must run hoard verify")
        }
    }

    /// A blob file the operating system will not read (permissions, I/O error): logged, and a clear 500.
    private static func unreadable(_ digest: Digest, _ cause: any Error, logger: Logger) -> APIError {
        logger.critical("stored blob cannot be read; check the data directory", metadata: ["digest": "\(digest)", "error": "\(cause)"])
        return APIError(
            "UNREADABLE_BLOB", .internalServerError,
            "the stored copy of \(digest) cannot be read; an admin must check the data directory's permissions and disk, then run hoard verify")
    }

    /// The file's bytes, and when `keepingOpen` its descriptor, still open (the caller closes it); else -1.
    private static func readFile(
        _ path: String, digest: Digest, size: Int, keepingOpen: Bool, logger: Logger
    ) throws -> (ByteBuffer, CInt) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw APIError.notFound("the blob's file is missing") }
            throw unreadable(digest, POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO), logger: logger)
        }
        var isKept = false
        defer { if !isKept { close(fd) } }
        var buffer = ByteBufferAllocator().buffer(capacity: size)
        var readError: Int32 = 0
        while buffer.readableBytes < size, readError == 0 {
            let got = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size - buffer.readableBytes) { pointer in
                let n = read(fd, pointer.baseAddress, pointer.count)
                if n < 0, errno != EINTR { readError = errno }
                return max(n, 0)
            }
            if got == 0, readError == 0 { break }
        }
        if readError != 0 { throw unreadable(digest, POSIXError(POSIXErrorCode(rawValue: readError) ?? .EIO), logger: logger) }
        isKept = keepingOpen
        return (buffer, keepingOpen ? fd : -1)
    }
}
