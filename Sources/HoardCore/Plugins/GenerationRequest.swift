/// What a generator is asked to derive pictures for.
public struct GenerationRequest: Sendable, Hashable, Codable {
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
