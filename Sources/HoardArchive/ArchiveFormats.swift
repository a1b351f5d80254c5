import Foundation
import HoardCore

/// The archive readers, registered in one place: each claims files by their first bytes; libarchive (zip, tar,
/// tar.gz) reads everything no other reader claims and refuses the rest by name.
public enum ArchiveFormats {
    /// An in-process archive-reader plugin: whether it claims a file from its first bytes, and how to open it.
    public struct Format: Sendable {
        /// A stable name (`godot-pck`).
        public var id: String
        /// Whether the first bytes are this format's.
        public var claims: @Sendable ([UInt8]) -> Bool
        /// Opens a reader over the file (`shared`: the budgets of the bundle it came from).
        public var open: @Sendable (_ path: String, _ limits: ImportLimits, _ shared: SharedBudget?) throws(ArchiveError) -> any ArchiveReader
    }

    /// Formats asked before libarchive, in order.
    public static let plugins: [Format] = [
        Format(id: "godot-pck", claims: { $0.starts(with: PCKReader.magic) }, open: { path, limits, shared throws(ArchiveError) in
            try PCKReader(path: path, limits: limits, shared: shared)
        }),
    ]

    /// Opens the reader for the file at `path`: the first plugin that claims its first bytes, else libarchive.
    /// `shared` is the budgets of the bundle the file came from.
    public static func open(path: String, limits: ImportLimits, shared: SharedBudget? = nil) throws(ArchiveError) -> any ArchiveReader {
        let head = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16)).flatMap { $0 }.map(Array.init) ?? []
        if let format = plugins.first(where: { $0.claims(head) }) {
            return try format.open(path, limits, shared)
        }
        return try LibArchiveReader(path: path, limits: limits, shared: shared)
    }
}
