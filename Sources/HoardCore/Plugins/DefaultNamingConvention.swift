/// The default convention: kind from the nearest folder that names one, footprint from a `WxH` or a size word in the
/// file name, LOD scale from `@Sx`.
///
/// `tokens/monsters/dragon [4x4]@2x.png` → token `monsters/dragon`, 4×4, scale 2;
/// `Forest Pack/Maps/Cave_40x30.jpg` → background `Forest Pack/Cave`, 40×30.
public struct DefaultNamingConvention: NamingConvention {
    public let id = "hoard.default"

    /// Size words and the footprint side they mean.
    public static let sizeWords: [String: Int] = ["tiny": 1, "small": 1, "medium": 1, "large": 2, "huge": 3, "gargantuan": 4]

    /// Creates the convention.
    public init() {}

    public func interpret(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? {
        try interpret(path, context: context, unclaimedKind: nil)
    }

    /// Reads one picture's path; a picture in no folder that names a kind gets `unclaimedKind` (nil: not named).
    ///
    /// The kind comes from the folder nearest the file that names one (``ConventionContext/kind(forFolder:)``); the
    /// name is the other folders and the stem, joined by `/` (the outermost folder that names a kind is left out).
    public func interpret(
        _ path: EntryPath, context: ConventionContext, unclaimedKind: AssetKind?
    ) throws(Problem) -> AssetNaming? {
        guard let split = Self.splitExtension(path.fileName), MediaType(fileExtension: split.ext.lowercased()) != nil else {
            return nil
        }
        let folders = path.components.dropLast()
        var kindFolder: Int?
        var definition: (any AssetKindDefinition)?
        for index in folders.indices.reversed() {
            if let found = context.kind(forFolder: folders[index]) {
                (kindFolder, definition) = (index, found)
                break
            }
        }
        if definition == nil, let unclaimedKind {
            definition = context.definition(of: unclaimedKind)
        }
        guard let definition else { return nil }
        // The outermost folder naming a kind is a category, not part of the name (`tokens/` in `tokens/ogre.png`).
        let dropped = kindFolder.map { _ in folders.firstIndex { context.kind(forFolder: $0) != nil } } ?? nil
        let entry = path.description
        let (scaledStem, scale) = try Self.splitScale(split.stem, entry: entry)
        let marker = try Self.splitMarker(scaledStem, acceptsSizeWords: definition.acceptsSizeWords, entry: entry)
        if let footprint = marker.footprint {
            try Self.check(footprint, of: definition, entry: entry)
        }
        let kept = folders.indices.filter { $0 != dropped }.map { folders[$0] }
        var naming = AssetNaming(
            kind: definition.kind, name: (kept + [marker.stem]).joined(separator: "/"),
            footprint: marker.footprint ?? definition.defaultFootprint, scale: scale, isFootprintExplicit: marker.footprint != nil)
        let overrideKey = (path.components.dropLast() + [scaledStem]).joined(separator: "/")
        if let override = context.packFile.overrides?[overrideKey] {
            if let kind = override.kind {
                guard let overridden = context.definition(of: kind) else {
                    throw Problem(.badManifest, "pack.json overrides this file to kind '\(kind)', which no plugin provides", entry: entry)
                }
                naming.kind = kind
                if override.footprint == nil, marker.footprint != nil {
                    try Self.check(naming.footprint, of: overridden, entry: entry)
                }
            }
            naming.name = override.name ?? naming.name
            if let footprint = override.footprint {
                try Self.check(footprint, of: context.definition(of: naming.kind) ?? definition, entry: entry)
                naming.footprint = footprint
                naming.isFootprintExplicit = true
            }
        }
        guard !marker.stem.isEmpty, !naming.name.isEmpty else {
            throw Problem(.invalidName, "the file name leaves the asset without a name; add one before the suffix", entry: entry)
        }
        return naming
    }

    /// `name.ext` → (name, ext); nil without an extension.
    public static func splitExtension(_ fileName: String) -> (stem: String, ext: String)? {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return nil }
        return (String(fileName[..<dot]), String(fileName[fileName.index(after: dot)...]))
    }

    /// `stone@2x` → (stone, 2). An `@Nx` with an unsupported N is an error.
    static func splitScale(_ stem: String, entry: String) throws(Problem) -> (String, Int) {
        guard let at = stem.lastIndex(of: "@") else { return (stem, 1) }
        let suffix = stem[stem.index(after: at)...]
        guard suffix.count >= 2, suffix.last == "x" || suffix.last == "X",
              let scale = Int(suffix.dropLast()), suffix.dropLast().allSatisfy(\.isASCII)
        else { return (stem, 1) }
        guard AssetNaming.allowedScales.contains(scale) else {
            throw Problem(.badScale, "@\(scale)x is not a LOD scale; use @1x, @2x, @3x, @4x or @8x", entry: entry)
        }
        return (String(stem[..<at]), scale)
    }

    /// Refuses a footprint over the kind's largest side.
    static func check(_ footprint: Footprint, of kind: any AssetKindDefinition, entry: String) throws(Problem) {
        let most = kind.maxFootprintSide
        guard footprint.width > most || footprint.height > most else { return }
        let hint = kind.kind == .background ? "" : " (a battlemap belongs in maps/ or backgrounds/)"
        throw Problem(
            .badFootprint, "footprint \(footprint) is over \(most) tiles a side, the most a \(kind.kind) may cover\(hint)", entry: entry)
    }
}
