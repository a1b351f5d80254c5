/// A picture rewriter, as a plugin: changes a picture's bytes without decoding its pixels (metadata stripping),
/// before the picture is stored. The stored blob, and so its digest, is the rewritten one.
///
/// Rewriters run on every staged picture whose header passed, in registration order, each on the previous one's
/// output. They MUST be pure (no I/O), deterministic (same bytes in, same edit out) and MUST NOT change the
/// picture's type or pixel size.
public protocol PictureRewriter: Sendable {
    /// A unique, stable identifier, e.g. `hoard.strip-metadata`; `pack.json` `plugins` turns it on or off by this id.
    var id: String { get }
    /// Whether it runs for packs whose `pack.json` does not mention it.
    var isEnabledByDefault: Bool { get }
    /// The edit to make to a whole picture file of type `mediaType`, or nil when it has nothing to change.
    /// Throws a `Problem` (without an entry; the caller adds it) when the file breaks its format's rules.
    func rewrite(_ bytes: UnsafeRawBufferPointer, mediaType: MediaType) throws(Problem) -> PictureEdit?
}

extension PictureRewriter {
    /// Convenience for tests: the edit for a picture held in an array.
    public func rewrite(_ bytes: [UInt8], mediaType: MediaType) throws(Problem) -> PictureEdit? {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(Problem) -> PictureEdit? in try rewrite(buffer, mediaType: mediaType) }
        }
        return try result.get()
    }
}
