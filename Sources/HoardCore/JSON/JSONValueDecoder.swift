import Foundation

/// Decodes `Decodable` types from a ``JSONValue`` tree (what ``JSONValue/init(parsing:maxDepth:)`` reads), for
/// the client's large answers: with the fast parser it reads a 10,000-reference session several times faster
/// than `JSONDecoder`. It follows `JSONDecoder`'s default strategies: keys as written, numbers that must fit the
/// type exactly, `nil` for `null` and absent keys in `decodeIfPresent`; a ``JSONValue`` is handed over whole.
public enum JSONValueDecoder {
    /// Decodes `type` from `value`.
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try TreeDecoder.unbox(value, as: type, path: .root)
    }

    /// Parses `data` and decodes `type` from it.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: JSONValue(parsing: data))
    }
}

/// Where a value sits in the document, linked to its parent: materialized as an array only when asked (an error,
/// or a type that reads `codingPath`), so decoding a member costs no array copy.
private final class Path: Sendable {
    let parent: Path?
    let key: (any CodingKey & Sendable)?
    static let root = Path(parent: nil, key: nil)

    init(parent: Path?, key: (any CodingKey & Sendable)?) {
        self.parent = parent
        self.key = key
    }

    func appending(_ key: some CodingKey) -> Path { Path(parent: self, key: AnyKey(key)) }
    func appending(index: Int) -> Path { Path(parent: self, key: IndexKey(index)) }

    var keys: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node: Path? = self
        while let current = node, let key = current.key {
            keys.append(key)
            node = current.parent
        }
        return keys.reversed()
    }
}

/// A key of an object member in a coding path.
private struct AnyKey: CodingKey, Sendable {
    var stringValue: String
    var intValue: Int?
    init(_ key: some CodingKey) {
        stringValue = key.stringValue
        intValue = key.intValue
    }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

/// A key of an array element in a coding path.
private struct IndexKey: CodingKey, Sendable {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

private struct TreeDecoder: Decoder {
    let value: JSONValue
    let path: Path
    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func unbox<T: Decodable>(_ value: JSONValue, as type: T.Type, path: Path) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        return try T(from: TreeDecoder(value: value, path: path))
    }

    static func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: Path) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: path.keys, debugDescription: "expected \(type), found \(value.kindName)"))
    }

    static func string(_ value: JSONValue, _ path: Path) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, value, path) }
        return text
    }

    static func bool(_ value: JSONValue, _ path: Path) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, path) }
        return flag
    }

    static func double(_ value: JSONValue, _ path: Path) throws -> Double {
        guard case .number(let number) = value else { throw mismatch(Double.self, value, path) }
        return number
    }

    static func integer<I: FixedWidthInteger>(_ value: JSONValue, _ type: I.Type, _ path: Path) throws -> I {
        guard case .number(let number) = value else { throw mismatch(type, value, path) }
        guard let integer = I(exactly: number) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path.keys, debugDescription: "\(number) does not fit \(type)"))
        }
        return integer
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw Self.mismatch([String: Any].self, value, path) }
        return KeyedDecodingContainer(Keyed<Key>(members: members, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw Self.mismatch([Any].self, value, path) }
        return Unkeyed(items: items, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(value: value, path: path) }
}

private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let path: Path
    var codingPath: [any CodingKey] { path.keys }
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: path.keys, debugDescription: "no value for \"\(key.stringValue)\""))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try TreeDecoder.bool(member(key), path.appending(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try TreeDecoder.string(member(key), path.appending(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try TreeDecoder.double(member(key), path.appending(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try TreeDecoder.double(member(key), path.appending(key))) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try TreeDecoder.integer(member(key), type, path.appending(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try TreeDecoder.integer(member(key), type, path.appending(key)) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try TreeDecoder.unbox(member(key), as: type, path: path.appending(key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try TreeDecoder(value: member(key), path: path.appending(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try TreeDecoder(value: member(key), path: path.appending(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { TreeDecoder(value: members["super"] ?? .null, path: path) }
    func superDecoder(forKey key: Key) throws -> any Decoder { TreeDecoder(value: members[key.stringValue] ?? .null, path: path.appending(key)) }
}

private struct Unkeyed: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let path: Path
    var codingPath: [any CodingKey] { path.keys }
    var currentIndex = 0
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(items: [JSONValue], path: Path) {
        self.items = items
        self.path = path
    }

    private mutating func next() throws -> (JSONValue, Path) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: path.keys, debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return (items[currentIndex], path.appending(index: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (value, path) = try next(); return try TreeDecoder.bool(value, path) }
    mutating func decode(_ type: String.Type) throws -> String { let (value, path) = try next(); return try TreeDecoder.string(value, path) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (value, path) = try next(); return try TreeDecoder.double(value, path) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (value, path) = try next(); return Float(try TreeDecoder.double(value, path)) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (value, path) = try next(); return try TreeDecoder.integer(value, type, path) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next()
        return try TreeDecoder.unbox(value, as: type, path: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next()
        return try TreeDecoder(value: value, path: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next()
        return try TreeDecoder(value: value, path: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next()
        return TreeDecoder(value: value, path: path)
    }
}

private struct Single: SingleValueDecodingContainer {
    let value: JSONValue
    let path: Path
    var codingPath: [any CodingKey] { path.keys }

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try TreeDecoder.bool(value, path) }
    func decode(_ type: String.Type) throws -> String { try TreeDecoder.string(value, path) }
    func decode(_ type: Double.Type) throws -> Double { try TreeDecoder.double(value, path) }
    func decode(_ type: Float.Type) throws -> Float { Float(try TreeDecoder.double(value, path)) }
    func decode(_ type: Int.Type) throws -> Int { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: Int8.Type) throws -> Int8 { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: Int16.Type) throws -> Int16 { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: Int32.Type) throws -> Int32 { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: Int64.Type) throws -> Int64 { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: UInt.Type) throws -> UInt { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try TreeDecoder.integer(value, type, path) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try TreeDecoder.integer(value, type, path) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try TreeDecoder.unbox(value, as: type, path: path) }
}

extension JSONValue {
    /// The JSON type's name, for error messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
