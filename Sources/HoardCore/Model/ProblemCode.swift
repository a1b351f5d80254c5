/// Every reason Hoard refuses or warns about input, registered once.
///
/// The raw value is the wire code (`UPPER_SNAKE`) used in reports, CLI output and HTTP error bodies;
/// `Schemas/` lists the same codes.
public enum ProblemCode: String, Sendable, Codable, CaseIterable {
    // Archive container.
    /// The file is not a zip, tar or tar.gz archive.
    case unsupportedFormat = "UNSUPPORTED_FORMAT"
    /// A zip entry uses a compression method other than stored or deflate.
    case unsupportedCompression = "UNSUPPORTED_COMPRESSION"
    /// An entry is encrypted.
    case encryptedEntry = "ENCRYPTED_ENTRY"
    /// The archive is damaged: bad CRC, truncated, unreadable directory.
    case corruptArchive = "CORRUPT_ARCHIVE"
    /// An entry holds a different number of bytes than its header declares.
    case sizeMismatch = "SIZE_MISMATCH"
    // Entries.
    /// An entry's path escapes the pack: `..`, absolute, drive letter or backslash.
    case unsafePath = "UNSAFE_PATH"
    /// An entry is a symbolic or hard link.
    case linkEntry = "LINK_ENTRY"
    /// An entry is a device, FIFO or socket.
    case specialEntry = "SPECIAL_ENTRY"
    /// An entry's name is not UTF-8 or holds control or bidirectional-override characters.
    case invalidName = "INVALID_NAME"
    /// An entry's name or one of its components is too long.
    case nameTooLong = "NAME_TOO_LONG"
    /// An entry is nested too deep.
    case pathTooDeep = "PATH_TOO_DEEP"
    /// Two entries have the same name after Unicode normalisation and case folding.
    case nameCollision = "NAME_COLLISION"
    // Budgets.
    /// The archive has more entries than allowed.
    case tooManyEntries = "TOO_MANY_ENTRIES"
    /// One entry decodes to more bytes than allowed.
    case entryTooLarge = "ENTRY_TOO_LARGE"
    /// The archive decodes to more bytes than allowed.
    case archiveTooLarge = "ARCHIVE_TOO_LARGE"
    /// The archive decodes to far more bytes than it holds (a zip bomb).
    case compressionRatio = "COMPRESSION_RATIO"
    // Pictures.
    /// An entry's bytes are not the picture type its name says.
    case typeMismatch = "TYPE_MISMATCH"
    /// A picture's header is damaged or truncated.
    case unreadableImage = "UNREADABLE_IMAGE"
    /// A picture is larger than allowed (a pixel bomb).
    case imageTooLarge = "IMAGE_TOO_LARGE"
    /// A sound's header is damaged, truncated or lies about its sizes, or it is in no format Hoard reads.
    case unreadableAudio = "UNREADABLE_AUDIO"
    /// A sound, or a pack's sounds together, are longer or larger than allowed.
    case audioTooLarge = "AUDIO_TOO_LARGE"
    /// A MapTool token file (`.rptok`) that cannot be read as one: its `content.xml` is missing, not well-formed, holds
    /// a DTD or entities, or is no token; or the image it names is missing or embedded.
    case badTokenFile = "BAD_TOKEN_FILE"
    /// A picture's metadata (an EXIF, XMP or IPTC segment or chunk) lies about its length or layout.
    case corruptMetadata = "CORRUPT_METADATA"
    // Naming and consistency.
    /// `pack.json` is not valid.
    case badManifest = "BAD_MANIFEST"
    /// A footprint is outside 1 to its kind's cap (32 tiles a side; 512 for backgrounds).
    case badFootprint = "BAD_FOOTPRINT"
    /// A LOD scale is not one of 1, 2, 3, 4, 8.
    case badScale = "BAD_SCALE"
    /// Variants of one asset disagree on aspect ratio or scale.
    case variantMismatch = "VARIANT_MISMATCH"
    /// Two files give the same asset the same scale.
    case duplicateVariant = "DUPLICATE_VARIANT"
    /// A picture's size does not match its footprint × tilePixels (a warning).
    case footprintMismatch = "FOOTPRINT_MISMATCH"
    /// A file was skipped: not a picture, or in a folder no kind claims (a warning, one per folder).
    case ignoredEntry = "IGNORED_ENTRY"
    /// Pictures in a folder that names no kind got the pack's default kind (`pack.json` `defaultKind`, else `token`;
    /// a warning, one per folder).
    case defaultKind = "DEFAULT_KIND"
    /// The archive holds no assets.
    case emptyPack = "EMPTY_PACK"
    /// A plugin failed on a file: it hung, crashed, answered garbage or returned something outside its bounds.
    case pluginFailure = "PLUGIN_FAILURE"
    // Catalog.
    /// The pack name belongs to another group, or this version exists with other content.
    case packConflict = "PACK_CONFLICT"
    /// The input file could not be read at all.
    case unreadableInput = "UNREADABLE_INPUT"
    /// The data directory or blob store failed (disk full, permissions, corruption).
    case storageFailure = "STORAGE_FAILURE"
    /// Whoever started the import cancelled it before it was recorded; nothing was stored.
    case importCancelled = "IMPORT_CANCELLED"
}

/// How serious a problem is: an error refuses the pack, a warning is reported and the import goes on.
public enum Severity: String, Sendable, Codable {
    case error, warning
}

/// One finding about one entry (or the whole archive when `entry` is nil), in words a pack author can act on.
public struct Problem: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What rule was broken.
    public var code: ProblemCode
    /// Whether it refuses the pack.
    public var severity: Severity
    /// The archive entry it concerns, as named in the archive (lossy for names that are not UTF-8).
    public var entry: String?
    /// What is wrong and how to fix it.
    public var message: String

    /// Creates a problem; `severity` defaults to error.
    public init(_ code: ProblemCode, _ message: String, entry: String? = nil, severity: Severity = .error) {
        self.code = code
        self.severity = severity
        self.entry = entry
        self.message = message
    }

    /// `CODE entry: message`.
    public var description: String {
        "\(code.rawValue)\(entry.map { " \($0)" } ?? ""): \(message)"
    }
}
