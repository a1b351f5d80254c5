import HoardCore

/// How an archive's pack is named: the one rule the importer files a pack under and an uploader is told beforehand
/// (``predict(_:kinds:)``, what `POST /v1/pack-name` answers the web page).
///
/// In this order, the first that names it wins: the name the uploader typed, `pack.json`'s `name` (at the root, or in
/// the one folder that holds everything), that wrapper folder (unless it is a kind's folder such as `tokens/`), the
/// archive's file name without its extension, the token of a one-token MapTool file. The winner is then made canonical
/// (``NameRule``) or refused.
public enum PackNaming {
    /// Where a pack's name comes from, in the order the sources win.
    public enum Source: String, Codable, Sendable {
        case typed, packFile, wrapperFolder, fileName, tokenFile
    }

    /// The one top-level folder every file of an archive sits under, told the files one at a time; nil when a file sits
    /// at the root or files sit under several.
    struct TopFolder {
        private(set) var folder: String?
        private var isUnderOne = true

        mutating func see(_ components: [String]) {
            guard isUnderOne else { return }
            if components.count < 2 || (folder != nil && folder != components[0]) {
                isUnderOne = false
                folder = nil
            } else if folder == nil {
                folder = components[0]
            }
        }
    }

    /// The `pack.json` that counts: the root's, else the one in the folder that holds everything; nil for none.
    static func packFileBytes(root: [UInt8]?, wrapped: (folder: String, bytes: [UInt8])?, topFolder: String?) -> [UInt8]? {
        if let root { return root }
        if let wrapped, wrapped.folder == topFolder { return wrapped.bytes }
        return nil
    }

    /// The wrapper folder stripped from every path: the top folder unless it is a kind's folder (`tokens/`).
    static func wrapper(topFolder: String?, context: ConventionContext) -> String? {
        topFolder.flatMap { context.kind(forFolder: $0) == nil ? $0 : nil }
    }

    /// The name, before it is made canonical, and where it came from; nil when nothing names the pack.
    static func name(typed: String?, packFile: PackFile, wrapper: String?, archive: String?, token: String?) -> (String, Source)? {
        let sources: [(String?, Source)] = [
            (typed, .typed), (packFile.name, .packFile), (wrapper, .wrapperFolder), (archive.map(Importer.packName(fromArchive:)), .fileName),
            (token, .tokenFile),
        ]
        return sources.lazy.compactMap { name, source in name.map { ($0, source) } }.first
    }

    /// What an uploader knows of an archive before sending it.
    public struct Facts: Codable, Sendable {
        /// The name typed for it, if any.
        public var name: String?
        /// Its file name (`scifi-outpost.zip`).
        public var fileName: String?
        /// The paths of its files (directories left out), as its listing gives them; nil when it could not be read
        /// (a tar before upload), and the prediction is then not sure.
        public var paths: [String]?
        /// The text of its `pack.json` at the root or the first one a folder down, with the path it was at.
        public var packFile: PackFileText?

        /// A `pack.json`'s path in the archive and its text.
        public struct PackFileText: Codable, Sendable {
            public var path: String
            public var text: String
        }
    }

    /// What the import would file the pack as.
    public struct Prediction: Codable, Sendable, Equatable {
        /// The name it would be filed under; nil when it would be refused (see `problem`).
        public var name: String?
        /// Where the name comes from.
        public var source: Source?
        /// Whether the archive's listing was known (`Facts.paths`): when false, its pack.json or a wrapper folder may
        /// yet name it otherwise.
        public var isSure: Bool
        /// Why it would be refused for its name, if it would.
        public var problem: String?
    }

    /// The name the import would file an archive with these facts under, by the importer's own rules.
    public static func predict(_ facts: Facts, kinds: [any AssetKindDefinition]) -> Prediction {
        var top = TopFolder()
        for path in facts.paths ?? [] where !path.hasSuffix("/") {
            let entry = EntryPath(components: path.split(separator: "/").map(String.init))
            if !ArchiveScan.isJunk(entry) { top.see(entry.components) }
        }
        var root: [UInt8]?
        var wrapped: (folder: String, bytes: [UInt8])?
        if let given = facts.packFile {
            let components = given.path.split(separator: "/").map(String.init)
            if components == [PackFile.fileName] {
                root = Array(given.text.utf8)
            } else if components.count == 2, components[1] == PackFile.fileName {
                wrapped = (components[0], Array(given.text.utf8))
            }
        }
        var packFile = PackFile()
        if let bytes = packFileBytes(root: root, wrapped: wrapped, topFolder: top.folder), case .success(let parsed) = PackFile.parse(bytes) {
            packFile = parsed
        }
        let wrapper = wrapper(topFolder: top.folder, context: ConventionContext(packFile: packFile, kinds: kinds))
        let typed = facts.name.flatMap { $0.isEmpty ? nil : $0 }
        let isSure = facts.paths != nil
        guard let (name, source) = name(typed: typed, packFile: packFile, wrapper: wrapper, archive: facts.fileName, token: nil) else {
            return Prediction(isSure: isSure, problem: "the pack has no name: add \"name\" to pack.json or type one")
        }
        switch Importer.checkPackName(name) {
        case .success(let canonical): return Prediction(name: canonical, source: source, isSure: isSure)
        case .failure(let problem): return Prediction(source: source, isSure: isSure, problem: problem.message)
        }
    }
}
