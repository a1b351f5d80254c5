/// A generator, as a plugin: makes derived pictures of an asset (lower LODs, a preview, a thumbnail) from its
/// largest variant. It returns bytes; Hoard checks them (type, pixel size, allowed scale) and stores them.
///
/// Generators run once per planned asset, after naming and variant checks, in registration order. They MUST be
/// deterministic — the same source gives the same bytes — so that re-importing a pack stores nothing new, and MUST
/// NOT touch the store or the catalog.
public protocol PictureGenerator: Sendable {
    /// A unique, stable identifier, e.g. `hoard.generate-lods`; `pack.json` `plugins` turns it on or off by this id.
    var id: String { get }
    /// Whether it runs for packs whose `pack.json` does not mention it.
    var isEnabledByDefault: Bool { get }
    /// The derived pictures of `request.asset`, made from `source` (the whole file of `request.source`).
    /// Throws a `Problem` (without an entry; the caller names the source file) when the source cannot be decoded.
    func generate(_ request: GenerationRequest, source: UnsafeRawBufferPointer) throws(Problem) -> [GeneratedPicture]
}

/// What a generator is asked to derive pictures for.
public struct GenerationRequest: Sendable, Hashable {
    /// The asset as planned, with the variants the pack ships.
    public var asset: PlannedAsset
    /// The variant whose bytes are handed over: the largest one.
    public var source: AssetDescriptor.Variant
    /// The pack's pixels per tile at scale 1.
    public var tilePixels: Int

    /// Creates a request.
    public init(asset: PlannedAsset, source: AssetDescriptor.Variant, tilePixels: Int) {
        self.asset = asset
        self.source = source
        self.tilePixels = tilePixels
    }

    /// The size of the @1x picture the shipped variants imply (the base's size divided by its scale).
    public var baseSize: (width: Int, height: Int) {
        let base = asset.variants.min { $0.scale < $1.scale } ?? source
        return (max(1, base.width / base.scale), max(1, base.height / base.scale))
    }
}

/// One picture a generator made.
public struct GeneratedPicture: Sendable, Hashable {
    /// What the picture is for.
    public enum Role: Sendable, Hashable {
        /// A missing LOD of the asset, at this scale (1, 2, 3, 4 or 8).
        case variant(scale: Int)
        /// A tiny picture for a first render: about 32 px per tile.
        case preview
        /// A picture for lists on the web page, at most 256 px a side.
        case thumbnail
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
