import Foundation
import HoardCore

/// The budgets the archives of a bundle share, so a bundle of bombs cannot spend them once per inner archive.
///
/// Every entry and decoded byte of every inner archive counts, with the bundle's own, against `maxEntries` and
/// `maxArchiveBytes`, whether that archive is imported or refused: a bundle costs at most what one archive may. The
/// ratio (`maxCompressionRatio`, past `ratioFloorBytes`) compares the bytes of the packs imported so far plus the one
/// being read with the bundle's size, so a bomb refused for its ratio refuses only itself.
public final class SharedBudget: @unchecked Sendable {
    /// The limits in force.
    public let limits: ImportLimits
    /// Size of the bundle's file, for the ratio.
    public let bundleSize: Int64
    /// How messages name the archive whose budgets these are and the archives inside it: ("the bundle", "its packs"),
    /// or for a pack's MapTool token files ("the pack", "its token files").
    public let names: (whole: String, parts: String)
    private let lock = NSLock()
    private var entries: Int
    private var decoded: Int64
    private var imported: Int64 = 0
    private var current: Int64 = 0

    /// A budget that has already spent `entries` and `decoded` bytes reading the bundle itself.
    public init(
        limits: ImportLimits, bundleSize: Int64, entries: Int, decoded: Int64, names: (whole: String, parts: String) = ("the bundle", "its packs")
    ) {
        self.limits = limits
        self.bundleSize = bundleSize
        self.names = names
        self.entries = entries
        self.decoded = decoded
    }

    /// Ends the inner archive being read: its bytes count toward the ratio from now on only if it was imported.
    public func finishPack(imported wasImported: Bool) {
        lock.withLock {
            if wasImported { imported += current }
            current = 0
        }
    }

    /// Counts one entry of an inner archive.
    func admitEntry() throws(ArchiveError) {
        let count = lock.withLock { entries += 1; return entries }
        if count > limits.maxEntries {
            throw ArchiveError(.tooManyEntries, "\(names.whole) and \(names.parts) hold more than \(limits.maxEntries) entries; split \(names.whole)")
        }
    }

    /// Counts decoded bytes of an inner archive.
    func count(_ bytes: Int) throws(ArchiveError) {
        let (total, forRatio) = lock.withLock {
            decoded += Int64(bytes)
            current += Int64(bytes)
            return (decoded, imported + current)
        }
        try EntryGate.checkTotals(total, ratioBytes: forRatio, of: bundleSize, limits: limits, shared: names, entry: nil)
    }
}
