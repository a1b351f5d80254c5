import HoardCore

/// One picture of an asset that a client may draw: the preview the server generated, or one of the variants.
///
/// Sharpness is measured in pixels per grid tile across (the picture's width over the asset's footprint width), so
/// that a 2×2 ogre and a 1×1 goblin drawn on the same grid compare: an app that draws tiles 64 device pixels wide
/// wants pictures of at least 64 pixels a tile.
public struct AssetPicture: Sendable, Hashable {
    /// The picture's blob.
    public var digest: Digest
    /// Its size in bytes.
    public var size: Int64
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Pixels per tile across: ``width`` over the footprint's width.
    public var pixelsPerTile: Double
    /// The variant's LOD scale (1, 2, 3, 4 or 8); nil for the generated preview.
    public var scale: Int?

    /// Whether it is the generated preview rather than a variant.
    public var isPreview: Bool { scale == nil }
}

extension ManifestAsset {
    /// Every picture of the asset, least sharp first: the preview (when the server made one), then the variants by
    /// scale.
    public var pictures: [AssetPicture] {
        let across = Double(max(1, footprint.width))
        var result: [AssetPicture] = []
        if let preview {
            result.append(AssetPicture(
                digest: preview.digest, size: preview.size, width: preview.width, height: preview.height,
                pixelsPerTile: Double(preview.width) / across, scale: nil))
        }
        for variant in variants.sorted(by: Self.lessSharp) {
            result.append(AssetPicture(
                digest: variant.digest, size: variant.size, width: variant.width, height: variant.height,
                pixelsPerTile: Double(variant.width) / across, scale: variant.scale))
        }
        return result
    }

    /// The lowest-scale variant (the smaller blob on a tie). Nil for an asset without variants.
    public var smallestVariant: AssetDescriptor.Variant? { variants.min(by: Self.lessSharp) }

    /// The picture to draw first: the preview when there is one, else the smallest variant — also while the server is
    /// still making the preview (``isPictureComing``): a later read of the session or listing names it. Nil for an asset
    /// without pictures.
    public var firstPicture: AssetPicture? { pictures.first }

    /// Whether the server is still making some of the asset's generated pictures (``AssetListing/pending``): its
    /// preview, thumbnail or lower LODs. Read the session (or the listing) again later to pick them up.
    public var isPictureComing: Bool { pending != nil }

    /// The picture to draw at `pixelsPerTile` device pixels a tile: the least sharp picture at least that sharp,
    /// else the sharpest there is. With nil, the default resolution: the @1x variant, the art as its author drew it
    /// (the lowest scale when there is no @1x).
    public func picture(forPixelsPerTile pixelsPerTile: Double?) -> AssetPicture? {
        Self.picture(in: pictures, forPixelsPerTile: pixelsPerTile)
    }

    /// ``picture(forPixelsPerTile:)`` among pictures already listed (``pictures``), least sharp first.
    static func picture(in pictures: [AssetPicture], forPixelsPerTile pixelsPerTile: Double?) -> AssetPicture? {
        guard let pixelsPerTile else {
            let variants = pictures.filter { !$0.isPreview }
            return variants.first { $0.scale == 1 } ?? variants.first ?? pictures.first
        }
        return pictures.first { $0.pixelsPerTile >= pixelsPerTile } ?? pictures.last
    }

    /// Lower scale first, the smaller blob on a tie.
    private static func lessSharp(_ a: AssetDescriptor.Variant, _ b: AssetDescriptor.Variant) -> Bool {
        (a.scale, a.size) < (b.scale, b.size)
    }
}
