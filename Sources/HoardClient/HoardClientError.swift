import HoardCore

/// Every failure of the client library: a code to switch on, a message that says what to do, the HTTP status when
/// the server answered, the digests concerned, and the underlying cause.
public struct HoardClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value to switch on.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The server answered with an error body; ``HoardClientError/serverCode`` holds its wire code.
        public static let server = Code(rawValue: "SERVER")
        /// The server could not be reached, or the connection dropped.
        public static let network = Code(rawValue: "NETWORK")
        /// The server answered something this client cannot read.
        public static let badResponse = Code(rawValue: "BAD_RESPONSE")
        /// A blob's bytes do not hash to its digest; nothing was stored.
        public static let digestMismatch = Code(rawValue: "DIGEST_MISMATCH")
        /// The server says the caller cannot fetch these blobs (``HoardClientError/digests``).
        public static let unavailable = Code(rawValue: "UNAVAILABLE")
        /// A map references blobs the server lacks and that are not available locally (``HoardClientError/digests``).
        public static let missingBlobs = Code(rawValue: "MISSING_BLOBS")
        /// Reading or writing the local cache or a local file failed.
        public static let io = Code(rawValue: "IO")
        /// The live channel cannot be opened on this platform (e.g. a libcurl without WebSocket support).
        public static let webSocketUnsupported = Code(rawValue: "WEBSOCKET_UNSUPPORTED")
        /// The live channel is not connected right now; the message was not sent.
        public static let notConnected = Code(rawValue: "NOT_CONNECTED")
        /// The caller passed something unusable (a bad URL, a bad digest).
        public static let invalidArgument = Code(rawValue: "INVALID_ARGUMENT")
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do about it.
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The server's error code (`NOT_FOUND`, `UNKNOWN_CODE`, …), when it sent one.
    public var serverCode: String?
    /// The digests concerned (missing, unavailable or corrupt blobs).
    public var digests: [Digest]
    /// The underlying error.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, status: Int? = nil, serverCode: String? = nil, digests: [Digest] = [],
        cause: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.status = status
        self.serverCode = serverCode
        self.digests = digests
        self.cause = cause
    }

    public var description: String {
        var text = message
        if let status { text += " (HTTP \(status)\(serverCode.map { " " + $0 } ?? ""))" }
        if let cause { text += ": \(cause)" }
        return text
    }
}
