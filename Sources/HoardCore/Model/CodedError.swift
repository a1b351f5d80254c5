/// The one shape of Hoard's errors below the HTTP layer: a code a program acts on (its raw value is the code the API
/// answers with, e.g. `STORAGE_FAILURE`), a message that says what happened and what to do, and the lower layer's own
/// words for logs. Each part of Hoard names its codes (``CatalogError``, ``BlobStoreError``, ``PluginError`` are
/// this type with their own `Code`).
public struct CodedError<Code: RawRepresentable & Sendable & Hashable>: Error, Sendable, Hashable, CustomStringConvertible
where Code.RawValue == String {
    /// What failed.
    public var code: Code
    /// What happened and what to do.
    public var message: String
    /// Lower-level words (an errno string, SQLite's message, a decoder's complaint).
    public var cause: String?

    /// An error with the lower layer's words as given.
    public init(_ code: Code, _ message: String, cause: String? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// An error caused by another one, whose description becomes ``cause``.
    public init(_ code: Code, _ message: String, causedBy error: any Error) {
        self.init(code, message, cause: "\(error)")
    }

    public var description: String { message + (cause.map { " (\($0))" } ?? "") }
}
