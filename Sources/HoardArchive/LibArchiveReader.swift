import CArchive
import HoardCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File types from archive_entry.h, whose macros Swift cannot import (they cast).
private let fileTypeRegular: mode_t = 0o100000
private let fileTypeDirectory: mode_t = 0o040000
private let fileTypeSymlink: mode_t = 0o120000

/// Reads zip (stored and deflate entries), tar and tar.gz through libarchive, streaming, with every rule of
/// ``EntryGate`` applied. Every other container, filter or zip compression method is refused by name.
public final class LibArchiveReader: ArchiveReader {
    private let handle: OpaquePointer
    private var gate: EntryGate
    private var currentName: String?
    private var expectedOffset: Int64 = 0
    private var isDataDone = true
    private var entriesSeen = 0
    private let guess: ArchiveSniffer.Guess
    private let startsWithLocalHeader: Bool
    /// Size of the archive file.
    public let archiveSize: Int64

    /// libarchive converts names with the C library's locale; without a UTF-8 locale non-ASCII names come back empty.
    private static let localeIsSet: Bool = {
        setlocale(LC_CTYPE, "C.UTF-8") != nil || setlocale(LC_CTYPE, "en_US.UTF-8") != nil
    }()

    /// Opens an archive file (`shared`: the budgets of the bundle it came from). Throws UNSUPPORTED_FORMAT (naming what
    /// the file is) or CORRUPT_ARCHIVE.
    public init(path: String, limits: ImportLimits, shared: SharedBudget? = nil) throws(ArchiveError) {
        _ = Self.localeIsSet
        let head: [UInt8]
        do {
            (head, archiveSize) = try Self.readHead(path)
        } catch {
            throw ArchiveError(.unreadableInput, "cannot read '\(path)': \(error)")
        }
        guess = ArchiveSniffer.guess(head)
        startsWithLocalHeader = head.starts(with: [0x50, 0x4B, 0x03, 0x04])
        if case .unsupported(let what) = guess {
            throw ArchiveError(.unsupportedFormat, "the file is \(what), not a zip, tar or tar.gz archive")
        }
        if head.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            throw ArchiveError(.emptyPack, "the zip archive has no entries")
        }
        guard let archive = archive_read_new() else {
            throw ArchiveError(.storageFailure, "libarchive could not allocate a reader")
        }
        handle = archive
        gate = EntryGate(limits: limits, archiveSize: archiveSize, shared: shared)
        archive_read_support_format_zip_seekable(archive)
        archive_read_support_format_tar(archive)
        archive_read_support_filter_gzip(archive)
        if archive_read_open_filename(archive, path, 1 << 20) != ARCHIVE_OK {
            let message = Self.errorString(archive)  // deinit frees the handle
            if guess == .unknown {
                throw ArchiveError(.unsupportedFormat, "the file is not a zip, tar or tar.gz archive", cause: message)
            }
            throw ArchiveError(.corruptArchive, "the archive cannot be opened: \(message)", cause: message)
        }
    }

    deinit {
        archive_read_free(handle)
    }

    /// Bytes of the archive file consumed so far.
    public var bytesConsumed: Int64 { archive_filter_bytes(handle, -1) }

    /// Bytes decoded from every entry so far.
    public var decodedBytes: Int64 { gate.decodedTotal }

    public func nextEntry() throws(ArchiveError) -> ArchiveEntry? {
        if !isDataDone {
            while try readBlock() != nil {}
        }
        var entry: OpaquePointer?
        let status = archive_read_next_header(handle, &entry)
        if status == ARCHIVE_EOF {
            if entriesSeen == 0, startsWithLocalHeader {
                throw ArchiveError(.corruptArchive, "the zip holds file data but its central directory lists none: it is damaged")
            }
            return nil
        }
        entriesSeen += 1
        guard status >= ARCHIVE_WARN, let entry else {
            throw failure("reading the next entry header")
        }
        let raw = archive_entry_pathname(entry).map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? []
        let shown = String(decoding: raw, as: UTF8.self)
        try checkContainer(entry: shown)
        if archive_entry_is_encrypted(entry) != 0 {
            throw ArchiveError(.encryptedEntry, "the entry is encrypted; repack the archive without a password", entry: shown)
        }
        let type = archive_entry_filetype(entry)
        if archive_entry_hardlink(entry) != nil {
            throw ArchiveError(.linkEntry, "hard links are not allowed; store the file itself", entry: shown)
        }
        if type == fileTypeSymlink || archive_entry_symlink(entry) != nil {
            throw ArchiveError(.linkEntry, "symbolic links are not allowed; store the file itself", entry: shown)
        }
        guard type == fileTypeRegular || type == fileTypeDirectory else {
            throw ArchiveError(.specialEntry, "devices, FIFOs and sockets are not allowed in a pack", entry: shown)
        }
        if archive_entry_sparse_count(entry) > 0 {
            throw ArchiveError(.specialEntry, "sparse files are not allowed in a pack", entry: shown)
        }
        if raw.isEmpty && status == ARCHIVE_WARN {
            throw ArchiveError(.invalidName, "the name cannot be read as UTF-8; rename it", entry: shown, cause: Self.errorString(handle))
        }
        let declared: Int64? = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
        // A zip name without the UTF-8 flag is CP437 by the format's rule unless its bytes are valid UTF-8. A name
        // libarchive warned about failed the conversion its flag asked for (UTF-8): it is refused, never re-read.
        let isZip = archive_format(handle) & ARCHIVE_FORMAT_BASE_MASK == ARCHIVE_FORMAT_ZIP
        let legacy: LegacyNameEncoding? = isZip && status == ARCHIVE_OK ? .cp437 : nil
        let admitted = try gate.admit(
            rawName: raw, declaredSize: type == fileTypeDirectory ? nil : declared, isDirectory: type == fileTypeDirectory,
            legacyEncoding: legacy)
        currentName = admitted.path.description
        expectedOffset = 0
        isDataDone = false
        return admitted
    }

    public func readBlock() throws(ArchiveError) -> UnsafeRawBufferPointer? {
        if isDataDone { return nil }
        var buffer: UnsafeRawPointer?
        var size = 0
        var offset: Int64 = 0
        let status = archive_read_data_block(handle, &buffer, &size, &offset)
        if status == ARCHIVE_EOF {
            isDataDone = true
            try gate.finishEntry()
            return nil
        }
        // A warning here is a checksum or size error: the bytes cannot be trusted.
        guard status == ARCHIVE_OK else { throw failure("reading the entry's data") }
        guard offset == expectedOffset else {
            throw ArchiveError(.specialEntry, "the entry has holes (a sparse file); store it whole", entry: currentName)
        }
        expectedOffset += Int64(size)
        try gate.count(size)
        return UnsafeRawBufferPointer(start: buffer, count: size)
    }

    /// Refuses any container, filter or zip method other than zip stored/deflate, tar and gzip.
    private func checkContainer(entry: String) throws(ArchiveError) {
        let format = archive_format(handle)
        let name = archive_format_name(handle).map { String(cString: $0) } ?? "unknown"
        switch format & ARCHIVE_FORMAT_BASE_MASK {
        case ARCHIVE_FORMAT_ZIP:
            if !(name.contains("(deflation)") || name.contains("(uncompressed)")) {
                let method = name.split(separator: "(").last.map { String($0.dropLast()) } ?? name
                throw ArchiveError(
                    .unsupportedCompression, "the entry is compressed with \(method); repack with deflate or no compression",
                    entry: entry)
            }
        case ARCHIVE_FORMAT_TAR:
            break
        default:
            throw ArchiveError(.unsupportedFormat, "\(name) archives are not supported; use zip, tar or tar.gz")
        }
        for index in 0..<archive_filter_count(handle) {
            let code = archive_filter_code(handle, index)
            if code != ARCHIVE_FILTER_NONE && code != ARCHIVE_FILTER_GZIP {
                let filter = archive_filter_name(handle, index).map { String(cString: $0) } ?? "unknown"
                throw ArchiveError(.unsupportedFormat, "\(filter) compression is not supported; use zip, tar or tar.gz")
            }
        }
    }

    /// Maps libarchive's failure to the rule it broke.
    private func failure(_ doing: String) -> ArchiveError {
        let message = Self.errorString(handle)
        let lower = message.lowercased()
        let code: ProblemCode
        let text: String
        if lower.contains("encrypt") {
            (code, text) = (.encryptedEntry, "the entry is encrypted; repack the archive without a password")
        } else if lower.contains("compression method") || lower.contains("unsupported zip") {
            (code, text) = (.unsupportedCompression, "the entry's compression method is not supported; use deflate or none")
        } else if lower.contains("wrong size") || lower.contains("size mismatch") {
            (code, text) = (.sizeMismatch, "the entry's size does not match its header")
        } else if lower.contains("crc") {
            (code, text) = (.corruptArchive, "the entry's checksum (CRC) is wrong: the archive is damaged")
        } else if lower.contains("truncated") || lower.contains("premature") || lower.contains("unexpected end") {
            (code, text) = (.corruptArchive, "the archive ends too early: it is truncated")
        } else {
            (code, text) = (.corruptArchive, "the archive is damaged while \(doing)")
        }
        return ArchiveError(code, text, entry: currentName, cause: message)
    }

    private static func errorString(_ archive: OpaquePointer) -> String {
        archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error"
    }

    /// The first 64 KiB of a file (enough for every signature the sniffer knows) and its size.
    private static func readHead(_ path: String) throws -> ([UInt8], Int64) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ProblemMessage(String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ProblemMessage(String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ProblemMessage("not a regular file") }
        var head = [UInt8](repeating: 0, count: 65536)
        let count = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw ProblemMessage(String(cString: strerror(errno))) }
        return (Array(head.prefix(count)), Int64(info.st_size))
    }
}
