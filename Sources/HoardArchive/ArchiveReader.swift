import HoardCore

/// One entry of an archive whose header passed every rule: a regular file or a folder, with a safe path.
public struct ArchiveEntry: Sendable, Hashable {
    /// Its validated path.
    public var path: EntryPath
    /// The size its header declares, when it declares one.
    public var declaredSize: Int64?
}

/// Why an archive was refused: the problem (code, entry, message) and what the reading library said, if anything.
public struct ArchiveError: Error, Sendable, CustomStringConvertible {
    /// The rule that refused it.
    public var problem: Problem
    /// The underlying library's own words, for logs.
    public var cause: String?

    /// Creates an error.
    public init(_ problem: Problem, cause: String? = nil) {
        self.problem = problem
        self.cause = cause
    }

    /// Creates an error from a code and a message.
    public init(_ code: ProblemCode, _ message: String, entry: String? = nil, cause: String? = nil) {
        self.init(Problem(code, message, entry: entry), cause: cause)
    }

    public var description: String { problem.description + (cause.map { " (\($0))" } ?? "") }
}

/// An archive reader, as a plugin: streams entries one at a time, never extracting by name, never holding an
/// entry whole in memory.
///
/// Readers must apply an ``EntryGate`` to every header and every block so the same rules and budgets hold for
/// every format. A reader is used from one thread at a time.
public protocol ArchiveReader: AnyObject {
    /// Advances to the next regular file or folder; nil at the end. Throws for the first entry that breaks a rule.
    func nextEntry() throws(ArchiveError) -> ArchiveEntry?
    /// The next block of the current entry's bytes, valid until the next call; nil once the entry is done
    /// (its size and checksum then verified).
    func readBlock() throws(ArchiveError) -> UnsafeRawBufferPointer?
    /// Bytes of the archive file consumed so far, for progress.
    var bytesConsumed: Int64 { get }
    /// Size of the archive file.
    var archiveSize: Int64 { get }
    /// Bytes decoded from every entry so far.
    var decodedBytes: Int64 { get }
}
