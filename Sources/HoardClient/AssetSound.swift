import HoardCore

/// The file a client plays of an audio asset: its sound, or the server's compatible rendition of it.
public struct AssetSound: Sendable, Hashable {
    /// The blob to fetch.
    public var digest: Digest
    /// Its size in bytes.
    public var size: Int64
    /// Its media type: the sound's own, or `audio/mp4` for the rendition.
    public var mediaType: MediaType
    /// Whether it is the compatible rendition (AAC in M4A) rather than the sound the pack shipped.
    public var isCompatible: Bool
}

extension ManifestAsset {
    /// What to play of an audio asset on a device that plays the types `canPlay` says yes to: the sound itself when it
    /// can, else its ``AssetListing/compatible`` rendition (AAC in M4A, made for Ogg, FLAC and WebM sounds), else the
    /// sound anyway (the rendition may still be coming: ``isPictureComing``). Nil for an asset without variants.
    public func sound(canPlay: (MediaType) -> Bool) -> AssetSound? {
        guard let shipped = variants.first else { return nil }
        if let compatible, !canPlay(shipped.mediaType) {
            return AssetSound(digest: compatible.digest, size: compatible.size, mediaType: compatible.mediaType, isCompatible: true)
        }
        return AssetSound(digest: shipped.digest, size: shipped.size, mediaType: shipped.mediaType, isCompatible: false)
    }
}
