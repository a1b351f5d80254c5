import Foundation

/// Any JSON document, as a value: what maps and live-channel ops are (Hoard does not interpret them beyond
/// finding digests).
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value at `key` of an object, nil otherwise.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// Every digest a document references: each string value of the form `sha256:<64 lowercase hex>`, at any
    /// depth (object keys are not references). Iterative, so a deeply nested document cannot exhaust the stack.
    public var referencedDigests: Set<Digest> {
        var found = Set<Digest>()
        var pending: [JSONValue] = [self]
        while let value = pending.popLast() {
            switch value {
            case .string(let text):
                if text.utf8.count == 71, let digest = Digest(text) { found.insert(digest) }
            case .array(let items): pending.append(contentsOf: items)
            case .object(let members): pending.append(contentsOf: members.values)
            case .null, .bool, .number: break
            }
        }
        return found
    }

    /// Nesting depth (a scalar is 1), computed without recursion.
    public var depth: Int {
        var deepest = 0
        var pending: [(JSONValue, Int)] = [(self, 1)]
        while let (value, level) = pending.popLast() {
            deepest = max(deepest, level)
            switch value {
            case .array(let items): pending.append(contentsOf: items.map { ($0, level + 1) })
            case .object(let members): pending.append(contentsOf: members.values.map { ($0, level + 1) })
            default: break
            }
        }
        return deepest
    }
}
