import HoardCore

/// The rules and budgets every archive reader applies, whatever the format: names, entry count, collisions,
/// declared and decoded sizes, and the compression ratio.
public struct EntryGate: Sendable {
    /// The limits in force.
    public let limits: ImportLimits
    /// Size of the archive file, for the ratio budget.
    public let archiveSize: Int64
    private let policy: EntryPathPolicy
    /// The bundle's budgets when this archive is one of its packs.
    private let shared: SharedBudget?
    private var seen: [String: String] = [:]
    private var entryCount = 0
    private var current: (name: String, declared: Int64?, decoded: Int64)?
    /// Bytes decoded from every entry so far.
    public private(set) var decodedTotal: Int64 = 0

    /// A gate for one archive; `shared` when it is a pack inside a bundle.
    public init(limits: ImportLimits, archiveSize: Int64, shared: SharedBudget? = nil) {
        self.limits = limits
        self.archiveSize = archiveSize
        self.policy = EntryPathPolicy(limits: limits)
        self.shared = shared
    }

    /// Admits one header: counts it, validates its name, refuses collisions and oversize declarations. A name that is
    /// not UTF-8 is read in `legacyEncoding` when the format has one (``EntryPathPolicy/validate(_:legacyEncoding:)``).
    public mutating func admit(
        rawName: [UInt8], declaredSize: Int64?, isDirectory: Bool, legacyEncoding: LegacyNameEncoding? = nil
    ) throws(ArchiveError) -> ArchiveEntry {
        entryCount += 1
        if entryCount > limits.maxEntries {
            throw ArchiveError(.tooManyEntries, "the archive has more than \(limits.maxEntries) entries; split the pack")
        }
        try shared?.admitEntry()
        let path: EntryPath
        switch policy.validate(rawName, legacyEncoding: legacyEncoding) {
        case .success(let valid): path = valid
        case .failure(let problem): throw ArchiveError(problem)
        }
        let shown = path.description
        if !isDirectory {
            let key = path.collisionKey
            if let earlier = seen[key] {
                let how = earlier == shown ? "appears twice" : "collides with '\(earlier)' once case and Unicode form are ignored"
                throw ArchiveError(.nameCollision, "the name \(how); rename one of them", entry: shown)
            }
            seen[key] = shown
        }
        if let declaredSize, declaredSize > limits.maxEntryBytes {
            throw ArchiveError(
                .entryTooLarge, "the entry declares \(declaredSize) bytes, over the limit of \(limits.maxEntryBytes)", entry: shown)
        }
        current = (shown, declaredSize, 0)
        return ArchiveEntry(path: EntryPath(components: path.components, isDirectory: isDirectory), declaredSize: declaredSize)
    }

    /// Counts decoded bytes of the current entry against every budget; throws as soon as one is exceeded.
    public mutating func count(_ bytes: Int) throws(ArchiveError) {
        guard var entry = current else { return }
        entry.decoded += Int64(bytes)
        decodedTotal += Int64(bytes)
        current = entry
        if let declared = entry.declared, entry.decoded > declared {
            throw ArchiveError(
                .sizeMismatch, "the entry holds more than the \(declared) bytes its header declares", entry: entry.name)
        }
        if entry.decoded > limits.maxEntryBytes {
            throw ArchiveError(.entryTooLarge, "the entry decodes to more than \(limits.maxEntryBytes) bytes", entry: entry.name)
        }
        try Self.checkTotals(decodedTotal, ratioBytes: decodedTotal, of: archiveSize, limits: limits, shared: nil, entry: entry.name)
        try shared?.count(bytes)
    }

    /// Throws when `total` decoded bytes pass `maxArchiveBytes`, or when, past `ratioFloorBytes`, `ratioBytes` are more
    /// than `maxCompressionRatio` times `size`: the budgets of one archive, or (`shared`: how messages name the archive
    /// and those inside it) those the archives inside another share.
    static func checkTotals(
        _ total: Int64, ratioBytes: Int64, of size: Int64, limits: ImportLimits, shared: (whole: String, parts: String)?, entry: String?
    ) throws(ArchiveError) {
        let (subject, split) = shared.map { ("\($0.whole) and \($0.parts) decode", $0.whole) } ?? ("the archive decodes", "the pack")
        if total > limits.maxArchiveBytes {
            throw ArchiveError(.archiveTooLarge, "\(subject) to more than \(limits.maxArchiveBytes) bytes; split \(split)")
        }
        if ratioBytes > limits.ratioFloorBytes, ratioBytes / max(size, 1) > limits.maxCompressionRatio {
            throw ArchiveError(
                .compressionRatio,
                "\(subject) to over \(limits.maxCompressionRatio) times \(shared.map { "\($0.whole)'s" } ?? "its own") size "
                    + "(\(ratioBytes) bytes from \(size)); this looks like a zip bomb", entry: entry)
        }
    }

    /// Closes the current entry; throws when it held fewer bytes than declared.
    public mutating func finishEntry() throws(ArchiveError) {
        guard let entry = current else { return }
        current = nil
        if let declared = entry.declared, entry.decoded != declared {
            throw ArchiveError(
                .sizeMismatch, "the entry holds \(entry.decoded) bytes but its header declares \(declared)", entry: entry.name)
        }
    }
}
