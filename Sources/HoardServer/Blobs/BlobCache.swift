import HoardCore
import NIOConcurrencyHelpers
import NIOCore

/// A bounded in-memory cache of hot blobs. Blobs never change, so entries never need invalidation: only eviction,
/// least recently used first, when the total passes the capacity. An entry may also hold the head of the blob's plain
/// `200` answer (``BlobFastPath`` makes it once per blob) and, for blobs of at least ``minFileSize`` bytes, the
/// open file the bytes were verified from (``VerifiedBlobFile``, for `sendfile`); eviction closes it.
public final class BlobCache: Sendable {
    /// Total bytes kept at most.
    public let capacity: Int
    /// Largest blob kept.
    public let maxEntry: Int
    /// Smallest blob whose open file is kept; nil keeps none.
    let minFileSize: Int?
    private let state = NIOLockedValueBox(State())

    private struct Entry {
        var buffer: ByteBuffer
        var head: Head?
        var file: VerifiedBlobFile?
        var tick: UInt64
    }

    /// The head of a plain `200` answer for a blob, as ``BlobFastPath`` writes it, and the media type it names.
    struct Head {
        var mediaType: String
        var bytes: ByteBuffer
    }

    private struct State {
        var entries: [Digest: Entry] = [:]
        var bytes = 0
        var tick: UInt64 = 0
    }

    /// A cache of `capacity` bytes holding blobs up to `maxEntry` bytes, and the open files of those of
    /// `minFileSize` bytes or more.
    public init(capacity: Int, maxEntry: Int, minFileSize: Int? = nil) {
        self.capacity = capacity
        self.maxEntry = maxEntry
        self.minFileSize = minFileSize
    }

    /// The cached bytes of a blob, or nil.
    public func get(_ digest: Digest) -> ByteBuffer? {
        hot(digest)?.bytes
    }

    /// The cached bytes of a blob, its response head if made and its open file if kept; nil when not cached.
    func hot(_ digest: Digest) -> (bytes: ByteBuffer, head: Head?, file: VerifiedBlobFile?)? {
        state.withLockedValue { state in
            guard let entry = state.entries[digest] else { return nil }
            state.tick &+= 1
            state.entries[digest]?.tick = state.tick
            return (entry.buffer, entry.head, entry.file)
        }
    }

    /// Keeps the response head of a cached blob (nothing when the blob is not cached).
    func keep(_ head: Head, for digest: Digest) {
        state.withLockedValue { state in state.entries[digest]?.head = head }
    }

    /// Keeps a blob's bytes (and the open file they were verified from, which the cache then owns: closed when
    /// not kept, or when evicted), evicting the least recently used tenth when over capacity.
    func put(_ digest: Digest, _ buffer: ByteBuffer, file: VerifiedBlobFile? = nil) {
        var keptFile = false
        var evicted: [VerifiedBlobFile] = []
        if buffer.readableBytes <= maxEntry, capacity > 0 {
            state.withLockedValue { state in
                guard state.entries[digest] == nil else { return }
                keptFile = file != nil && buffer.readableBytes >= minFileSize ?? .max
                state.tick &+= 1
                state.entries[digest] = Entry(buffer: buffer, head: nil, file: keptFile ? file : nil, tick: state.tick)
                state.bytes += buffer.readableBytes
                guard state.bytes > capacity else { return }
                let oldest = state.entries.sorted { $0.value.tick < $1.value.tick }
                for (key, entry) in oldest.prefix(max(1, oldest.count / 10)) {
                    state.entries[key] = nil
                    state.bytes -= entry.buffer.readableBytes
                    if let file = entry.file { evicted.append(file) }
                }
            }
        }
        if !keptFile { file?.close() }
        for file in evicted { file.close() }
    }

    /// Bytes held now.
    public var bytes: Int { state.withLockedValue { $0.bytes } }
}
