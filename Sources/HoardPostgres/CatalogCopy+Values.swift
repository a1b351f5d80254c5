import HoardCatalog
import HoardCore
import NIOCore
import PostgresNIO

extension CatalogCopy {
    /// How a column's values cross from SQLite to PostgreSQL, by the target column's type. Each SQLite value becomes
    /// the text PostgreSQL casts to that type, and a normal form the verification hashes; PostgreSQL computes the
    /// same normal form from what it stored (``normalSQL(_:)``), so a value converted wrong shows as a difference.
    ///
    /// | type | SQLite holds | PostgreSQL gets | normal form |
    /// |---|---|---|---|
    /// | `bigint` | an integer | its digits | its digits |
    /// | `boolean` | 0 or 1 (any other integer is true, as GRDB reads it) | `0` or `1` | `0` or `1` |
    /// | `timestamptz` | GRDB's `yyyy-MM-dd HH:mm:ss.SSS`, UTC | the same text, read in UTC | Unix milliseconds |
    /// | `text` | text | the same text | the same text |
    ///
    /// NULL stays NULL, distinct from every value (an empty text included).
    enum ColumnType {
        case integer, boolean, timestamp, text

        init(_ type: String, column: String) throws(CatalogError) {
            switch type {
            case "bigint", "integer", "smallint": self = .integer
            case "boolean": self = .boolean
            case "timestamp with time zone": self = .timestamp
            case "text", "character varying": self = .text
            default: throw CatalogError(.database, "the column \(column) is of type \(type), which migrate-catalog cannot copy yet")
            }
        }

        /// The type a text is cast to in SQL.
        var sqlType: String {
            switch self {
            case .integer: "bigint"
            case .boolean: "boolean"
            case .timestamp: "timestamptz"
            case .text: "text"
            }
        }

        /// The SQL that gives a stored value's normal form as text.
        func normalSQL(_ column: String) -> String {
            let name = CatalogCopy.quoted(column)
            switch self {
            case .integer: return "\(name)::text"
            case .boolean: return "\(name)::int::text"
            case .timestamp: return "floor(extract(epoch FROM \(name)) * 1000)::bigint::text"
            case .text: return name
            }
        }

        /// A SQLite value as the text PostgreSQL gets and its normal form; nil for NULL. `place` names the value
        /// for an error.
        func convert(_ value: StoredValue, _ place: @autoclosure () -> String) throws(CatalogError) -> (text: String, normal: String)? {
            switch (self, value) {
            case (_, .null):
                return nil
            case (.integer, .integer(let integer)):
                return (String(integer), String(integer))
            case (.integer, .text(let text)) where Int64(text) != nil:
                return (text, String(Int64(text)!))
            case (.boolean, .integer(let integer)):
                return integer == 0 ? ("0", "0") : ("1", "1")
            case (.timestamp, .text(let text)):
                guard let milliseconds = CatalogCopy.unixMilliseconds(text) else {
                    throw CatalogError(.invalid, "\(place()) holds '\(text)', which is not a time as GRDB writes it (yyyy-MM-dd HH:mm:ss.SSS)")
                }
                return (text, String(milliseconds))
            case (.text, .text(let text)):
                guard !text.utf8.contains(0) else { throw CatalogError(.invalid, "\(place()) holds a NUL character, which PostgreSQL's text refuses") }
                return (text, text)
            case (.text, .integer(let integer)):
                return (String(integer), String(integer))
            default:
                throw CatalogError(.invalid, "\(place()) holds \(value.shown), which its PostgreSQL column (\(sqlType)) cannot take")
            }
        }
    }

    /// Unix milliseconds of a UTC time written `yyyy-MM-dd[ HH:mm[:ss[.fraction]]]` (a `T` for the space and a final
    /// `Z` allowed): the forms GRDB writes and reads; digits past milliseconds are dropped (PostgreSQL's normal form
    /// takes their floor too). Nil for anything else.
    static func unixMilliseconds(_ text: String) -> Int64? {
        var bytes = Array(text.utf8)
        if bytes.last == UInt8(ascii: "Z") { bytes.removeLast() }
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count, !range.isEmpty else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func separator(_ index: Int, _ allowed: String) -> Bool { index < bytes.count && allowed.utf8.contains(bytes[index]) }
        guard let year = number(0..<4), separator(4, "-"), let month = number(5..<7), separator(7, "-"),
              let day = number(8..<10), (1...12).contains(month), (1...31).contains(day) else { return nil }
        var hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0, millisecond: Int64 = 0
        if bytes.count > 10 {
            guard separator(10, " T"), let h = number(11..<13), separator(13, ":"), let m = number(14..<16), h < 24, m < 60 else { return nil }
            (hour, minute) = (h, m)
            if bytes.count > 16 {
                guard separator(16, ":"), let s = number(17..<19), s < 60 else { return nil }
                second = s
                if bytes.count > 19 {
                    let digits = bytes.count - 20
                    guard separator(19, "."), digits <= 9, let fraction = number(20..<bytes.count) else { return nil }
                    millisecond = digits >= 3 ? number(20..<23)! : fraction * (digits == 1 ? 100 : 10)
                }
            }
        }
        let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
        return seconds * 1_000 + millisecond
    }

    /// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// A SHA-256 over a table's rows in key order: each value as a 0 byte for NULL, else a 1 byte, its length (4 bytes,
    /// big-endian) and its normal form's UTF-8 bytes. The source's values are added one by one; PostgreSQL encodes
    /// each of its rows so itself (``encodingSQL(_:)``), which spares a cell-by-cell decoding.
    struct RowHasher {
        private var hasher = BlobHasher()
        private(set) var rows = 0

        /// The SQL of one `bytea` per row that encodes the normal forms `normals` (SQL expressions giving text) as
        /// ``add(_:)`` does.
        static func encodingSQL(_ normals: [String]) -> String {
            normals.map { value in
                #"CASE WHEN (\#(value)) IS NULL THEN '\x00'::bytea ELSE '\x01'::bytea || int4send(octet_length(\#(value))) || "#
                    + #"convert_to(\#(value), 'UTF8') END"#
            }.joined(separator: " || ")
        }

        mutating func add(_ value: String?) {
            guard var value else { return hasher.update([0] as [UInt8]) }
            let length = UInt32(value.utf8.count)
            hasher.update([1, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] as [UInt8])
            value.withUTF8 { hasher.update(UnsafeRawBufferPointer($0)) }
        }

        /// Adds a whole row that PostgreSQL encoded (``encodingSQL(_:)``).
        mutating func add(encodedRow bytes: ByteBuffer) {
            bytes.withUnsafeReadableBytes { hasher.update($0) }
            rows += 1
        }

        mutating func endRow() { rows += 1 }

        func finalize() -> Digest { hasher.finalize() }
    }
}

extension StoredValue {
    /// The value as an error message shows it.
    var shown: String {
        switch self {
        case .null: "NULL"
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): "'\(text)'"
        case .bytes(let bytes): "\(bytes.count) bytes"
        }
    }
}

/// A `text[]` whose elements may be NULL, bound as one parameter (postgres-nio's arrays have no NULL elements).
struct NullableTextArray: PostgresEncodable {
    var elements: [String?]

    static var psqlType: PostgresDataType { .textArray }
    static var psqlFormat: PostgresFormat { .binary }

    /// PostgreSQL's binary array: dimensions, a has-NULL flag, the element type, then the length and lower bound of
    /// the one dimension, and each element as a length (-1 for NULL) and its bytes.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(elements.contains(nil) ? 1 : 0, as: Int32.self)
        buffer.writeInteger(PostgresDataType.text.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count))
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            guard let element else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            buffer.writeInteger(Int32(element.utf8.count))
            buffer.writeString(element)
        }
    }
}
