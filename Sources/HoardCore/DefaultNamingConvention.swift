/// The default convention from PRODUCT.md: kind from the top folder, footprint from `_WxH`, ` [WxH]` or a
/// size word, LOD scale from `@Sx`.
///
/// `tokens/monsters/dragon [4x4]@2x.png` → token `monsters/dragon`, 4×4, scale 2.
public struct DefaultNamingConvention: NamingConvention {
    public let id = "hoard.default"

    /// Size words and the footprint side they mean.
    public static let sizeWords: [String: Int] = ["tiny": 1, "small": 1, "medium": 1, "large": 2, "huge": 3, "gargantuan": 4]

    /// Creates the convention.
    public init() {}

    public func interpret(_ path: EntryPath, context: ConventionContext) throws(Problem) -> AssetNaming? {
        guard path.components.count >= 2, let split = Self.splitExtension(path.fileName),
              MediaType(fileExtension: split.ext.lowercased()) != nil,
              let definition = context.kind(forFolder: path.components[0])
        else { return nil }
        let entry = path.description
        let (scaledStem, scale) = try Self.splitScale(split.stem, entry: entry)
        var stem = scaledStem
        var footprint: Footprint?
        (stem, footprint) = try Self.splitFootprint(stem, entry: entry)
        if footprint == nil, definition.acceptsSizeWords {
            (stem, footprint) = Self.splitSizeWord(stem)
        }
        let folders = path.components.dropFirst().dropLast()
        var naming = AssetNaming(
            kind: definition.kind, name: (folders + [stem]).joined(separator: "/"),
            footprint: footprint ?? definition.defaultFootprint, scale: scale, isFootprintExplicit: footprint != nil)
        let overrideKey = (path.components.dropLast() + [scaledStem]).joined(separator: "/")
        if let override = context.packFile.overrides?[overrideKey] {
            if let kind = override.kind {
                guard context.definition(of: kind) != nil else {
                    throw Problem(.badManifest, "pack.json overrides this file to kind '\(kind)', which no plugin provides", entry: entry)
                }
                naming.kind = kind
            }
            naming.name = override.name ?? naming.name
            if let footprint = override.footprint {
                naming.footprint = footprint
                naming.isFootprintExplicit = true
            }
        }
        guard !stem.isEmpty, !naming.name.isEmpty else {
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

    /// `ogre_2x2` or `ogre [2x2]` → (ogre, 2×2). A footprint outside 1...32 is an error.
    static func splitFootprint(_ stem: String, entry: String) throws(Problem) -> (String, Footprint?) {
        var body = Substring(stem)
        var rest: Substring
        if body.hasSuffix("]"), let open = body.lastIndex(of: "[") {
            rest = body[body.index(after: open)..<body.index(before: body.endIndex)]
            body = body[..<open]
            while body.hasSuffix(" ") { body = body.dropLast() }
        } else if let underscore = body.lastIndex(of: "_") {
            rest = body[body.index(after: underscore)...]
            body = body[..<underscore]
        } else {
            return (stem, nil)
        }
        let sides = rest.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2, sides.allSatisfy({ !$0.isEmpty && $0.count <= 6 && $0.allSatisfy(\.isASCII) }),
              let width = Int(sides[0]), let height = Int(sides[1])
        else { return (stem, nil) }
        guard let footprint = Footprint(width: width, height: height) else {
            throw Problem(
                .badFootprint, "footprint \(width)x\(height) is outside 1 to \(Footprint.maxTiles) tiles a side", entry: entry)
        }
        return (String(body), footprint)
    }

    /// `rat_tiny`, `rat-tiny`, `rat [tiny]`, `rat (tiny)` → (rat, 1×1).
    static func splitSizeWord(_ stem: String) -> (String, Footprint?) {
        let lower = stem.lowercased()
        for (word, side) in sizeWords {
            for form in ["_\(word)", "-\(word)", " [\(word)]", " (\(word))"] where lower.hasSuffix(form) {
                let body = String(stem.dropLast(form.count))
                return (body, Footprint(width: side, height: side))
            }
        }
        return (stem, nil)
    }
}
