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
