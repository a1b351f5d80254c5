import HoardCore

/// Files an import skipped, counted per folder so that a report has one line per folder, not one per file.
struct SkippedFiles: Sendable {
    private var folders: [String: (count: Int, example: String)] = [:]

    /// Counts one skipped file.
    mutating func add(_ path: EntryPath) {
        let folder = path.components.dropLast().joined(separator: "/")
        if let seen = folders[folder] {
            folders[folder] = (seen.count + 1, seen.example)
        } else {
            folders[folder] = (1, path.fileName)
        }
    }

    /// One `IGNORED_ENTRY` warning per folder for files that are not pictures.
    var problems: [Problem] {
        problems(code: .ignoredEntry, severity: .warning, what: "not a PNG, JPEG, WebP, GIF or WebM picture nor a sound (Ogg, MP3, FLAC, WAV, M4A); skipped")
    }

    /// One problem per folder, saying `what` of its files: it names the file when it is the folder's only one, else the
    /// folder (`FOLDER/`, nil for the root) with the count and one of them.
    func problems(code: ProblemCode, severity: Severity, what: String) -> [Problem] {
        folders.sorted { $0.key < $1.key }.map { folder, seen in
            let prefix = folder.isEmpty ? "" : folder + "/"
            if seen.count == 1 {
                return Problem(code, what, entry: prefix + seen.example, severity: severity)
            }
            let place = folder.isEmpty ? "at the pack's root" : "in this folder"
            return Problem(
                code, "\(seen.count) files \(place), e.g. \(seen.example): \(what)", entry: folder.isEmpty ? nil : prefix, severity: severity)
        }
    }
}
