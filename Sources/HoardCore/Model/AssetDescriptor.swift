/// The JSON that describes one asset; its digest is the asset's digest, so one digest pins the art and every variant.
///
/// Encoded with ``CanonicalJSON``: the same asset always gives the same bytes.
public struct AssetDescriptor: Sendable, Hashable, Codable {
    /// The schema tag of this shape.
    public static let schemaID = "hoard.asset/v1"

    /// Always ``schemaID``.
    public var schema: String = Self.schemaID
    /// The kind.
    public var kind: AssetKind
    /// The name; with the kind and footprint it identifies the asset in a pack (`door` 1×2 and `door` 2×1 are two).
    public var name: String
    /// Grid footprint in tiles.
    public var footprint: Footprint
    /// The same picture at several resolutions, smallest scale first.
    public var variants: [Variant]
    /// A tiny picture for a first render, about 32 px per tile; generated, absent when no generator made one.
    public var preview: Rendition?
    /// A picture for lists on the web page, at most 256 px a side; generated, absent when no generator made one.
    public var thumbnail: Rendition?

    /// One resolution of the picture.
    public struct Variant: Sendable, Hashable, Codable {
        /// LOD scale: 1, 2, 3, 4 or 8.
        public var scale: Int
        /// The picture's blob.
        public var digest: Digest
        /// Width in pixels (0 for a sound).
        public var width: Int
        /// Height in pixels (0 for a sound).
        public var height: Int
        /// Size of the blob in bytes.
        public var size: Int64
        /// Its media type.
        public var mediaType: MediaType
        /// A sound's codec, as ffprobe names it (`vorbis`, `opus`, `mp3`, `flac`, `pcm_s16le`, `aac`…); absent for a picture.
        public var codec: String?
        /// A sound's channels; absent for a picture.
        public var channels: Int?
        /// A sound's samples a second; absent for a picture.
        public var sampleRate: Int?
        /// Whether Hoard generated it rather than the pack author shipping it (absent when shipped).
        public var generated: Bool?
        /// True when it moves: an animated GIF, APNG or WebP, or a WebM video (absent for a still picture).
        public var animated: Bool?
        /// Its frame count, when animated and counted (GIF, APNG, WebP).
        public var frames: Int?
        /// Its total duration in milliseconds, when animated and declared, and always for a sound.
        public var durationMs: Int?

        /// Creates a variant; `animation` sets ``animated``, ``frames`` and ``durationMs``.
        public init(
            scale: Int, digest: Digest, width: Int, height: Int, size: Int64, mediaType: MediaType, generated: Bool? = nil,
            animation: Animation? = nil
        ) {
            self.scale = scale
            self.digest = digest
            self.width = width
            self.height = height
            self.size = size
            self.mediaType = mediaType
            self.generated = generated
            self.animated = animation.map { _ in true }
            self.frames = animation?.frames
            self.durationMs = animation?.durationMs
        }

        /// A sound's only variant (scale 1, no pixel size) from what its header says.
        public init(digest: Digest, size: Int64, audio: AudioInfo) {
            self.init(scale: 1, digest: digest, width: 0, height: 0, size: size, mediaType: audio.mediaType)
            codec = audio.codec
            channels = audio.channels
            sampleRate = audio.sampleRate
            durationMs = audio.durationMs
        }

        /// Whether it moves.
        public var isAnimated: Bool { animated == true }
    }

    /// A generated picture that is not a LOD (a preview or a thumbnail), or a sound's compatible rendition (width and
    /// height 0).
    public struct Rendition: Sendable, Hashable, Codable {
        /// The picture's blob.
        public var digest: Digest
        /// Width in pixels (0 for a sound).
        public var width: Int
        /// Height in pixels (0 for a sound).
        public var height: Int
        /// Size of the blob in bytes.
        public var size: Int64
        /// Its media type.
        public var mediaType: MediaType

        /// Creates a rendition.
        public init(digest: Digest, width: Int, height: Int, size: Int64, mediaType: MediaType) {
            self.digest = digest
            self.width = width
            self.height = height
            self.size = size
            self.mediaType = mediaType
        }
    }

    /// Creates a descriptor; variants are sorted by scale.
    public init(
        kind: AssetKind, name: String, footprint: Footprint, variants: [Variant], preview: Rendition? = nil, thumbnail: Rendition? = nil
    ) {
        self.kind = kind
        self.name = name
        self.footprint = footprint
        self.variants = variants.sorted { $0.scale < $1.scale }
        self.preview = preview
        self.thumbnail = thumbnail
    }

    /// The preview and the thumbnail, when present.
    public var renditions: [Rendition] { [preview, thumbnail].compactMap { $0 } }
}

/// The JSON that describes one version of a pack: its metadata and every asset by digest.
public struct PackManifest: Sendable, Hashable, Codable {
    /// The schema tag of this shape.
    public static let schemaID = "hoard.pack/v1"

    /// Always ``schemaID``.
    public var schema: String = Self.schemaID
    /// Pack name.
    public var name: String
    /// Pack version.
    public var version: String
    /// Who made the art.
    public var author: String?
    /// Licence.
    public var license: String?
    /// A sentence about the pack.
    public var description: String?
    /// Pixels per tile at scale 1.
    public var tilePixels: Int
    /// The grid the art was made for, when not square (absent: square, so a square pack's manifest keeps its bytes).
    public var grid: PackGrid?
    /// Every asset, sorted by kind, name, then digest.
    public var assets: [Entry]
    /// The licence, readme and credits files at the pack's root, by name; absent when there are none.
    public var documents: [PackDocument]?

    /// One asset of the pack.
    public struct Entry: Sendable, Hashable, Codable {
        /// The asset's descriptor digest.
        public var digest: Digest
        /// Its kind.
        public var kind: AssetKind
        /// Its name.
        public var name: String

        /// Creates an entry.
        public init(digest: Digest, kind: AssetKind, name: String) {
            self.digest = digest
            self.kind = kind
            self.name = name
        }
    }

    /// Creates a manifest; assets are sorted by kind then name, documents by name.
    public init(name: String, version: String, packFile: PackFile, assets: [Entry], documents: [PackDocument] = []) {
        self.name = name
        self.version = version
        self.author = packFile.author
        self.license = packFile.license
        self.description = packFile.description
        self.tilePixels = packFile.effectiveTilePixels
        self.grid = packFile.effectiveGrid.isHex ? packFile.grid : nil
        self.assets = assets.sorted { ($0.kind, $0.name, $0.digest) < ($1.kind, $1.name, $1.digest) }
        self.documents = documents.isEmpty ? nil : documents.sorted { $0.name < $1.name }
    }
}
