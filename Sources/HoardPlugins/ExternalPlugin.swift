import HoardCore

/// An out-of-process plugin found in a plugins directory.
public struct ExternalPlugin: Sendable {
    /// Its manifest.
    public var manifest: PluginManifest
    /// Its folder.
    public var folder: String
    /// Its channel, shared by its hooks.
    public var channel: PluginChannel
}
