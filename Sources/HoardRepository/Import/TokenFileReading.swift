import Foundation
import HoardArchive
import HoardCore
import HoardStore

/// Reads a pack's MapTool token files (`.rptok`) after its scan: each is a zip whose `content.xml` names the token and
/// its image (``MapToolToken``). The image is staged and checked like any picture, and carries the token, which names
/// the asset (``PackPlanner``).
///
/// A token file is an archive inside the pack: it passes its own ``EntryGate`` and spends the pack's (or its bundle's)
/// ``SharedBudget``. Whatever is wrong with one token file is one error problem naming it; the others are still read.
struct TokenFileReading: Sendable {
    let area: StagingArea
    let limits: ImportLimits
    let budget: SharedBudget
    /// Whether `budget` is this pack's own rather than its bundle's: each token file then ends as a bundle's pack does.
    let ownsBudget: Bool
    /// Told of each image staged, as the scan tells of pictures.
    let staged: (@Sendable (StagedPicture) -> Void)?

    /// Reads every token file in turn: the images staged and the problems found. Throws only when staging fails.
    func read(_ files: [(path: EntryPath, file: String)]) throws -> (pictures: [StagedPicture], problems: [Problem]) {
        var pictures: [StagedPicture] = [], problems: [Problem] = []
        for file in files {
            let result = try read(file.path, at: file.file)
            switch result {
            case .success(let picture):
                pictures.append(picture)
                staged?(picture)
            case .failure(let problem): problems.append(problem)
            }
            if ownsBudget { budget.finishPack(imported: (try? result.get()) != nil) }
        }
        return (pictures, problems)
    }

    /// What one token file holds, as its entries are read: `content.xml`, the image descriptors and the images, by
    /// MD5 key and then extension.
    private struct Contents {
        var content: [UInt8]?
        var descriptors: [String: [UInt8]] = [:]
        var images: [String: [String: (writer: BlobWriter, blob: StagedBlob)]] = [:]
    }

    private func read(_ path: EntryPath, at file: String) throws -> Result<StagedPicture, Problem> {
        let shown = path.description
        func refused(_ message: String, code: ProblemCode = .badTokenFile) -> Result<StagedPicture, Problem> {
            .failure(Problem(code, "the MapTool token file \(message)", entry: shown))
        }
        let contents: Contents
        do {
            contents = try entries(of: file)
        } catch let error as ArchiveError {
            let inner = error.problem.entry.map { " at \($0)" } ?? ""
            return refused("is refused\(inner): \(error.problem.message)", code: error.problem.code)
        }
        guard let content = contents.content else { return refused("holds no content.xml") }
        let token: MapToolToken
        do {
            token = try MapToolToken.parse(contentXML: content)
        } catch {
            return refused("cannot be read, content.xml (byte \(error.offset)): \(error.message)")
        }
        var fileExtension: String?
        if let descriptor = contents.descriptors[token.imageID] {
            do {
                fileExtension = try MapToolToken.parse(assetXML: descriptor)
            } catch {
                return refused("cannot be read, assets/\(token.imageID): \(error.message)")
            }
        }
        if let fileExtension, MediaType(fileExtension: fileExtension) == nil {
            return refused("shows a .\(fileExtension) image; Hoard reads PNG, JPEG, WebP and GIF pictures")
        }
        let candidates = contents.images[token.imageID] ?? [:]
        let chosen = fileExtension.flatMap { candidates[$0] == nil ? nil : $0 } ?? candidates.keys.min()
        guard let chosen, let staged = candidates[chosen], let claimed = MediaType(fileExtension: chosen) else {
            return refused("does not hold the image its token shows (assets/\(token.imageID).\(fileExtension ?? "png"))")
        }
        switch ArchiveScan.checkPicture(of: staged.writer, staged.blob, claimed: claimed, limits: limits) {
        case .success(let info): return .success(StagedPicture(path: path, blob: staged.blob, info: info, token: token))
        case .failure(let problem): return .failure(Problem(problem.code, "the token's image: \(problem.message)", entry: shown))
        }
    }

    /// Reads the entries of one token file that matter; pictures under `assets/` are staged, the rest skipped.
    private func entries(of file: String) throws -> Contents {
        var contents = Contents()
        let reader = try ArchiveFormats.open(path: file, limits: limits, shared: budget)
        while let entry = try reader.nextEntry() {
            let parts = entry.path.components
            guard !entry.path.isDirectory else { continue }
            if parts == ["content.xml"] {
                contents.content = try ArchiveScan.readSmall(
                    reader, limit: limits.maxDocumentBytes, entry: "content.xml", code: .badTokenFile, what: "content.xml")
                continue
            }
            guard parts.count == 2, parts[0] == "assets" else { continue }
            guard let split = DefaultNamingConvention.splitExtension(parts[1]) else {
                contents.descriptors[parts[1].lowercased()] = try ArchiveScan.readSmall(
                    reader, limit: limits.maxManifestBytes, entry: entry.path.description, code: .badTokenFile, what: "an image descriptor")
                continue
            }
            let fileExtension = split.ext.lowercased()
            guard MediaType(fileExtension: fileExtension) != nil else { continue }
            let writer = try area.makeWriter(keepingPrefix: PicturePrefix.quick)
            while let block = try reader.readBlock() { try writer.write(block) }
            contents.images[split.stem.lowercased(), default: [:]][fileExtension] = (writer, try writer.finish())
        }
        return contents
    }
}
