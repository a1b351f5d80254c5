/// Why an out-of-process plugin could not be loaded or answer: a code, a message that says what to do, the cause.
public struct PluginError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Code: String, Sendable {
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
    }

    /// What failed.
    public var code: Code
    /// What happened and what to do.
    public var message: String
    /// Lower-level words (an errno string, a decoder's message).
    public var cause: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: String? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { message + (cause.map { " (\($0))" } ?? "") }
}
