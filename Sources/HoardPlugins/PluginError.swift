import HoardCore

/// Why an out-of-process plugin could not be loaded or answer: a code, a message that says what to do, the cause.
public typealias PluginError = CodedError<PluginFailure>

/// What failed in a plugin (``PluginError``'s codes).
public enum PluginFailure: String, Sendable, Hashable {
    /// `plugin.json` is missing, unreadable or breaks the manifest schema.
    case badManifest = "BAD_PLUGIN_MANIFEST"
    /// The command could not start, or its handshake named another protocol version or id.
    case handshake = "PLUGIN_HANDSHAKE"
    /// No answer within the call's time limit; the process was killed.
    case timeout = "PLUGIN_TIMEOUT"
    /// The process exited or closed its output.
    case crashed = "PLUGIN_CRASHED"
    /// The answer was not one JSON line of the protocol's shape.
    case garbage = "PLUGIN_GARBAGE"
    /// Too many failures in a row: calls are refused until the server restarts.
    case disabled = "PLUGIN_DISABLED"
    /// A command the manifest `requires` is not on `PATH`: the plugin is off until it is installed and Hoard restarts.
    case missingTool = "PLUGIN_OFF"
}
