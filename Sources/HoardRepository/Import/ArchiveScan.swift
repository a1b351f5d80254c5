import Foundation
import HoardArchive
import HoardCore
import HoardStore

/// A picture read from an archive into staging, with what its header says.
struct StagedPicture: Sendable {
    var path: EntryPath
    var blob: StagedBlob
    var info: ImageInfo
    /// The MapTool token file this picture is the image of (`path` is then the file's): it names the asset.
    var token: MapToolToken?
    /// What its header says when it is a sound (``AudioHeader``): `info` then holds its media type and no pixel size.
    var audio: AudioInfo?
}

/// The first pass of an import: every entry streamed once, pictures staged and their headers checked.
struct ArchiveScan: Sendable {
    var pictures: [StagedPicture] = []
    /// `pack.json` at the archive's root.
    var packFileBytes: [UInt8]?
    /// The first `FOLDER/pack.json`, the pack file of a pack wrapped in FOLDER.
    var wrappedPackFile: (folder: String, bytes: [UInt8])?
    /// The one top-level folder every file sits under, nil when files sit at the root or under several.
    var topFolder: String?
    var problems: [Problem] = []
    var entries = 0
    /// Files archivers and operating systems add (``isJunk(_:)``), skipped without a warning.
    var litterFiles = 0
    /// Archives inside this one (zip, Dungeondraft), staged as they are: the packs of a bundle.
    var innerArchives: [(path: EntryPath, blob: StagedBlob)] = []
    /// MapTool token files (`.rptok`), staged as they are, read after the scan (``TokenFileReading``).
    var tokenFiles: [(path: EntryPath, file: String)] = []
    /// Whether `content.xml` and `properties.xml` sit at the root: the archive is itself a MapTool file.
    var isMapToolFile: Bool { rootMapToolFiles == 2 }
    /// Whether the archive was one token file, imported as a pack of one token (``init(tokenFileAt:named:archiveSize:)``).
    var isTokenFile = false
    var rootMapToolFiles = 0
    /// Bytes decoded from every entry.
    var decodedBytes: Int64 = 0
    /// Licence, readme and credits files at the root or one folder down (the wrapper's root), staged as they are.
    var documents: [(path: EntryPath, blob: StagedBlob, mediaType: String)] = []

    /// Extensions of the archives a bundle may hold.
    static let innerArchiveExtensions: Set<String> = ["zip", "dungeondraft_pack"]
    /// Extension of MapTool token files.
    static let tokenFileExtension = "rptok"

    /// Whether this archive is a bundle: it holds archives and no picture or token file.
    var isBundle: Bool { !innerArchives.isEmpty && pictures.isEmpty && tokenFiles.isEmpty }
    var archiveSize: Int64 = 0

    /// Names that archivers add and nobody means to import.
    static func isJunk(_ path: EntryPath) -> Bool {
        let name = path.fileName
        return path.components.first == "__MACOSX" || name == ".DS_Store" || name == "Thumbs.db" || name == "desktop.ini"
            || name.hasPrefix("._")
    }

    /// What a cancelled import is refused with (``Importer/Options/isCancelled``).
    static let cancelled = ArchiveError(.importCancelled, "the import was cancelled; nothing was stored")

    /// Reads the archive at `path`; throws ``ArchiveError`` for the first container-level violation. `staged` is told
    /// of each picture as soon as it is staged and its header passed, on another thread.
    /// `shared` is the bundle's budgets when the archive is one of its packs; archives inside it are then skipped
    /// (one level of nesting), else staged for ``innerArchives``.
    static func read(
        path: String, limits: ImportLimits, into area: StagingArea, progress: (@Sendable (ImportProgress) -> Void)?,
        staged: (@Sendable (StagedPicture) -> Void)? = nil, shared: SharedBudget? = nil, stop: (@Sendable () -> Bool)? = nil
    ) throws -> ArchiveScan {
        let reader = try ArchiveFormats.open(path: path, limits: limits, shared: shared)
        let pipeline = StagingPipeline(area: area, limits: limits, staged: staged)
        do {
            return try read(reader, limits: limits, pipeline: pipeline, progress: progress, stagesArchives: shared == nil, stop: stop)
        } catch {
            pipeline.cancel()
            throw error
        }
    }

    private static func read(
        _ reader: any ArchiveReader, limits: ImportLimits, pipeline: StagingPipeline, progress: (@Sendable (ImportProgress) -> Void)?,
        stagesArchives: Bool, stop: (@Sendable () -> Bool)?
    ) throws -> ArchiveScan {
        var scan = ArchiveScan(archiveSize: reader.archiveSize)
        var lastReport = Date.distantPast
        var skipped = SkippedFiles()
        var top = PackNaming.TopFolder()
        while let entry = try reader.nextEntry() {
            if let stop, stop() { throw cancelled }
            scan.entries += 1
            if let progress, Date().timeIntervalSince(lastReport) > 0.1 {
                lastReport = Date()
                progress(ImportProgress(phase: .reading, bytesRead: reader.bytesConsumed, totalBytes: reader.archiveSize, entries: scan.entries))
            }
            if entry.path.isDirectory { continue }
            if isJunk(entry.path) {
                scan.litterFiles += 1
                continue
            }
            let components = entry.path.components
            if components == ["content.xml"] || components == ["properties.xml"] { scan.rootMapToolFiles += 1 }
            top.see(components)
            scan.topFolder = top.folder
            if components.last == PackFile.fileName, components.count <= 2 {
                if components.count == 1 {
                    scan.packFileBytes = try readSmall(reader, limit: limits.maxManifestBytes, entry: entry.path.description)
                    continue
                }
                if scan.wrappedPackFile == nil {
                    let bytes = try readSmall(reader, limit: limits.maxManifestBytes, entry: entry.path.description)
                    scan.wrappedPackFile = (components[0], bytes)
                    continue
                }
            }
            let ext = DefaultNamingConvention.splitExtension(entry.path.fileName)?.ext.lowercased() ?? ""
            guard let claimed = MediaType(fileExtension: ext) else {
                var claim: StagingPipeline.Claim?
                if components.count <= 2, let type = PackDocument.mediaType(forFileName: entry.path.fileName),
                   (entry.declaredSize ?? 0) <= Int64(limits.maxDocumentBytes) {
                    claim = .document(mediaType: type)
                } else if (stagesArchives && innerArchiveExtensions.contains(ext)) || ext == tokenFileExtension {
                    claim = .archive
                }
                guard let claim else {
                    skipped.add(entry.path)
                    continue
                }
                try pipeline.begin(entry.path, claiming: claim)
                while let block = try reader.readBlock() { try pipeline.write(block) }
                pipeline.end()
                continue
            }
            try pipeline.begin(entry.path, claiming: .picture(claimed))
            while let block = try reader.readBlock() { try pipeline.write(block) }
            pipeline.end()
        }
        let staged = try pipeline.finish()
        scan.pictures = staged.pictures
        for archive in staged.archives.sorted(by: { $0.path < $1.path }) {
            if archive.path.fileName.lowercased().hasSuffix("." + tokenFileExtension) {
                scan.tokenFiles.append((archive.path, archive.blob.path))
            } else {
                scan.innerArchives.append(archive)
            }
        }
        scan.documents = staged.documents.sorted { $0.path < $1.path }
        scan.decodedBytes = reader.decodedBytes
        if !scan.pictures.isEmpty || !scan.tokenFiles.isEmpty {
            for archive in scan.innerArchives { skipped.add(archive.path) }
        }
        scan.problems = (scan.problems + staged.problems + skipped.problems).sorted { ($0.entry ?? "", $0.code.rawValue) < ($1.entry ?? "", $1.code.rawValue) }
        progress?(ImportProgress(phase: .reading, bytesRead: reader.archiveSize, totalBytes: reader.archiveSize, entries: scan.entries))
        return scan
    }

    /// Reads a small entry whole, refusing it past `limit` with `code` (`what`: how the message names it).
    static func readSmall(
        _ reader: any ArchiveReader, limit: Int, entry: String, code: ProblemCode = .badManifest, what: String = "pack.json"
    ) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let block = try reader.readBlock() {
            bytes.append(contentsOf: block)
            if bytes.count > limit {
                throw ArchiveError(code, "\(what) is larger than \(limit) bytes", entry: entry)
            }
        }
        return bytes
    }

    /// ``checkHeader(_:isComplete:claimed:limits:)`` of a staged picture: from the first bytes its writer kept
    /// (``PicturePrefix/quick``), and only when those do not settle it, from up to ``PicturePrefix/header`` bytes
    /// read back from the file (a JPEG whose size comes after a large EXIF block).
    static func checkHeader(of writer: BlobWriter, _ blob: StagedBlob, claimed: MediaType, limits: ImportLimits) -> Result<ImageInfo, Problem> {
        let quick = checkHeader(writer.prefix, isComplete: blob.size <= Int64(writer.prefix.count), claimed: claimed, limits: limits)
        guard case .failure = quick, blob.size > Int64(writer.prefix.count), let more = try? writer.leadingBytes(PicturePrefix.header) else {
            return quick
        }
        return checkHeader(more, isComplete: blob.size <= Int64(more.count), claimed: claimed, limits: limits)
    }

    /// ``checkHeader(of:_:claimed:limits:)``, then ``checkAnimation(of:_:_:limits:)``: the checks every staged picture passes.
    static func checkPicture(of writer: BlobWriter, _ blob: StagedBlob, claimed: MediaType, limits: ImportLimits) -> Result<ImageInfo, Problem> {
        checkHeader(of: writer, blob, claimed: claimed, limits: limits).flatMap { checkAnimation(of: writer, blob, $0, limits: limits) }
    }

    /// Reads a picture's header: its type must be the one its name claims, its size within the limits.
    static func checkHeader(_ prefix: [UInt8], isComplete: Bool, claimed: MediaType, limits: ImportLimits) -> Result<ImageInfo, Problem> {
        let info: ImageInfo
        do {
            info = try ImageHeader.read(prefix, isComplete: isComplete)
        } catch {
            switch error.code {
            case .notAnImage:
                return .failure(Problem(.typeMismatch, "the name says \(claimed.label) but the bytes are not a PNG, JPEG, WebP, GIF or WebM file"))
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
        if info.width > limits.maxImageSide || info.height > limits.maxImageSide || info.width * info.height > limits.maxAnyPixels {
            return .failure(Problem(
                .imageTooLarge, "the picture is \(info.width)×\(info.height) pixels, over the limits of \(limits.maxImageSide) a side "
                    + "and \(limits.maxAnyPixels) pixels; scale it down"))
        }
        return .success(info)
    }
}

extension ArchiveScan {
    /// Reads a staged sound's header (``AudioHeader``, over the whole file mapped) and checks it against the limits:
    /// its type must be the one its name claims, its size and length within `maxAudioBytes` and `maxAudioSeconds`.
    static func checkAudio(_ blob: StagedBlob, claimed: MediaType, limits: ImportLimits) -> Result<AudioInfo, Problem> {
        guard blob.size <= limits.maxAudioBytes else {
            return .failure(Problem(
                .audioTooLarge, "the sound is \(blob.size) bytes, over the \(limits.maxAudioBytes) a sound may have (maxAudioBytes); "
                    + "split it or encode it smaller"))
        }
        let info: AudioInfo
        do {
            info = try blob.withMappedBytes { buffer in try AudioHeader.read(buffer) }
        } catch let error as AudioHeaderError {
            switch error.code {
            case .notAudio:
                return .failure(Problem(.typeMismatch, "the name says \(claimed.label) but the bytes are not a sound Hoard reads: \(error.message)"))
            case .truncated, .malformed:
                return .failure(Problem(.unreadableAudio, "the sound's header is damaged: \(error.message)"))
            }
        } catch {
            return .failure(Problem(.storageFailure, "the staged sound cannot be read back: \(error)"))
        }
        if info.mediaType != claimed, !(claimed == .webm && info.mediaType == .webmAudio) {
            return .failure(Problem(
                .typeMismatch, "the name says \(claimed.label) but the bytes are \(info.mediaType.label); rename it to .\(info.mediaType.fileExtensions[0])"))
        }
        if info.durationMs / 1000 > limits.maxAudioSeconds {
            return .failure(Problem(
                .audioTooLarge, "the sound lasts \(info.durationMs / 1000) s, over the \(limits.maxAudioSeconds) s a sound may last (maxAudioSeconds)"))
        }
        return .success(info)
    }

    /// The scan of an archive that is itself a MapTool token file (``isMapToolFile``): nothing but that one token file,
    /// named `name`, to be read as a pack's token files are. Its pictures and problems as a pack are dropped.
    init(tokenFileAt path: String, named name: String, archiveSize: Int64) {
        self.archiveSize = archiveSize
        tokenFiles = [(EntryPath(components: [name]), path)]
        isTokenFile = true
    }
}

extension MediaType {
    /// `PNG`, `JPEG`, `WebP`, `GIF`, `WebM`; `Ogg`, `MP3`, `FLAC`, `WAV`, `M4A`, `WebM audio`.
    var label: String {
        switch self {
        case .png: "PNG"
        case .jpeg: "JPEG"
        case .webp: "WebP"
        case .gif: "GIF"
        case .webm: "WebM"
        case .ogg: "Ogg"
        case .mp3: "MP3"
        case .flac: "FLAC"
        case .wav: "WAV"
        case .m4a: "M4A"
        case .webmAudio: "WebM audio"
        }
    }
}

extension ArchiveScan {
    /// Counts the frames of a staged picture that may move (``AnimationReader/needsScan(_:_:)``), reading the whole
    /// staged file, and checks them against `maxFrames` and `maxAnimationPixels` (a frame bomb).
    static func checkAnimation(of writer: BlobWriter, _ blob: StagedBlob, _ info: ImageInfo, limits: ImportLimits) -> Result<ImageInfo, Problem> {
        var info = info
        if AnimationReader.needsScan(writer.prefix, info) {
            do {
                info.animation = try blob.withMappedBytes { buffer in
                    try AnimationReader.read(buffer, info)
                }
            } catch let error as ImageHeaderError {
                return .failure(Problem(.unreadableImage, "the animation is damaged: \(error.message)"))
            } catch {
                return .failure(Problem(.storageFailure, "the staged picture cannot be read back: \(error)"))
            }
        }
        guard let frames = info.animation?.frames else { return .success(info) }
        let pixels = frames.multipliedReportingOverflow(by: info.width * info.height)
        if frames > limits.maxFrames || pixels.overflow || pixels.partialValue > limits.maxAnimationPixels {
            return .failure(Problem(
                .imageTooLarge, "the animation has \(frames) frames of \(info.width)×\(info.height) pixels, over the limits of "
                    + "\(limits.maxFrames) frames and \(limits.maxAnimationPixels) pixels in all frames (a frame bomb); shorten or shrink it"))
        }
        return .success(info)
    }
}
