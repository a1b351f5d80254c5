import HoardCore
import NIOConcurrencyHelpers
import NIOCore

/// A bounded in-memory cache of hot blobs. Blobs never change, so entries never need invalidation: only eviction,
/// least recently used first, when the total passes the capacity.
public final class BlobCache: Sendable {
    /// Total bytes kept at most.
    public let capacity: Int
    /// Largest blob kept.
    public let maxEntry: Int
    private let state = NIOLockedValueBox(State())

    private struct Entry {
        var buffer: ByteBuffer
        var tick: UInt64
    }

    private struct State {
        var entries: [Digest: Entry] = [:]
        var bytes = 0
        var tick: UInt64 = 0
    }

    /// A cache of `capacity` bytes holding blobs up to `maxEntry` bytes.
    public init(capacity: Int, maxEntry: Int) {
        self.capacity = capacity
        self.maxEntry = maxEntry
    }

    /// The cached bytes of a blob, or nil.
    public func get(_ digest: Digest) -> ByteBuffer? {
        state.withLockedValue { state in
            guard let entry = state.entries[digest] else { return nil }
            state.tick &+= 1
            state.entries[digest]?.tick = state.tick
            return entry.buffer
        }
    }

    /// Keeps a blob's bytes, evicting the least recently used tenth when over capacity.
    public func put(_ digest: Digest, _ buffer: ByteBuffer) {
        guard buffer.readableBytes <= maxEntry, capacity > 0 else { return }
        state.withLockedValue { state in
            guard state.entries[digest] == nil else { return }
            state.tick &+= 1
            state.entries[digest] = Entry(buffer: buffer, tick: state.tick)
            state.bytes += buffer.readableBytes
            guard state.bytes > capacity else { return }
            let oldest = state.entries.sorted { $0.value.tick < $1.value.tick }
            for (key, entry) in oldest.prefix(max(1, oldest.count / 10)) {
                state.entries[key] = nil
                state.bytes -= entry.buffer.readableBytes
            }
        }
    }

    /// Bytes held now.
    public var bytes: Int { state.withLockedValue { $0.bytes } }
}
