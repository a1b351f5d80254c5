import Foundation
import HoardArchive
import HoardCore
import HoardStore

/// A picture read from an archive into staging, with what its header says.
struct StagedPicture: Sendable {
    var path: EntryPath
    var blob: StagedBlob
    var info: ImageInfo
}

/// The first pass of an import: every entry streamed once, pictures staged and their headers checked.
struct ArchiveScan: Sendable {
    var pictures: [StagedPicture] = []
    var packFileBytes: [UInt8]?
    var problems: [Problem] = []
    var entries = 0
    var archiveSize: Int64 = 0

    /// Names that archivers add and nobody means to import.
    static func isJunk(_ path: EntryPath) -> Bool {
        let name = path.fileName
        return path.components.first == "__MACOSX" || name == ".DS_Store" || name == "Thumbs.db" || name == "desktop.ini"
            || name.hasPrefix("._")
    }

    /// Reads the archive at `path`; throws ``ArchiveError`` for the first container-level violation. `staged` is told
    /// of each picture as soon as it is staged and its header passed, on another thread.
    static func read(
        path: String, limits: ImportLimits, into area: StagingArea, progress: (@Sendable (ImportProgress) -> Void)?,
        staged: (@Sendable (StagedPicture) -> Void)? = nil
    ) throws -> ArchiveScan {
        let reader = try ArchiveFormats.open(path: path, limits: limits)
        let pipeline = StagingPipeline(area: area, limits: limits, staged: staged)
        do {
            return try read(reader, limits: limits, pipeline: pipeline, progress: progress)
        } catch {
            pipeline.cancel()
            throw error
        }
    }

    private static func read(
        _ reader: any ArchiveReader, limits: ImportLimits, pipeline: StagingPipeline, progress: (@Sendable (ImportProgress) -> Void)?
    ) throws -> ArchiveScan {
        var scan = ArchiveScan(archiveSize: reader.archiveSize)
        var lastReport = Date.distantPast
        while let entry = try reader.nextEntry() {
            scan.entries += 1
            if let progress, Date().timeIntervalSince(lastReport) > 0.1 {
                lastReport = Date()
                progress(ImportProgress(phase: .reading, bytesRead: reader.bytesConsumed, totalBytes: reader.archiveSize, entries: scan.entries))
            }
            if entry.path.isDirectory || isJunk(entry.path) { continue }
            let shown = entry.path.description
            if entry.path.components == [PackFile.fileName] {
                scan.packFileBytes = try readSmall(reader, limit: limits.maxManifestBytes, entry: shown)
                continue
            }
            let ext = DefaultNamingConvention.splitExtension(entry.path.fileName)?.ext.lowercased() ?? ""
            guard let claimed = MediaType(fileExtension: ext) else {
                scan.problems.append(Problem(.ignoredEntry, "not a PNG, JPEG or WebP picture; skipped", entry: shown, severity: .warning))
                continue
            }
            try pipeline.begin(entry.path, claiming: claimed)
            while let block = try reader.readBlock() { try pipeline.write(block) }
            pipeline.end()
        }
        let staged = try pipeline.finish()
        scan.pictures = staged.pictures
        scan.problems = (scan.problems + staged.problems).sorted { ($0.entry ?? "", $0.code.rawValue) < ($1.entry ?? "", $1.code.rawValue) }
        progress?(ImportProgress(phase: .reading, bytesRead: reader.archiveSize, totalBytes: reader.archiveSize, entries: scan.entries))
        return scan
    }

    /// Reads a small entry whole, refusing it past `limit`.
    private static func readSmall(_ reader: any ArchiveReader, limit: Int, entry: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let block = try reader.readBlock() {
            bytes.append(contentsOf: block)
            if bytes.count > limit {
                throw ArchiveError(.badManifest, "pack.json is larger than \(limit) bytes", entry: entry)
            }
        }
        return bytes
    }

    /// ``checkHeader(_:isComplete:claimed:limits:)`` of a staged picture: from the first bytes its writer kept
    /// (``Importer/quickPrefix``), and only when those do not settle it, from up to ``Importer/headerPrefix`` bytes
    /// read back from the file (a JPEG whose size comes after a large EXIF block).
    static func checkHeader(of writer: BlobWriter, _ blob: StagedBlob, claimed: MediaType, limits: ImportLimits) -> Result<ImageInfo, Problem> {
        let quick = checkHeader(writer.prefix, isComplete: blob.size <= Int64(writer.prefix.count), claimed: claimed, limits: limits)
        guard case .failure = quick, blob.size > Int64(writer.prefix.count), let more = try? writer.leadingBytes(Importer.headerPrefix) else {
            return quick
        }
        return checkHeader(more, isComplete: blob.size <= Int64(more.count), claimed: claimed, limits: limits)
    }

    /// Reads a picture's header: its type must be the one its name claims, its size within the limits.
    static func checkHeader(_ prefix: [UInt8], isComplete: Bool, claimed: MediaType, limits: ImportLimits) -> Result<ImageInfo, Problem> {
        let info: ImageInfo
        do {
            info = try ImageHeader.read(prefix, isComplete: isComplete)
        } catch {
            switch error.code {
            case .notAnImage:
                return .failure(Problem(.typeMismatch, "the name says \(claimed.label) but the bytes are not a PNG, JPEG or WebP picture"))
            case .truncated where !isComplete:
                return .failure(Problem(.unreadableImage, "no picture size in the first \(prefix.count) bytes: \(error.message)"))
            case .truncated, .malformed:
                return .failure(Problem(.unreadableImage, "the picture's header is damaged: \(error.message)"))
            }
        }
        if info.mediaType != claimed {
            return .failure(Problem(
                .typeMismatch, "the name says \(claimed.label) but the bytes are a \(info.mediaType.label); rename it to .\(info.mediaType.fileExtensions[0])"))
        }
        if info.width > limits.maxImageSide || info.height > limits.maxImageSide || info.width * info.height > limits.maxImagePixels {
            return .failure(Problem(
                .imageTooLarge, "the picture is \(info.width)×\(info.height) pixels, over the limits of \(limits.maxImageSide) a side "
                    + "and \(limits.maxImagePixels) pixels; scale it down"))
        }
        return .success(info)
    }
}

extension MediaType {
    /// `PNG`, `JPEG`, `WebP`.
    var label: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .webp: "WebP"
        }
    }
}
