import Foundation

/// The one JSON encoding Hoard hashes: keys sorted, no insignificant white space, slashes unescaped.
///
/// Documents that become blobs (descriptors, manifests) must go through this so equal values give equal digests.
/// The bytes are defined as those of Foundation's `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]`
/// (``reference(_:)``): every digest Hoard has stored was made with it. Most documents are written by a direct
/// writer instead (``fast(_:)``), which produces the same bytes for the subset it accepts — strings, integers,
/// Booleans, null, nested objects and arrays with ASCII keys — and hands everything else (floating-point numbers,
/// dates, data, non-ASCII keys, super-encoders, keys given twice) back to `JSONEncoder`. `JSONEncoder` cost ~20 µs a
/// descriptor, a tenth of an import's CPU for 2,000 pictures; the writer about a tenth of that.
public enum CanonicalJSON {
    /// Encodes a value canonically.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        if let bytes = try? fast(value) { return bytes }
        return try reference(value)
    }

    /// The defining encoding: `JSONEncoder`.
    static func reference<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// The direct writer; throws ``Unsupported`` for anything outside its subset.
    static func fast<T: Encodable>(_ value: T) throws -> [UInt8] {
        let root = Node()
        try root.encode(value, codingPath: [])
        var output: [UInt8] = []
        output.reserveCapacity(512)
        try root.write(into: &output)
        return output
    }

    /// A value the direct writer leaves to `JSONEncoder`.
    struct Unsupported: Error {}
}

/// One JSON value being built: a rendered scalar, an object's members (sorted when written) or an array's items.
private final class Node {
    enum Content {
        case empty
        case scalar([UInt8])
        case object
        case array
    }

    var content = Content.empty
    /// Set when something JSONEncoder treats its own way was asked for (a super-encoder).
    var isUnsupported = false
    var members: [(key: String, value: Node)] = []
    var items: [Node] = []

    init() {}

    init(scalar: [UInt8]) { content = .scalar(scalar) }

    /// Encodes `value` into this node, rendering the scalar types directly.
    func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        // Metatype comparisons, not `as?` casts: most values are structs, and a failed cast costs more than it looks.
        if T.self == String.self { return try set(Self.render(unsafeBitCast(value, to: String.self))) }
        if T.self == Int.self { return try set(Array(String(unsafeBitCast(value, to: Int.self)).utf8)) }
        if T.self == Int64.self { return try set(Array(String(unsafeBitCast(value, to: Int64.self)).utf8)) }
        if T.self == Bool.self { return try set(Array((unsafeBitCast(value, to: Bool.self) ? "true" : "false").utf8)) }
        if T.self == Int32.self || T.self == Int16.self || T.self == Int8.self || T.self == UInt.self || T.self == UInt64.self
            || T.self == UInt32.self || T.self == UInt16.self || T.self == UInt8.self {
            return try set(Array("\(value)".utf8))
        }
        // JSONEncoder gives these its own strategies or number formatting.
        if T.self == Double.self || T.self == Float.self || T.self == Date.self || T.self == Data.self || T.self == URL.self
            || T.self == Decimal.self {
            throw CanonicalJSON.Unsupported()
        }
        // A value nested this deep is pathological; JSONEncoder reports it properly.
        guard codingPath.count < 256 else { throw CanonicalJSON.Unsupported() }
        try value.encode(to: NodeEncoder(node: self, codingPath: codingPath, encoding: T.self))
    }

    func set(_ scalar: [UInt8]) throws {
        guard case .empty = content else { throw CanonicalJSON.Unsupported() }
        content = .scalar(scalar)
    }

    func becomeObject() throws {
        switch content {
        case .empty: content = .object
        case .object: break
        case .scalar, .array: throw CanonicalJSON.Unsupported()
        }
    }

    func becomeArray() throws {
        switch content {
        case .empty: content = .array
        case .array: break
        case .scalar, .object: throw CanonicalJSON.Unsupported()
        }
    }

    func write(into output: inout [UInt8]) throws {
        guard !isUnsupported else { throw CanonicalJSON.Unsupported() }
        switch content {
        case .empty: throw CanonicalJSON.Unsupported()
        case .scalar(let bytes): output.append(contentsOf: bytes)
        case .array:
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                try item.write(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object:
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            output.append(UInt8(ascii: "{"))
            for (index, member) in sorted.enumerated() {
                if index > 0 {
                    // A key given twice: JSONEncoder keeps one of them.
                    guard sorted[index - 1].key != member.key else { throw CanonicalJSON.Unsupported() }
                    output.append(UInt8(ascii: ","))
                }
                output.append(UInt8(ascii: "\""))
                output.append(contentsOf: member.key.utf8)
                output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
                try member.value.write(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Adds a member; keys are plain ASCII without quotes, backslashes or control characters (others go to JSONEncoder).
    func add(_ key: any CodingKey, _ value: Node) throws {
        let name = key.stringValue
        guard name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else {
            throw CanonicalJSON.Unsupported()
        }
        members.append((name, value))
    }

    /// A string as JSONEncoder writes it: quoted; `"` and `\` escaped; control characters as `\b \f \n \r \t` or
    /// `\u00XX` (lowercase hex); everything else, slashes and non-ASCII included, as its UTF-8 bytes.
    static func render(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 2)
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
        return output
    }

    static let null = Array("null".utf8)
}

private struct NodeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    /// The type whose `encode(to:)` is running.
    let encoding: Any.Type
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath, failure: Result { try node.becomeObject() }))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedNodeContainer(node: node, codingPath: codingPath, failure: Result { try node.becomeArray() })
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeContainer(node: node, codingPath: codingPath, encoding: encoding)
    }
}

/// Containers cannot throw when they are made, so a node of the wrong shape fails their first encode instead.
private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]
    let failure: Result<Void, any Error>

    mutating func encodeNil(forKey key: Key) throws {
        try failure.get()
        try node.add(key, Node(scalar: Node.null))
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try failure.get()
        let child = Node()
        try child.encode(value, codingPath: codingPath + [key])
        try node.add(key, child)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = Node()
        let added = Result { try failure.get(); try node.add(key, child); try child.becomeObject() }
        return KeyedEncodingContainer(KeyedNodeContainer<NestedKey>(node: child, codingPath: codingPath + [key], failure: added))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = Node()
        let added = Result { try failure.get(); try node.add(key, child); try child.becomeArray() }
        return UnkeyedNodeContainer(node: child, codingPath: codingPath + [key], failure: added)
    }

    mutating func superEncoder() -> any Encoder {
        node.isUnsupported = true
        return FailingEncoder(codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        node.isUnsupported = true
        return FailingEncoder(codingPath: codingPath)
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    let failure: Result<Void, any Error>
    var count: Int { node.items.count }

    mutating func encodeNil() throws {
        try failure.get()
        node.items.append(Node(scalar: Node.null))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try failure.get()
        let child = Node()
        try child.encode(value, codingPath: codingPath)
        node.items.append(child)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = Node()
        let added = Result { try failure.get(); node.items.append(child); try child.becomeObject() }
        return KeyedEncodingContainer(KeyedNodeContainer<NestedKey>(node: child, codingPath: codingPath, failure: added))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = Node()
        let added = Result { try failure.get(); node.items.append(child); try child.becomeArray() }
        return UnkeyedNodeContainer(node: child, codingPath: codingPath, failure: added)
    }

    mutating func superEncoder() -> any Encoder {
        node.isUnsupported = true
        return FailingEncoder(codingPath: codingPath)
    }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    let encoding: Any.Type

    mutating func encodeNil() throws { try node.set(Node.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        // A type that encodes itself as itself is a primitive this writer does not know (Float16, Int128, …).
        guard T.self != encoding else { throw CanonicalJSON.Unsupported() }
        try node.encode(value, codingPath: codingPath)
    }
}

/// What `superEncoder()` returns: every container it makes fails, sending the document to JSONEncoder.
private struct FailingEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedNodeContainer<Key>(node: Node(), codingPath: codingPath, failure: .failure(CanonicalJSON.Unsupported())))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedNodeContainer(node: Node(), codingPath: codingPath, failure: .failure(CanonicalJSON.Unsupported()))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FailingSingleContainer(codingPath: codingPath)
    }
}

private struct FailingSingleContainer: SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    mutating func encodeNil() throws { throw CanonicalJSON.Unsupported() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw CanonicalJSON.Unsupported() }
}
