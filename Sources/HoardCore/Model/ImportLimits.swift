/// Budgets that bound the time, memory and disk an import may use, whatever the archive holds.
///
/// Every field has a default suited to a home server; all can be changed by configuration. Keys are the
/// same in JSON configuration files and in `hoard import --limit KEY=VALUE`.
public struct ImportLimits: Sendable, Hashable, Codable {
    /// Most entries (files, folders, anything) one archive may hold.
    public var maxEntries: Int = 20_000
    /// Most bytes one entry may decode to.
    public var maxEntryBytes: Int64 = 512 << 20
    /// Most bytes all entries of one archive may decode to.
    public var maxArchiveBytes: Int64 = 16 << 30
    /// Most decoded bytes per archive byte, once the archive has decoded past ``ratioFloorBytes``.
    public var maxCompressionRatio: Int64 = 100
    /// Decoded bytes below which the compression ratio is not checked.
    public var ratioFloorBytes: Int64 = 64 << 20
    /// Most UTF-8 bytes in an entry's path.
    public var maxPathBytes: Int = 1024
    /// Most UTF-8 bytes in one path component.
    public var maxComponentBytes: Int = 255
    /// Most folders an entry may be nested in.
    public var maxPathDepth: Int = 16
    /// Largest picture side in pixels.
    public var maxImageSide: Int = 16_384
    /// Largest picture area in pixels, for every kind but map art (tokens, objects, textures, walls).
    public var maxImagePixels: Int = 100_000_000
    /// Largest picture area in pixels of map art (backgrounds: battlemaps of up to 16,384² pixels).
    public var maxMapPixels: Int = 16_384 * 16_384
    /// Most frames in one animated picture (GIF, APNG, animated WebP).
    public var maxFrames: Int = 1000
    /// Most pixels in all the frames of one animated picture: frames × width × height.
    public var maxAnimationPixels: Int = 1_000_000_000
    /// Largest `pack.json`.
    public var maxManifestBytes: Int = 1 << 20
    /// Largest pack document (licence, readme, credits); a larger one is skipped with a warning.
    public var maxDocumentBytes: Int = 16 << 20
    /// Largest sound file (music, ambience, effects).
    public var maxAudioBytes: Int64 = 256 << 20
    /// Longest sound file, in seconds (4 hours).
    public var maxAudioSeconds: Int = 4 * 3600
    /// Most bytes of sound in one pack.
    public var maxPackAudioBytes: Int64 = 4 << 30

    /// The defaults.
    public init() {}

    public init(from decoder: any Decoder) throws {
        let defaults = ImportLimits()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        maxEntries = try c.decodeIfPresent(Int.self, forKey: .maxEntries) ?? defaults.maxEntries
        maxEntryBytes = try c.decodeIfPresent(Int64.self, forKey: .maxEntryBytes) ?? defaults.maxEntryBytes
        maxArchiveBytes = try c.decodeIfPresent(Int64.self, forKey: .maxArchiveBytes) ?? defaults.maxArchiveBytes
        maxCompressionRatio = try c.decodeIfPresent(Int64.self, forKey: .maxCompressionRatio) ?? defaults.maxCompressionRatio
        ratioFloorBytes = try c.decodeIfPresent(Int64.self, forKey: .ratioFloorBytes) ?? defaults.ratioFloorBytes
        maxPathBytes = try c.decodeIfPresent(Int.self, forKey: .maxPathBytes) ?? defaults.maxPathBytes
        maxComponentBytes = try c.decodeIfPresent(Int.self, forKey: .maxComponentBytes) ?? defaults.maxComponentBytes
        maxPathDepth = try c.decodeIfPresent(Int.self, forKey: .maxPathDepth) ?? defaults.maxPathDepth
        maxImageSide = try c.decodeIfPresent(Int.self, forKey: .maxImageSide) ?? defaults.maxImageSide
        maxImagePixels = try c.decodeIfPresent(Int.self, forKey: .maxImagePixels) ?? defaults.maxImagePixels
        maxMapPixels = try c.decodeIfPresent(Int.self, forKey: .maxMapPixels) ?? defaults.maxMapPixels
        maxFrames = try c.decodeIfPresent(Int.self, forKey: .maxFrames) ?? defaults.maxFrames
        maxAnimationPixels = try c.decodeIfPresent(Int.self, forKey: .maxAnimationPixels) ?? defaults.maxAnimationPixels
        maxManifestBytes = try c.decodeIfPresent(Int.self, forKey: .maxManifestBytes) ?? defaults.maxManifestBytes
        maxDocumentBytes = try c.decodeIfPresent(Int.self, forKey: .maxDocumentBytes) ?? defaults.maxDocumentBytes
        maxAudioBytes = try c.decodeIfPresent(Int64.self, forKey: .maxAudioBytes) ?? defaults.maxAudioBytes
        maxAudioSeconds = try c.decodeIfPresent(Int.self, forKey: .maxAudioSeconds) ?? defaults.maxAudioSeconds
        maxPackAudioBytes = try c.decodeIfPresent(Int64.self, forKey: .maxPackAudioBytes) ?? defaults.maxPackAudioBytes
    }

    /// Sets one limit by its key, as given on a command line (`maxEntries=100`); throws a message naming the keys.
    public mutating func set(_ assignment: String) throws(ProblemMessage) {
        let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let value = Int64(parts[1]), value > 0 else {
            throw ProblemMessage("limit '\(assignment)' must be KEY=POSITIVE_INTEGER, e.g. maxEntries=5000")
        }
        switch parts[0] {
        case "maxEntries": maxEntries = Int(value)
        case "maxEntryBytes": maxEntryBytes = value
        case "maxArchiveBytes": maxArchiveBytes = value
        case "maxCompressionRatio": maxCompressionRatio = value
        case "ratioFloorBytes": ratioFloorBytes = value
        case "maxPathBytes": maxPathBytes = Int(value)
        case "maxComponentBytes": maxComponentBytes = Int(value)
        case "maxPathDepth": maxPathDepth = Int(value)
        case "maxImageSide": maxImageSide = Int(value)
        case "maxImagePixels": maxImagePixels = Int(value)
        case "maxMapPixels": maxMapPixels = Int(value)
        case "maxFrames": maxFrames = Int(value)
        case "maxAnimationPixels": maxAnimationPixels = Int(value)
        case "maxManifestBytes": maxManifestBytes = Int(value)
        case "maxDocumentBytes": maxDocumentBytes = Int(value)
        case "maxAudioBytes": maxAudioBytes = value
        case "maxAudioSeconds": maxAudioSeconds = Int(value)
        case "maxPackAudioBytes": maxPackAudioBytes = value
        default:
            let keys = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")
            throw ProblemMessage("unknown limit '\(parts[0])'; known limits: \(keys)")
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case maxEntries, maxEntryBytes, maxArchiveBytes, maxCompressionRatio, ratioFloorBytes, maxPathBytes
        case maxComponentBytes, maxPathDepth, maxImageSide, maxImagePixels, maxMapPixels, maxFrames
        case maxAnimationPixels, maxManifestBytes, maxDocumentBytes, maxAudioBytes, maxAudioSeconds, maxPackAudioBytes
    }

    /// The largest picture area any kind may have: what a picture's header is checked against before its kind is known.
    public var maxAnyPixels: Int { max(maxImagePixels, maxMapPixels) }
}

/// A plain message for a caller to show, thrown where a code would add nothing.
public struct ProblemMessage: Error, Sendable, CustomStringConvertible {
    /// What went wrong and how to fix it.
    public let description: String
    /// Wraps a message.
    public init(_ description: String) { self.description = description }
}
