import Foundation

/// Why JSON text could not be read: what was wrong and at which byte.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var offset: Int
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// Parses JSON text (RFC 8259, UTF-8) straight from its bytes: several times faster than going through
    /// `JSONDecoder`, which matters for a session's map and manifest (megabytes for 10,000 references). Strict:
    /// one value and nothing after it but white space, no comments, no trailing commas, no invalid UTF-8 or control
    /// characters in strings, nesting at most `maxDepth` deep. A repeated object key keeps its last value.
    public init(parsing data: Data, maxDepth: Int = 512) throws {
        self = try data.withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
            return try parser.document()
        }
    }
}

extension JSONValue {
    /// Parses like ``init(parsing:maxDepth:)`` and also tells, for a top-level object, where each member's value lies
    /// in `data` (offsets from its first byte), so a caller can keep parts of the text exactly as they were sent.
    public static func parsingMembers(_ data: Data, maxDepth: Int = 512) throws -> (value: JSONValue, members: [String: Range<Int>]) {
        try data.withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
            parser.memberRanges = [:]
            let value = try parser.document()
            return (value, parser.memberRanges ?? [:])
        }
    }
}

/// A recursive-descent reader over the bytes, behind ``JSONValue/init(parsing:maxDepth:)`` and
/// ``JSONValue/parsingMembers(_:maxDepth:)``.
struct JSONParser {
    let bytes: UnsafeRawBufferPointer
    let maxDepth: Int
    var index = 0
    /// When not nil, the byte range of each value of the top-level object is recorded here.
    var memberRanges: [String: Range<Int>]?

    init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func document() throws -> JSONValue {
        skipSpace()
        let value = try value(depth: 0)
        skipSpace()
        guard index == bytes.count else { throw failure("unexpected text after the value") }
        return value
    }

    private func failure(_ reason: String) -> JSONParseError { JSONParseError(reason: reason, offset: index) }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws -> JSONValue {
        guard index < bytes.count else { throw failure("a value is missing") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let length = word.utf8CodeUnitCount
        guard index + length <= bytes.count,
            word.withUTF8Buffer({ memcmp(bytes.baseAddress! + index, $0.baseAddress!, length) == 0 })
        else { throw failure("unexpected word") }
        index += length
    }

    private mutating func object(depth: Int) throws -> JSONValue {
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(8)
        if try opens(depth: depth, closing: UInt8(ascii: "}")) { return .object(members) }
        repeat {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("an object key must be a string") }
            let key = try string()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("':' expected after an object key") }
            index += 1
            skipSpace()
            let start = index
            members[key] = try value(depth: depth)
            if depth == 1, memberRanges != nil { memberRanges?[key] = start..<index }
        } while try continues(closing: UInt8(ascii: "}"), in: "object")
        return .object(members)
    }

    private mutating func array(depth: Int) throws -> JSONValue {
        var items: [JSONValue] = []
        if try opens(depth: depth, closing: UInt8(ascii: "]")) { return .array(items) }
        repeat {
            skipSpace()
            items.append(try value(depth: depth))
        } while try continues(closing: UInt8(ascii: "]"), in: "array")
        return .array(items)
    }

    /// Steps over an object's or array's opening bracket; true when `closing` follows at once (it is empty).
    private mutating func opens(depth: Int, closing: UInt8) throws -> Bool {
        guard depth <= maxDepth else { throw failure("nested more than \(maxDepth) deep") }
        index += 1
        skipSpace()
        guard index < bytes.count, bytes[index] == closing else { return false }
        index += 1
        return true
    }

    /// After a member or element: true after a `,` (another follows), false after `closing` (the end).
    private mutating func continues(closing: UInt8, in container: String) throws -> Bool {
        skipSpace()
        guard index < bytes.count else { throw failure("unfinished \(container)") }
        switch bytes[index] {
        case UInt8(ascii: ","): index += 1; return true
        case closing: index += 1; return false
        default: throw failure("',' or '\(Character(Unicode.Scalar(closing)))' expected in an \(container)")
        }
    }

    private mutating func string() throws -> String {
        index += 1
        let start = index
        var high: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                let utf8 = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                // ASCII (digests, names, keys: nearly every string here) needs no validation.
                return high < 0x80 ? String(decoding: utf8, as: UTF8.self) : try text(utf8)
            }
            high |= byte
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            guard byte >= 0x20 else { throw failure("a control character in a string") }
            index += 1
        }
        throw failure("unfinished string")
    }

    /// The rest of a string that holds escapes, from its first byte at `start`.
    private mutating func escapedString(from start: Int) throws -> String {
        var utf8 = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try utf8.withUnsafeBytes { try text($0) }
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw failure("unfinished escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw failure("a lone surrogate in a \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate in a \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("a lone surrogate in a \\u escape") }
                    utf8.append(contentsOf: String(Character(unicode)).utf8)
                default:
                    throw failure("an unknown escape")
                }
            default:
                guard byte >= 0x20 else { throw failure("a control character in a string") }
                utf8.append(byte)
            }
        }
        throw failure("unfinished string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("unfinished \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func text(_ utf8: UnsafeRawBufferPointer) throws -> String {
        guard let text = String(validating: utf8.bindMemory(to: UInt8.self), as: UTF8.self) else {
            throw failure("a string that is not UTF-8")
        }
        return text
    }

    private mutating func number() throws -> Double {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a number needs digits") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("digits expected after '.'") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("digits expected in an exponent") }
            skipDigits()
        }
        let digits = bytes[start..<index]
        if isInteger, digits.count <= 16 {
            // Exact in a Double: at most 15 digits and a sign.
            var value: Int64 = 0
            for byte in digits where byte != UInt8(ascii: "-") { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
            return digits.first == UInt8(ascii: "-") ? -Double(value) : Double(value)
        }
        guard let value = Double(String(decoding: digits, as: UTF8.self)), value.isFinite else { throw failure("a number out of range") }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
}
