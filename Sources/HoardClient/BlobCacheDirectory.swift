import Foundation
import HoardCore

/// A persistent, content-addressed cache of blobs on the client's disk.
///
/// Layout (all under ``root``, one file system, so a rename is atomic):
///
///     ROOT/
///       sha256/ab/<64 hex>    verified blobs, sharded by the first two hex digits
///       partial/ab/<64 hex>   an interrupted download: the blob's first bytes, continued with `Range: bytes=N-`
///       sessions/<64 hex>     the snapshot of a map synced completely (`SessionSnapshot`), named by the map's digest
///       sha256/ab/.<hex>.<uuid>  a blob being written, hidden in its shard; renamed to its name once written
///       tmp/                  other files being written (session snapshots)
///
/// Invariants: a file under `sha256/` named by a digest MUST hold exactly the bytes of that digest — every write
/// hashes the bytes, then writes a hidden temporary file, and renames it to its name, so neither a wrong blob nor a
/// half-written one can ever appear under a digest's name. Presence of the file is therefore the cache's only index:
/// ``contains(_:)`` is one `stat`. Hidden files, `partial/` and `tmp/` are scratch space; deleting them loses nothing
/// but time.
/// Several processes or tasks may fill the same cache at once: the last rename of identical bytes wins harmlessly.
///
/// With a byte ``budget`` the cache forgets the blobs used least recently once it holds more than that, down to nine
/// tenths of it, but never a blob in use: what the current map needs at its current resolution (each asset's first
/// picture and the one last asked for, see ``SyncPlan/inUse``). A blob's last use is its file's modification time, so
/// the order survives restarts; syncs and ``HoardClient/variant(for:pixelsPerTile:in:)`` refresh it. What is in use
/// can exceed the budget: then the cache holds what is in use and nothing else.
public struct BlobCacheDirectory: Sendable, LocalBlobSource {
    /// The cache's root folder.
    public let root: URL
    /// Its path, ending in `/` (paths of blobs are built from it: 10,000 `URL` appends cost more than a warm join may).
    private let rootPath: String
    /// Whether each entry is synced to disk (file and directory) before it counts as cached. Off by default: the
    /// cache is a copy of what the server holds, so after a power cut a lost or damaged entry is only fetched again
    /// (``verify()`` finds damaged ones); per-blob syncing would cost more than the download on a cold join.
    public var isDurable = false
    /// The most bytes of blobs kept, or nil for no limit.
    public var budget: Int64? { ledger?.budget }
    /// Sizes, last uses and what is in use, when there is a budget.
    private let ledger: CacheLedger?

    /// Opens (creating if needed) a cache in `root`, keeping at most `budget` bytes of blobs not in use (nil: no
    /// limit).
    public init(root: URL, budget: Int64? = nil) throws {
        self.root = root.standardizedFileURL
        ledger = budget.map { CacheLedger(budget: max(0, $0)) }
        rootPath = self.root.path.hasSuffix("/") ? self.root.path : self.root.path + "/"
        for folder in ["sha256", "partial", "tmp"] {
            do {
                try FileManager.default.createDirectory(
                    at: self.root.appendingPathComponent(folder), withIntermediateDirectories: true)
            } catch {
                throw HoardClientError(.io, "cannot create the cache folder \(self.root.path)/\(folder); check the path and its permissions",
                                       cause: error)
            }
        }
        // The 256 shards are made once, up front, rather than by the first blob of each: on a cold join that is 256
        // folder creations fewer between the join and the first render.
        let blobs = rootPath + "sha256/"
        if access(blobs + "ff", F_OK) != 0 {
            for shard in 0..<256 {
                let name = blobs + String(format: "%02x", shard)
                do {
                    try Self.makeFolder(name)
                } catch {
                    throw HoardClientError(.io, "cannot create the cache folder \(name); check free space and permissions", cause: error)
                }
            }
        }
    }

    /// Opens (creating if needed) a cache at a path.
    public init(path: String, budget: Int64? = nil) throws {
        try self.init(root: URL(fileURLWithPath: path, isDirectory: true), budget: budget)
    }

    /// Where a verified blob lives: `ROOT/sha256/ab/<hex>`.
    public func url(for digest: Digest) -> URL {
        URL(fileURLWithPath: path(for: digest), isDirectory: false)
    }

    /// The path of ``url(for:)``.
    func path(for digest: Digest) -> String {
        let hex = digest.hex
        return rootPath + "sha256/" + hex.prefix(2) + "/" + hex
    }

    /// Where an interrupted download of `digest` is kept: `ROOT/partial/ab/<hex>`. Its folder exists once this
    /// returns (sharded like `sha256/`, so parallel downloads do not queue on one folder's lock).
    public func partialURL(for digest: Digest) -> URL {
        let path = partialPath(for: digest)
        try? Self.makeFolder(String(path[..<path.lastIndex(of: "/")!]))
        return URL(fileURLWithPath: path, isDirectory: false)
    }

    /// The path of ``partialURL(for:)``, without making its folder.
    func partialPath(for digest: Digest) -> String {
        let hex = digest.hex
        return rootPath + "partial/" + hex.prefix(2) + "/" + hex
    }

    /// Whether the blob is in the cache (and therefore verified).
    public func contains(_ digest: Digest) -> Bool {
        access(path(for: digest), F_OK) == 0
    }

    /// The blob's bytes, or nil when it is not cached.
    public func read(_ digest: Digest) throws -> Data? {
        guard contains(digest) else { return nil }
        do {
            return try Data(contentsOf: url(for: digest))
        } catch {
            throw HoardClientError(.io, "cannot read \(digest) from the cache at \(root.path)", digests: [digest], cause: error)
        }
    }

    /// `LocalBlobSource`: the cached file, when present.
    public func file(for digest: Digest) -> URL? {
        contains(digest) ? url(for: digest) : nil
    }

    /// Bytes of `digest` already downloaded into `partial/`, 0 when there are none.
    public func partialSize(of digest: Digest) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: partialPath(for: digest))
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Verifies `bytes` against `digest`, then writes them into the cache atomically.
    ///
    /// Throws ``HoardClientError/Code-swift.struct/digestMismatch`` and stores nothing when the bytes hash to
    /// another digest. Inserting a blob that is already cached is a no-op.
    public func insert(_ bytes: some DataProtocol, as digest: Digest) throws {
        let actual = BlobHasher.digest(of: bytes)
        guard actual == digest else {
            throw HoardClientError(.digestMismatch, "the bytes received for \(digest) hash to \(actual); they were not cached", digests: [digest])
        }
        guard !contains(digest) else { return }
        // POSIX calls on string paths: a cold join inserts thousands of small blobs, and Foundation's file handles,
        // URLs and `moveItem` checks cost more than the writes themselves. The temporary file is a hidden one in the
        // blob's own shard: parallel inserts then lock 256 folders instead of queueing on one, and the rename stays
        // inside its folder.
        let destination = path(for: digest)
        let shard = String(destination[..<destination.lastIndex(of: "/")!])
        let temporary = shard + "/." + digest.hex + "." + Self.uniqueSuffix()
        do {
            do {
                try Self.writeNewFile(temporary, bytes, synchronizing: isDurable)
            } catch let error as POSIXError where error.code == .ENOENT {
                // The shard is made when the cache is created; this one was removed since.
                try Self.makeFolder(shard)
                try Self.writeNewFile(temporary, bytes, synchronizing: isDurable)
            }
            try publish(path: temporary, as: digest)
        } catch {
            unlink(temporary)
            throw HoardClientError(.io, "cannot write \(digest) into the cache at \(root.path); check free space and permissions",
                                   digests: [digest], cause: SendableError(error))
        }
    }

    private static let written = Locked(0)

    /// A name part no other writer uses: this process's id and a counter (a UUID costs a random read per blob).
    private static func uniqueSuffix() -> String {
        "\(getpid()).\(written.withLock { count in count += 1; return count })"
    }

    /// Makes a folder unless it exists.
    private static func makeFolder(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw posixError(errno) }
    }

    /// Writes `bytes` into a file that must not exist yet, optionally synced to disk.
    private static func writeNewFile(_ path: String, _ bytes: some DataProtocol, synchronizing: Bool) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixError(errno) }
        defer { close(fd) }
        for region in bytes.regions {
            try region.withUnsafeBytes { buffer in
                var done = 0
                while done < buffer.count {
                    let written = write(fd, buffer.baseAddress! + done, buffer.count - done)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw posixError(errno)
                    }
                    done += written
                }
            }
        }
        if synchronizing, fsync(fd) != 0 { throw posixError(errno) }
    }

    /// Hashes the file at `url` and, when it matches `digest`, moves it into the cache (it must be on the cache's
    /// file system, e.g. under `partial/`). On a mismatch the file is deleted and the error says so.
    public func insertFile(at url: URL, as digest: Digest) throws {
        let actual: Digest
        do {
            actual = try BlobHasher.digest(ofFileAt: url).digest
        } catch {
            throw HoardClientError(.io, "cannot read \(url.path) to verify it", digests: [digest], cause: error)
        }
        guard actual == digest else {
            try? FileManager.default.removeItem(at: url)
            throw HoardClientError(.digestMismatch, "the bytes downloaded for \(digest) hash to \(actual); they were discarded", digests: [digest])
        }
        do {
            try publish(url, as: digest)
        } catch {
            throw HoardClientError(.io, "cannot move \(digest) into the cache at \(root.path)", digests: [digest], cause: error)
        }
    }

    /// Renames a file the caller already verified into its sharded place; when a twin got there first, the file is
    /// dropped. The file must be on the cache's file system.
    func publish(_ file: URL, as digest: Digest) throws {
        try publish(path: file.path, as: digest)
    }

    /// ``publish(_:as:)`` by path; the shard folder is made when the first rename into it finds none.
    func publish(path file: String, as digest: Digest) throws {
        let destination = path(for: digest)
        var size: Int64 = 0
        if ledger != nil {
            var status = stat()
            if stat(file, &status) == 0 { size = Int64(status.st_size) }
        }
        defer { if let ledger, contains(digest) { evict(ledger.added(digest, size: size, cache: self)) } }
        let shard = String(destination[..<destination.lastIndex(of: "/")!])
        if rename(file, destination) != 0 {
            let first = errno
            if first == ENOENT, (try? Self.makeFolder(shard)) != nil, rename(file, destination) == 0 {
                // Published into a shard made just now.
            } else if contains(digest) {
                // Content-addressed: a blob already there holds the same bytes.
                unlink(file)
                return
            } else {
                throw posixError(first)
            }
        }
        if isDurable { Self.synchronizeDirectory(URL(fileURLWithPath: shard, isDirectory: true)) }
    }

    /// Best effort: makes the rename itself durable (fsync of the directory).
    private static func synchronizeDirectory(_ directory: URL) {
        guard let handle = try? FileHandle(forReadingFrom: directory) else { return }
        try? handle.synchronize()
        try? handle.close()
    }

    /// Records that the app drew or needs these blobs now (with a budget: refreshes their last use; otherwise
    /// nothing).
    public func markUsed(_ digests: some Sequence<Digest>) {
        guard let ledger else { return }
        for digest in ledger.used(digests, cache: self) { _ = utimensat(AT_FDCWD, path(for: digest), nil, 0) }
    }

    /// Sets what must not be evicted, by asset (or plain blob) digest: `replacing` everything kept before (a new map,
    /// or the whole map at a new resolution), or only the entries of the assets named (one asset drawn sharper).
    /// Nothing is evicted now: what stops being in use goes when new blobs need the room, or at ``trim()``, so a
    /// picture still drawn while its sharper one downloads stays until that one is cached.
    public func keep(_ inUse: [Digest: Set<Digest>], replacing: Bool) {
        ledger?.keep(inUse, replacing: replacing)
    }

    /// Evicts the least recently used blobs not in use while the cache holds more than its budget.
    public func trim() {
        guard let ledger else { return }
        evict(ledger.trim(cache: self))
    }

    /// Bytes of blobs the cache holds as far as its budget keeps count (nil without a budget).
    public var countedBytes: Int64? { ledger?.total(cache: self) }

    private func evict(_ digests: [Digest]) {
        for digest in digests { unlink(path(for: digest)) }
    }

    /// Removes a cached blob and any partial download of it.
    public func remove(_ digest: Digest) throws {
        ledger?.removed(digest)
        for url in [url(for: digest), URL(fileURLWithPath: partialPath(for: digest))] where FileManager.default.fileExists(atPath: url.path) {
            do {
                try FileManager.default.removeItem(at: url)
            } catch {
                throw HoardClientError(.io, "cannot remove \(url.path)", digests: [digest], cause: error)
            }
        }
    }

    /// Every cached digest, in no particular order.
    public func digests() -> [Digest] {
        let base = root.appendingPathComponent("sha256")
        let shards = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        return shards.flatMap { shard in
            ((try? FileManager.default.contentsOfDirectory(atPath: base.appendingPathComponent(shard).path)) ?? [])
                .compactMap { name in Digest("sha256:" + name).flatMap { $0.hex.hasPrefix(shard) ? $0 : nil } }
        }
    }

    /// Re-hashes every cached blob, removes those whose bytes changed on disk (a bad disk, a hand edit), and
    /// returns their digests. Also clears `tmp/` and the hidden files in `sha256/`, which only a crashed writer leaves
    /// behind.
    @discardableResult
    public func verify() throws -> [Digest] {
        var removed: [Digest] = []
        for digest in digests() {
            let actual = try? BlobHasher.digest(ofFileAt: url(for: digest)).digest
            if actual != digest {
                try FileManager.default.removeItem(at: url(for: digest))
                removed.append(digest)
            }
        }
        let tmp = root.appendingPathComponent("tmp")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? [] {
            try? FileManager.default.removeItem(at: tmp.appendingPathComponent(name))
        }
        let blobs = root.appendingPathComponent("sha256")
        for shard in (try? FileManager.default.contentsOfDirectory(atPath: blobs.path)) ?? [] {
            let folder = blobs.appendingPathComponent(shard)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(".") {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
        }
        return removed
    }
}

/// The bookkeeping of a cache with a budget: every blob's size and last use, and what is in use. Loaded from the
/// folder (one `stat` per blob) the first time it is needed; kept in step by this process's writes and evictions
/// (another process's writes are counted when it next loads).
final class CacheLedger: Sendable {
    struct Entry {
        var size: Int64
        var lastUse: Double
    }

    struct State {
        var entries: [Digest: Entry]?
        var total: Int64 = 0
        var inUse: [Digest: Set<Digest>] = [:]
    }

    let budget: Int64
    private let state = Locked(State())

    init(budget: Int64) { self.budget = budget }

    /// Seconds since 1970, as file modification times count.
    private static func now() -> Double { Date().timeIntervalSince1970 }

    /// Reads every blob's size and modification time, once.
    private static func load(_ state: inout State, _ cache: BlobCacheDirectory) {
        guard state.entries == nil else { return }
        var entries: [Digest: Entry] = [:]
        var total: Int64 = 0
        for digest in cache.digests() {
            var status = stat()
            guard stat(cache.path(for: digest), &status) == 0 else { continue }
            let size = Int64(status.st_size)
            #if canImport(Darwin)
            let modified = status.st_mtimespec
            #else
            let modified = status.st_mtim
            #endif
            entries[digest] = Entry(size: size, lastUse: Double(modified.tv_sec) + Double(modified.tv_nsec) / 1e9)
            total += size
        }
        state.entries = entries
        state.total = total
    }

    func total(cache: BlobCacheDirectory) -> Int64 {
        state.withLock { state in
            Self.load(&state, cache)
            return state.total
        }
    }

    /// A blob was published; returns the blobs to evict.
    func added(_ digest: Digest, size: Int64, cache: BlobCacheDirectory) -> [Digest] {
        state.withLock { state in
            Self.load(&state, cache)
            if let old = state.entries![digest] { state.total -= old.size }
            state.entries![digest] = Entry(size: size, lastUse: Self.now())
            state.total += size
            return Self.overflow(&state, budget: budget)
        }
    }

    /// Refreshes the last use of the cached ones among `digests`; returns those.
    func used(_ digests: some Sequence<Digest>, cache: BlobCacheDirectory) -> [Digest] {
        let now = Self.now()
        return state.withLock { state in
            Self.load(&state, cache)
            var touched: [Digest] = []
            for digest in digests where state.entries![digest] != nil {
                state.entries![digest]!.lastUse = now
                touched.append(digest)
            }
            return touched
        }
    }

    func keep(_ inUse: [Digest: Set<Digest>], replacing: Bool) {
        state.withLock { state in
            if replacing { state.inUse = inUse } else { state.inUse.merge(inUse) { $1 } }
        }
    }

    func trim(cache: BlobCacheDirectory) -> [Digest] {
        state.withLock { state in
            Self.load(&state, cache)
            return Self.overflow(&state, budget: budget)
        }
    }

    func removed(_ digest: Digest) {
        state.withLock { state in
            guard let entry = state.entries?.removeValue(forKey: digest) else { return }
            state.total -= entry.size
        }
    }

    /// Over budget: forgets the least recently used blobs not in use until the total is nine tenths of the budget
    /// (so that a full cache sorts its entries once per tenth of its budget, not once per blob); returns them.
    private static func overflow(_ state: inout State, budget: Int64) -> [Digest] {
        guard state.total > budget, let entries = state.entries else { return [] }
        let pinned = state.inUse.values.reduce(into: Set<Digest>()) { $0.formUnion($1) }
        let target = budget - budget / 10
        var evicted: [Digest] = []
        for (digest, entry) in entries.filter({ !pinned.contains($0.key) }).sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard state.total > target else { break }
            state.entries![digest] = nil
            state.total -= entry.size
            evicted.append(digest)
        }
        return evicted
    }
}

/// Somewhere a client can find blobs it already has on disk, to upload what a server lacks.
public protocol LocalBlobSource: Sendable {
    /// The file holding exactly the bytes of `digest`, or nil when this source does not have it.
    func file(for digest: Digest) -> URL?
}

/// A folder of blob files named by their digest: `<hex>`, `sha256:<hex>`, or the cache layout `sha256/ab/<hex>`.
public struct BlobFolder: LocalBlobSource {
    /// The folder.
    public let directory: URL

    /// A folder of blobs.
    public init(directory: URL) { self.directory = directory }

    public func file(for digest: Digest) -> URL? {
        let hex = digest.hex
        let candidates = [
            directory.appendingPathComponent(hex),
            directory.appendingPathComponent(digest.description),
            directory.appendingPathComponent("sha256").appendingPathComponent(String(hex.prefix(2))).appendingPathComponent(hex),
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) }
    }
}

/// The error for a failed system call's `errno`.
private func posixError(_ code: Int32) -> POSIXError {
    POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
}
