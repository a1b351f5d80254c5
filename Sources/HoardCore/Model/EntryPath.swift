/// A path inside an archive that passed ``EntryPathPolicy``: relative, UTF-8, no `..`, safe to show and to use
/// as a key. It is never used to create a file.
public struct EntryPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The components, without empty or `.` ones.
    public let components: [String]
    /// Whether the archive marked it as a folder.
    public let isDirectory: Bool

    /// The components joined by `/`.
    public var description: String { components.joined(separator: "/") }
    /// The last component.
    public var fileName: String { components.last ?? "" }

    /// The key two paths collide under: canonical Unicode equivalence (Swift's `String` equality) after case folding.
    public var collisionKey: String { description.uppercased().lowercased() }

    public static func < (lhs: EntryPath, rhs: EntryPath) -> Bool { lhs.description < rhs.description }

    /// Builds a path from already-validated components (for conventions and tests).
    public init(components: [String], isDirectory: Bool = false) {
        self.components = components
        self.isDirectory = isDirectory
    }
}

/// The rules an entry name must pass before anything else looks at it.
public struct EntryPathPolicy: Sendable {
    /// The limits that bound names.
    public var limits: ImportLimits

    /// A policy with these limits.
    public init(limits: ImportLimits = ImportLimits()) { self.limits = limits }

    /// Checks raw name bytes as stored in the archive; returns the safe path or the problem that refuses it.
    ///
    /// `legacyEncoding` is the archive format's own encoding for names it does not mark as UTF-8 (CP437 for a zip
    /// entry without its UTF-8 flag): a name that is valid UTF-8 is read as UTF-8 (what macOS and most tools write),
    /// any other is read in the legacy encoding. Without one, a name that is not UTF-8 is refused.
    public func validate(_ raw: [UInt8], legacyEncoding: LegacyNameEncoding? = nil) -> Result<EntryPath, Problem> {
        let decoded = String(validating: raw, as: UTF8.self) ?? legacyEncoding.map { $0.decode(raw) }
        guard let name = decoded else {
            let shown = String(decoding: raw, as: UTF8.self)
            return .failure(Problem(.invalidName, "the name is not valid UTF-8; rename it with a UTF-8 name", entry: shown))
        }
        if let bad = name.unicodeScalars.first(where: Self.isForbidden) {
            let code = String(bad.value, radix: 16, uppercase: true)
            return .failure(Problem(
                .invalidName, "the name holds the control or bidirectional character U+\(code); remove it", entry: escaped(name)))
        }
        // Separators are found in the bytes, not among Characters: a Prepend character (U+0600…U+0605) or a combining
        // mark makes one grapheme of itself and a "/" or "\\" next to it, which Character matching would not see.
        let slash = UInt8(ascii: "/")
        if name.utf8.contains(UInt8(ascii: "\\")) {
            return .failure(Problem(.unsafePath, "backslashes are not allowed in names; use / between folders", entry: name))
        }
        if name.utf8.first == slash {
            return .failure(Problem(.unsafePath, "absolute paths are not allowed; store paths relative to the pack", entry: name))
        }
        let scalars = Array(name.unicodeScalars.prefix(2))
        if scalars.count == 2, scalars[1] == ":", scalars[0].isASCII, scalars[0].properties.isAlphabetic {
            return .failure(Problem(.unsafePath, "drive letters are not allowed; store paths relative to the pack", entry: name))
        }
        let byteCount = name.utf8.count
        if byteCount > limits.maxPathBytes {
            return .failure(Problem(.nameTooLong, "the path is \(byteCount) bytes, over the limit of \(limits.maxPathBytes)", entry: name))
        }
        let isDirectory = name.utf8.last == slash
        var components: [String] = []
        for bytes in name.utf8.split(separator: slash, omittingEmptySubsequences: true) {
            let part = String(decoding: bytes, as: UTF8.self)
            if part == "." { continue }
            if part == ".." {
                return .failure(Problem(.unsafePath, "'..' would leave the pack; remove it from the path", entry: name))
            }
            if part.utf8.count > limits.maxComponentBytes {
                return .failure(Problem(
                    .nameTooLong, "a name part is \(part.utf8.count) bytes, over the limit of \(limits.maxComponentBytes)", entry: name))
            }
            components.append(String(part))
        }
        guard !components.isEmpty else {
            return .failure(Problem(.unsafePath, "the path names no file", entry: name))
        }
        if components.count - 1 > limits.maxPathDepth {
            return .failure(Problem(
                .pathTooDeep, "the path is \(components.count - 1) folders deep, over the limit of \(limits.maxPathDepth)", entry: name))
        }
        return .success(EntryPath(components: components, isDirectory: isDirectory))
    }

    /// C0 and C1 controls, DEL, and the characters that reorder text (bidi embeddings, overrides, isolates, marks).
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private func escaped(_ name: String) -> String {
        String(name.unicodeScalars.map { Self.isForbidden($0) ? "?" : Character($0) })
    }
}
