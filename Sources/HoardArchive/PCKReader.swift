import Crypto
import Foundation
import HoardCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads Dungeondraft asset packs (`.dungeondraft_pack`): Godot PCK files, format version 1 (Godot 3). An
/// in-process archive reader with the same ``EntryGate`` rules and budgets as zip.
///
/// Layout: `GDPC`, format version (u32, 1), Godot major/minor/patch (u32 each), 16 reserved u32, file count (u32),
/// then per file: path length (u32), the path (`res://…`, NUL-padded to the length), offset (u64, from the start of
/// the file), size (u64), MD5 (16 bytes); then the files' bytes. All integers little-endian.
///
/// The whole table is read and checked before any byte is: every entry must lie after the table and inside the
/// file, and no two may overlap (`CORRUPT_ARCHIVE`). Entries are then streamed in offset order, each block through
/// the gate, and each entry's MD5 is checked at its end. Paths lose `res://`, and `packs/<id>/textures/` becomes the
/// top level, so `res://packs/x1/textures/objects/crate.png` is `objects/crate.png`; other files (the pack's JSON,
/// `data/` folders) keep their path and are ignored as non-pictures.
public final class PCKReader: ArchiveReader {
    /// Size of the archive file.
    public let archiveSize: Int64
    /// Bytes of the archive consumed so far.
    public private(set) var bytesConsumed: Int64 = 0
    /// Bytes decoded from every entry so far.
    public var decodedBytes: Int64 { gate.decodedTotal }

    /// One file of the table.
    struct TableEntry {
        var rawName: [UInt8]
        var offset: Int64
        var size: Int64
        var md5: [UInt8]
    }

    private let fd: Int32
    private var gate: EntryGate
    private var pending: [TableEntry]
    private var current: (entry: TableEntry, done: Int64, hash: Insecure.MD5, name: String)?
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)

    /// The four bytes a PCK file starts with.
    public static let magic: [UInt8] = Array("GDPC".utf8)

    /// Opens and checks the table of the PCK file at `path` (`shared`: the budgets of the bundle it came from).
    public init(path: String, limits: ImportLimits, shared: SharedBudget? = nil) throws(ArchiveError) {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ArchiveError(.unreadableInput, "cannot open \(path)", cause: String(cString: strerror(errno))) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw ArchiveError(.unreadableInput, "cannot read \(path)", cause: String(cString: strerror(errno)))
        }
        archiveSize = Int64(info.st_size)
        gate = EntryGate(limits: limits, archiveSize: archiveSize, shared: shared)
        do {
            pending = try Self.readTable(fd: fd, size: archiveSize, limits: limits)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    public func nextEntry() throws(ArchiveError) -> ArchiveEntry? {
        while current != nil { _ = try readBlock() }  // a skipped entry is drained: counted and its MD5 checked
        guard !pending.isEmpty else { return nil }
        let entry = pending.removeFirst()
        let admitted = try gate.admit(rawName: Self.displayName(entry.rawName), declaredSize: entry.size, isDirectory: false)
        current = (entry, 0, Insecure.MD5(), admitted.path.description)
        return admitted
    }

    public func readBlock() throws(ArchiveError) -> UnsafeRawBufferPointer? {
        guard var reading = current else { return nil }
        let left = reading.entry.size - reading.done
        if left == 0 {
            current = nil
            try gate.finishEntry()
            guard Array(reading.hash.finalize()) == reading.entry.md5 else {
                throw ArchiveError(.corruptArchive, "the entry's bytes do not match the MD5 in the pack's table", entry: reading.name)
            }
            return nil
        }
        let count = Int(min(Int64(buffer.count), left))
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(reading.entry.offset + reading.done)) }
        guard got == count else {
            throw ArchiveError(.corruptArchive, "the pack ends inside this entry", entry: reading.name)
        }
        try gate.count(count)
        let block = buffer.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[0..<count]) }
        reading.hash.update(bufferPointer: block)
        reading.done += Int64(count)
        bytesConsumed += Int64(count)
        current = reading
        return block
    }

    /// `res://packs/<id>/textures/objects/a.png` → `objects/a.png`; any other `res://x` → `x`.
    static func displayName(_ raw: [UInt8]) -> [UInt8] {
        var name = raw
        if name.starts(with: Array("res://".utf8)) { name.removeFirst(6) }
        let parts = name.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        if parts.count > 3, Array(parts[0]) == Array("packs".utf8), Array(parts[2]) == Array("textures".utf8) {
            return Array(parts[3...].joined(separator: [UInt8(ascii: "/")]))
        }
        return name
    }

    /// Reads the header and the table; refuses anything out of range or overlapping.
    static func readTable(fd: Int32, size: Int64, limits: ImportLimits) throws(ArchiveError) -> [TableEntry] {
        var position: Int64 = 0
        func bytes(_ count: Int) throws(ArchiveError) -> [UInt8] {
            guard count >= 0, position + Int64(count) <= size else {
                throw ArchiveError(.corruptArchive, "the pack's table runs past the end of the file")
            }
            var result = [UInt8](repeating: 0, count: count)
            let got = result.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(position)) }
            guard got == count else { throw ArchiveError(.corruptArchive, "the pack's table cannot be read") }
            position += Int64(count)
            return result
        }
        func integer(_ width: Int) throws(ArchiveError) -> Int64 {
            try bytes(width).reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }
        guard try bytes(4) == magic else { throw ArchiveError(.unsupportedFormat, "the file is not a Godot PCK pack") }
        let version = try integer(4)
        guard version == 1 else {
            throw ArchiveError(.unsupportedFormat, "PCK format version \(version) is not supported (Dungeondraft packs are version 1)")
        }
        _ = try bytes(12 + 64)  // Godot version, reserved
        let count = try integer(4)
        guard count <= Int64(limits.maxEntries), count * 36 <= size - position else {
            throw ArchiveError(.tooManyEntries, "the pack's table lists \(count) files; the limit is \(limits.maxEntries) and each needs 36 bytes")
        }
        var entries: [TableEntry] = []
        for _ in 0..<count {
            let length = try integer(4)
            guard length > 0, length <= Int64(limits.maxPathBytes + 16) else {
                throw ArchiveError(.nameTooLong, "a path in the pack's table is \(length) bytes long")
            }
            var name = try bytes(Int(length))
            while name.last == 0 { name.removeLast() }
            let offset = try integer(8)
            let fileSize = try integer(8)
            entries.append(TableEntry(rawName: name, offset: offset, size: fileSize, md5: try bytes(16)))
        }
        entries.sort { ($0.offset, $0.size) < ($1.offset, $1.size) }
        var end = position  // the table's end: no entry may start before it
        var previous = "the pack's table"
        for entry in entries {
            let shown = String(decoding: displayName(entry.rawName), as: UTF8.self)
            guard entry.offset >= 0, entry.size >= 0, entry.offset <= size, entry.size <= size - entry.offset else {
                throw ArchiveError(
                    .corruptArchive, "the entry lies outside the file (bytes \(entry.offset) to \(entry.offset &+ entry.size) of \(size))",
                    entry: shown)
            }
            guard entry.offset >= end else {
                throw ArchiveError(.corruptArchive, "the entry overlaps \(previous) (it starts at byte \(entry.offset), before byte \(end))", entry: shown)
            }
            end = entry.offset + entry.size
            previous = "'\(shown)'"
        }
        return entries
    }
}
