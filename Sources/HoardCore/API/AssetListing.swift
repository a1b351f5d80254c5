/// One asset as the server lists it, on the wire and to its clients: `hoard assets --json`, the items of
/// `GET /v1/assets` and of a session's manifest (shape in Schemas/asset-listing.schema.json). The server encodes it;
/// the client library decodes the same type (``ManifestAsset`` there).
public struct AssetListing: Sendable, Hashable, Codable {
    /// The asset's (descriptor's) digest.
    public var digest: Digest
    /// Kind.
    public var kind: AssetKind
    /// Name.
    public var name: String
    /// The pack it is listed under; in a manifest, one that holds it as the session's group sees it ("" when none).
    public var pack: String
    /// Footprint in tiles.
    public var footprint: Footprint
    /// Variants, smallest scale first.
    public var variants: [AssetDescriptor.Variant]
    /// In a session's manifest: the version of ``pack`` the asset was found in (absent in pack listings).
    public var packVersion: String?
    /// In a listing page: the generated thumbnail (at most 256 px a side), when a generator made one.
    public var thumbnail: AssetDescriptor.Rendition?
    /// In a listing page and a session's manifest: the generated preview (about 32 px a tile), when a generator made
    /// one. A client draws it first, before any variant arrives.
    public var preview: AssetDescriptor.Rendition?
    /// In a listing page and a session's manifest: a sound's rendition that every device plays (AAC in M4A, width and
    /// height 0), when a plugin made one; a client plays it when it cannot play the sound's own type.
    public var compatible: AssetDescriptor.Rendition?
    /// In a listing page: the grid its pack's art was made for, when not square (`pack.json`'s `grid`).
    public var grid: PackGrid?
    /// In a listing page and a session's manifest: the generated pictures still being made (`@1x`, `@2x`, `@4x`,
    /// `preview`, `thumbnail`; `renditions` when a generator cannot say which), absent when none is coming. Until
    /// they come a client shows the smallest variant it has; a later listing (or an `assets` event) names them.
    /// A sound's `compatible` rendition is pending the same way.
    public var pending: [String]?

    /// A listed asset.
    public init(
        digest: Digest, kind: AssetKind, name: String, pack: String = "", footprint: Footprint, variants: [AssetDescriptor.Variant],
        packVersion: String? = nil, thumbnail: AssetDescriptor.Rendition? = nil, preview: AssetDescriptor.Rendition? = nil,
        grid: PackGrid? = nil, pending: [String]? = nil, compatible: AssetDescriptor.Rendition? = nil
    ) {
        self.digest = digest
        self.kind = kind
        self.name = name
        self.pack = pack
        self.footprint = footprint
        self.variants = variants
        self.packVersion = packVersion
        self.thumbnail = thumbnail
        self.preview = preview
        self.grid = grid
        self.pending = pending
        self.compatible = compatible
    }
}
