import Foundation
import HoardCore
import HoardStore
import Hummingbird
import Logging
import NIOCore
import NIOPosix

/// Reads blob bytes for responses: small blobs whole (verified against their digest, then cached), large ones
/// streamed from disk in chunks.
struct BlobReader: Sendable {
    let store: any BlobStore
    let cache: BlobCache
    let metrics: ServerMetrics
    let fileIO = FileIO(threadPool: .singleton)

    /// The response body for a blob (all of it, or `range`).
    func body(_ digest: Digest, size: Int64, range: ClosedRange<Int64>?, context: HoardRequestContext) async throws -> ResponseBody {
        if size <= Int64(cache.maxEntry) {
            return .init(byteBuffer: slice(try await buffer(digest, size: size, logger: context.logger), range))
        }
        metrics.cacheMisses.increment()
        guard let fileStore = store as? FileBlobStore else {
            let bytes = try await store.read(digest, range: range.map { $0.lowerBound..<($0.upperBound + 1) }) ?? []
            return .init(byteBuffer: ByteBuffer(bytes: bytes))
        }
        let whole = 0...(size - 1)
        let wanted = range ?? whole
        return try await fileIO.loadFile(
            path: fileStore.path(of: digest), range: Int(wanted.lowerBound)...Int(wanted.upperBound), context: context,
            chunkLength: 256 << 10)
    }

    /// A whole small blob, from the cache or from disk (verified, then cached).
    func buffer(_ digest: Digest, size: Int64, logger: Logger) async throws -> ByteBuffer {
        if let cached = cache.get(digest) {
            metrics.cacheHits.increment()
            return cached
        }
        metrics.cacheMisses.increment()
        let buffer = try await load(digest, size: size, logger: logger)
        cache.put(digest, buffer)
        return buffer
    }

    private func slice(_ buffer: ByteBuffer, _ range: ClosedRange<Int64>?) -> ByteBuffer {
        guard let range else { return buffer }
        return buffer.getSlice(at: buffer.readerIndex + Int(range.lowerBound), length: Int(range.count)) ?? ByteBuffer()
    }

    /// Reads a whole blob and checks it hashes to its name: corrupt bytes are never served.
    func load(_ digest: Digest, size: Int64, logger: Logger) async throws -> ByteBuffer {
        let buffer: ByteBuffer
        if let fileStore = store as? FileBlobStore {
            let path = fileStore.path(of: digest)
            buffer = try await NIOThreadPool.singleton.runIfActive { try Self.readFile(path, size: Int(size)) }
        } else {
            guard let bytes = try await store.read(digest, range: nil) else { throw APIError.notFound("no blob \(digest)") }
            buffer = ByteBuffer(bytes: bytes)
        }
        var hasher = BlobHasher()
        buffer.withUnsafeReadableBytes { hasher.update($0) }
        guard hasher.finalize() == digest, buffer.readableBytes == size else {
            logger.critical("stored blob does not match its digest; run `hoard verify`", metadata: ["digest": "\(digest)"])
            throw APIError("CORRUPT_BLOB", .internalServerError, "the stored copy of \(digest) is damaged; an admin must run hoard verify")
        }
        return buffer
    }

    private static func readFile(_ path: String, size: Int) throws -> ByteBuffer {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw APIError.notFound("the blob's file is missing") }
        defer { close(fd) }
        var buffer = ByteBufferAllocator().buffer(capacity: size)
        var failed = false
        while buffer.readableBytes < size, !failed {
            let got = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size - buffer.readableBytes) { pointer in
                let n = read(fd, pointer.baseAddress, pointer.count)
                if n <= 0 { failed = true }
                return max(n, 0)
            }
            if got == 0 { break }
        }
        return buffer
    }
}
