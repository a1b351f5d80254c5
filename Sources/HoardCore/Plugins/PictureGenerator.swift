/// A generator, as a plugin: makes derived pictures of an asset (lower LODs, a preview, a thumbnail) from its
/// largest variant. It returns bytes; Hoard checks them (type, pixel size, allowed scale) and stores them.
///
/// Generators run once per planned asset, in registration order, in a rendition job after the pack's import committed
/// (HoardRepository's `RenditionJobs`): the job's key is the source picture's digest and the generators' recipes,
/// so a picture two packs hold is rendered once. They MUST be deterministic — the same source and recipe give the same
/// bytes — so that a job run twice stores nothing new, and MUST NOT touch the store or the catalog.
public protocol PictureGenerator: Sendable {
    /// A unique, stable identifier, e.g. `hoard.generate-lods`; `pack.json` `plugins` turns it on or off by this id.
    var id: String { get }
    /// Whether it runs for packs whose `pack.json` does not mention it.
    var isEnabledByDefault: Bool { get }
    /// The derived pictures of `request.asset`, made from `source` (the whole file of `request.source`).
    /// Throws a `Problem` (without an entry; the caller names the source file) when the source cannot be decoded.
    func generate(_ request: GenerationRequest, source: UnsafeRawBufferPointer) throws(Problem) -> [GeneratedPicture]
    /// What ``generate(_:source:)`` would make of `request`, as a recipe: nil when it makes nothing (no job is queued
    /// for it). Equal recipes of the same source MUST give the same pictures; a change to what the generator makes
    /// MUST change its recipes (a version in them), so that new jobs are made rather than old results reused.
    func recipe(for request: GenerationRequest) -> GenerationRecipe?
    /// Whether it is handed sources of this type at all: by default pictures only, never a sound. A generator that
    /// makes a sound's ``GeneratedPicture/Role/compatible`` rendition says yes to the sounds it converts.
    func accepts(_ source: MediaType) -> Bool
}

/// What a generator will make of one request, before it runs: a key that, with the source's digest, names the job,
/// and the roles of the pictures it expects to make (what the listing says is still coming).
public struct GenerationRecipe: Sendable, Hashable {
    /// Equal for equal work: whatever of the request the output depends on besides the source's bytes.
    public var key: String
    /// The pictures expected (empty when the generator cannot say).
    public var roles: [GeneratedPicture.Role]

    /// Creates a recipe.
    public init(key: String, roles: [GeneratedPicture.Role]) {
        self.key = key
        self.roles = roles
    }
}

extension PictureGenerator {
    /// Pictures, never sounds.
    public func accepts(_ source: MediaType) -> Bool { !source.isAudio }

    /// The generator's id and the digest of the whole request (kind, name, footprint, every shipped variant, pixels
    /// per tile): a generator whose output depends on less may say so with a narrower recipe, and share more work.
    public func recipe(for request: GenerationRequest) -> GenerationRecipe? {
        GenerationRecipe(key: wholeRequestKey(request), roles: [])
    }

    /// The default recipe's key: the generator's id and the digest of the whole request.
    public func wholeRequestKey(_ request: GenerationRequest) -> String {
        let bytes = (try? CanonicalJSON.encode(request)) ?? []
        return "\(id) \(BlobHasher.digest(of: bytes))"
    }
}
