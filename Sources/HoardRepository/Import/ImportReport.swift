import Foundation
import HoardCore

/// What an import did, for people (`hoard import`) and programs (`--json`, the HTTP API).
public struct ImportReport: Sendable, Codable, Hashable {
    /// The archive's file name.
    public var archive: String
    /// The pack's name.
    public var pack: String
    /// The version recorded (or found unchanged).
    public var version: String
    /// The owning group.
    public var group: String
    /// The manifest blob of this version.
    public var manifestDigest: Digest
    /// `imported` for a new version, `unchanged` when this exact version was already there.
    public var outcome: Outcome
    /// Assets in the version.
    public var assets: Int
    /// Assets per kind.
    public var assetsByKind: [String: Int]
    /// Picture files in the version.
    public var files: Int
    /// Bytes of every blob the version references (pictures, descriptors, manifest).
    public var bytes: Int64
    /// Blobs the group did not hold before this import. Counted for the group alone (issue 43): bytes that only
    /// other groups hold count as new, so no one learns from a report what another group holds.
    public var newBlobs: Int
    /// Bytes of ``newBlobs``.
    public var newBytes: Int64
    /// Blobs the group held already (one of its packs or uploads had them).
    public var existingBlobs: Int
    /// Bytes of ``existingBlobs``.
    public var existingBytes: Int64
    /// Pictures whose bytes a picture rewriter changed (metadata stripped).
    public var rewrittenFiles: Int
    /// Pictures whose removed metadata held a GPS position.
    public var gpsFiles: Int
    /// Assets whose generated pictures (missing LODs, a preview, a thumbnail) are jobs of the rendition queue, made after
    /// the commit (`hoard jobs`); 0 when no generator applies.
    public var renditionJobs: Int
    /// Files operating systems and archivers add (`__MACOSX/`, `._*`, `.DS_Store`, `Thumbs.db`, `desktop.ini`),
    /// skipped without a warning.
    public var litterFiles: Int
    /// The one folder every file sat under, stripped from every path (and the default pack name); nil when none was.
    public var wrapperFolder: String?
    /// Warnings: per file, or per folder for files skipped or named alike.
    public var warnings: [Problem]
    /// Wall-clock time of the import.
    public var seconds: Double

    /// Whether a new version was recorded.
    public enum Outcome: String, Sendable, Codable, Hashable {
        case imported, unchanged
    }
}

/// Why an import was refused: every problem found (errors, and the warnings seen so far). Nothing was changed.
public struct ImportError: Error, Sendable, CustomStringConvertible {
    /// The archive.
    public var archive: String
    /// Every problem found; at least one is an error.
    public var problems: [Problem]
    /// Lower-level words for logs (libarchive's message, an errno string).
    public var cause: String?

    /// Creates an error.
    public init(archive: String, problems: [Problem], cause: String? = nil) {
        self.archive = archive
        self.problems = problems
        self.cause = cause
    }

    /// The errors, without the warnings.
    public var errors: [Problem] { problems.filter { $0.severity == .error } }

    /// The code of the first error: what the HTTP API answers with.
    public var code: ProblemCode { errors.first?.code ?? .storageFailure }

    public var description: String {
        let errors = self.errors
        let head = "\(archive) was refused (\(errors.count) error\(errors.count == 1 ? "" : "s")); nothing was stored"
        return ([head] + errors.map { "  " + $0.description }).joined(separator: "\n")
    }
}

/// Where an import is, for progress bars.
public struct ImportProgress: Sendable, Hashable {
    /// What the import is doing.
    public enum Phase: String, Sendable { case reading, publishing, committing }
    /// Phase.
    public var phase: Phase
    /// Archive bytes consumed.
    public var bytesRead: Int64
    /// Archive size.
    public var totalBytes: Int64
    /// Entries read so far.
    public var entries: Int
}

/// What importing one archive gave: a pack, or the packs of a bundle.
public enum ImportOutcome: Sendable {
    /// The archive was one pack.
    case pack(ImportReport)
    /// The archive was a bundle: each inner archive's result, in name order.
    case bundle([BundleMember])

    /// The reports of every pack imported.
    public var reports: [ImportReport] {
        switch self {
        case .pack(let report): [report]
        case .bundle(let members): members.compactMap { try? $0.outcome.get() }
        }
    }
}

/// One inner archive of a bundle and what importing it gave.
public struct BundleMember: Sendable {
    /// Its path inside the bundle.
    public var archive: String
    /// Its report, or why it was refused (it alone: the bundle's other packs are unaffected).
    public var outcome: Result<ImportReport, ImportError>
}

/// One archive's (or one inner archive's) outcome as `hoard import --json` prints it and a bundle upload answers it:
/// a report, or the first error and every problem.
public struct ImportResult: Sendable, Encodable {
    /// The archive as named on the command line; nil over HTTP.
    public var archive: String?
    /// For a pack of a bundle: the inner archive's path inside it.
    public var inner: String?
    /// The report of an archive imported or found unchanged.
    public var report: ImportReport?
    /// The first error of a refused archive: the HTTP error body's `code` and `message`.
    public var error: Failure?
    /// Every problem found in a refused archive, errors and warnings.
    public var problems: [Problem]?

    /// The `code` and `message` of an error.
    public struct Failure: Sendable, Encodable {
        public var code: String
        public var message: String
    }

    /// The result of importing `archive` (its `inner` archive, for a pack of a bundle).
    public init(archive: String?, inner: String?, _ outcome: Result<ImportReport, ImportError>) {
        (self.archive, self.inner) = (archive, inner)
        switch outcome {
        case .success(let report): self.report = report
        case .failure(let refusal):
            error = Failure(code: refusal.code.rawValue, message: refusal.errors.first?.message ?? "refused")
            problems = refusal.problems
        }
    }
}
