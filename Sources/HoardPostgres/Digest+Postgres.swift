import HoardCore
import NIOCore
import PostgresNIO

/// A digest in PostgreSQL is its `sha256:<hex>` text, as in SQLite: bound and decoded as `text`.
extension Digest: PostgresNonThrowingEncodable, PostgresDecodable {
    /// Text.
    public static var psqlType: PostgresDataType { .text }
    /// Binary (text's binary form is its UTF-8 bytes).
    public static var psqlFormat: PostgresFormat { .binary }

    /// Writes the `sha256:<hex>` text.
    public func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeString(description)
    }

    /// Reads a `sha256:<hex>` text; any other text is a decoding failure.
    public init<JSONDecoder: PostgresJSONDecoder>(
        from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat, context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        guard let digest = Digest(try String(from: &buffer, type: type, format: format, context: context)) else {
            throw PostgresDecodingError.Code.failure
        }
        self = digest
    }
}

extension Collection where Element == Digest {
    /// The digests as a `text[]` parameter (`= ANY(…)`, `unnest(…)`).
    var texts: [String] { map(\.description) }
}
