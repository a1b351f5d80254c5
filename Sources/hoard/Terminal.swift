import Foundation
import HoardCore
import HoardRepository

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Output to the terminal: one line at a time, standard output for results, standard error for diagnostics.
enum Terminal {
    static func out(_ text: String) {
        print(text)
        fflush(nil)
    }

    static func err(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Whether standard error is a terminal (progress bars are drawn only then).
    static var isInteractive: Bool { isatty(STDERR_FILENO) != 0 }
}

/// JSON for `--json`: sorted keys, pretty, ISO 8601 dates.
enum JSONOutput {
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// Human sizes: 1.2 MB (powers of 1000, as file managers show).
enum ByteFormat {
    static func string(_ bytes: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}

/// Left-aligned columns.
enum Table {
    static func render(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        var widths = Array(repeating: 0, count: first.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

/// A progress bar on standard error, drawn only when it is a terminal, at most ten times a second.
final class ProgressBar: @unchecked Sendable {
    enum Unit { case bytes, count }
    private let label: String
    private let lock = NSLock()
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(label: String) { self.label = label }

    func update(_ progress: ImportProgress) {
        update(done: progress.bytesRead, total: progress.totalBytes, unit: .bytes, note: progress.phase == .reading
               ? "\(progress.entries) entries" : progress.phase.rawValue)
    }

    func update(done: Int64, total: Int64, unit: Unit, note: String = "") {
        guard Terminal.isInteractive else { return }
        lock.withLock {
            let now = Date()
            guard now.timeIntervalSince(lastDraw) >= 0.1 || done >= total else { return }
            lastDraw = now
            drawn = true
            let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let amounts = unit == .bytes ? "\(ByteFormat.string(done))/\(ByteFormat.string(total))" : "\(done)/\(total)"
            let line = "\r\(label) \(bar) \(Int(fraction * 100))% \(amounts) \(note)"
            FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
        }
    }

    func finish() {
        lock.withLock {
            if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            drawn = false
        }
    }
}

/// The words `hoard import` prints.
enum ReportText {
    static func imported(_ report: ImportReport) -> String {
        var lines: [String] = []
        let verb = report.outcome == .imported ? "Imported" : "Unchanged:"
        lines.append("\(verb) \(report.pack) \(report.version) (group \(report.group)) from \(report.archive) in "
            + String(format: "%.2f s", report.seconds))
        let kinds = report.assetsByKind.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)\($0.value == 1 ? "" : "s")" }
        lines.append("  \(report.assets) assets: \(kinds.joined(separator: ", "))")
        lines.append("  \(report.files) files, \(ByteFormat.string(report.bytes)) in all: \(report.newBlobs) new blobs "
            + "(\(ByteFormat.string(report.newBytes))), \(report.existingBlobs) already stored (\(ByteFormat.string(report.existingBytes)))")
        if report.rewrittenFiles > 0 {
            lines.append("  metadata removed from \(report.rewrittenFiles) file\(report.rewrittenFiles == 1 ? "" : "s"); "
                + "\(report.gpsFiles) carried a GPS position")
        }
        if report.renditionJobs > 0 {
            lines.append("  generated pictures (LODs, previews, thumbnails) of \(report.renditionJobs) asset\(report.renditionJobs == 1 ? "" : "s") queued")
        }
        lines.append("  manifest \(report.manifestDigest)")
        if !report.warnings.isEmpty {
            lines.append("  \(report.warnings.count) warning\(report.warnings.count == 1 ? "" : "s"):")
            lines += grouped(report.warnings).map { "    \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    /// Problems one line each, the same problem on several files one line that counts them as the web page's report
    /// does (`FOOTPRINT_MISMATCH 45 files (a.png, b.png, c.png and 42 more): …`), in the order each first came.
    static func grouped(_ problems: [Problem]) -> [String] {
        var entries: [String: [String]] = [:]
        var order: [(key: String, problem: Problem)] = []
        for problem in problems {
            let key = "\(problem.severity)\u{0}\(problem.code.rawValue)\u{0}\(problem.message)"
            if entries[key] == nil { order.append((key, problem)) }
            entries[key, default: []].append(problem.entry ?? "the archive")
        }
        return order.map { key, problem in
            let files = entries[key] ?? []
            guard files.count > 1 else { return problem.description }
            let named = files.prefix(3).joined(separator: ", ") + (files.count > 3 ? " and \(files.count - 3) more" : "")
            return "\(problem.code.rawValue) \(files.count) files (\(named)): \(problem.message)"
        }
    }

    static func refused(_ error: ImportError) -> String {
        var lines = ["error: \(error.archive) was refused; nothing was stored."]
        lines += grouped(error.errors).map { "  \($0)" }
        let warnings = error.problems.filter { $0.severity == .warning }
        if !warnings.isEmpty {
            lines.append("  and \(warnings.count) warning\(warnings.count == 1 ? "" : "s"):")
            lines += grouped(warnings).map { "    \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}
