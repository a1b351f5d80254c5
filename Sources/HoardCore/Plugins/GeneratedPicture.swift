/// One picture a generator made (or, for a sound, its ``Role/compatible`` rendition).
public struct GeneratedPicture: Sendable, Hashable {
    /// What the picture is for.
    public enum Role: Sendable, Hashable {
        /// A missing LOD of the asset, at this scale (1, 2, 3, 4 or 8).
        case variant(scale: Int)
        /// A tiny picture for a first render: about 32 px per tile.
        case preview
        /// A picture for lists on the web page, at most 256 px a side.
        case thumbnail
        /// A sound every device plays (AAC in M4A), made of a sound some cannot (Ogg, FLAC, WebM audio).
        case compatible

        /// Its name in the catalog and on the wire: `@1x` … `@8x`, `preview`, `thumbnail`, `compatible`.
        public var name: String {
            switch self {
            case .variant(let scale): "@\(scale)x"
            case .preview: "preview"
            case .thumbnail: "thumbnail"
            case .compatible: "compatible"
            }
        }

        /// The role a name names; nil for an unknown name.
        public init?(name: String) {
            switch name {
            case "preview": self = .preview
            case "thumbnail": self = .thumbnail
            case "compatible": self = .compatible
            default:
                guard name.hasPrefix("@"), name.hasSuffix("x"), let scale = Int(name.dropFirst().dropLast()),
                      AssetNaming.allowedScales.contains(scale)
                else { return nil }
                self = .variant(scale: scale)
            }
        }
    }

    /// What the picture is for.
    public var role: Role
    /// The encoded picture.
    public var bytes: [UInt8]
    /// Its type; Hoard checks the bytes agree.
    public var mediaType: MediaType

    /// Creates a generated picture.
    public init(role: Role, bytes: [UInt8], mediaType: MediaType) {
        self.role = role
        self.bytes = bytes
        self.mediaType = mediaType
    }
}
