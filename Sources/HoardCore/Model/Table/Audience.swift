/// Which participants of a session see something, besides the host (who sees everything): everyone, everyone but
/// some, or only some. Participant ids are opaque strings; a participant who joins later is in ``everyone``.
public struct Audience: Sendable, Hashable, CustomStringConvertible {
    /// True: everyone except ``ids``. False: only ``ids``.
    public private(set) var isComplement: Bool
    /// The participants named, included or excluded according to ``isComplement``.
    public private(set) var ids: Set<String>

    /// Every participant, present and future.
    public static let everyone = Audience(isComplement: true, ids: [])
    /// No participant (the host only).
    public static let nobody = Audience(isComplement: false, ids: [])

    /// Only these participants.
    public static func only(_ ids: some Sequence<String>) -> Audience { Audience(isComplement: false, ids: Set(ids)) }

    /// Whether a participant is in it.
    public func contains(_ id: String) -> Bool { isComplement != ids.contains(id) }

    /// Whether no participant is in it.
    public var isEmpty: Bool { !isComplement && ids.isEmpty }

    /// Those in either.
    public func union(_ other: Audience) -> Audience {
        var union = self
        union.formUnion(other)
        return union
    }

    /// Adds those in `other`, in place (no copy of ``ids`` when this one alone holds them).
    public mutating func formUnion(_ other: Audience) {
        switch (isComplement, other.isComplement) {
        case (false, false): ids.formUnion(other.ids)
        case (true, true): ids.formIntersection(other.ids)
        case (true, false): ids.subtract(other.ids)
        case (false, true): (isComplement, ids) = (true, other.ids.subtracting(ids))
        }
    }

    /// Puts `id` in or out.
    public mutating func set(_ id: String, in isIn: Bool) {
        if isIn != isComplement { ids.insert(id) } else { ids.remove(id) }
    }

    /// Those in both.
    public func intersection(_ other: Audience) -> Audience {
        switch (isComplement, other.isComplement) {
        case (false, false): Audience(isComplement: false, ids: ids.intersection(other.ids))
        case (true, true): Audience(isComplement: true, ids: ids.union(other.ids))
        case (true, false): Audience(isComplement: false, ids: other.ids.subtracting(ids))
        case (false, true): Audience(isComplement: false, ids: ids.subtracting(other.ids))
        }
    }

    /// Those in this one and not in `other`.
    public func subtracting(_ other: Audience) -> Audience {
        intersection(Audience(isComplement: !other.isComplement, ids: other.ids))
    }

    public var description: String {
        isComplement ? (ids.isEmpty ? "everyone" : "everyone but \(ids.sorted())") : "only \(ids.sorted())"
    }

    /// The stored form: `"*"` for everyone, `["a", "b"]` for only these, `{"except": ["a"]}` for everyone but these.
    public var json: JSONValue {
        if isComplement && ids.isEmpty { return .string("*") }
        let list = JSONValue.array(ids.sorted().map(JSONValue.string))
        return isComplement ? .object(["except": list]) : list
    }

    /// Reads the stored form; nil when it is not one.
    public init?(json: JSONValue) {
        switch json {
        case .string("*"): self = .everyone
        case .array(let items):
            let names = items.compactMap(\.stringValue)
            guard names.count == items.count else { return nil }
            self = .only(names)
        case .object(let members):
            guard members.count == 1, case .array(let items)? = members["except"] else { return nil }
            let names = items.compactMap(\.stringValue)
            guard names.count == items.count else { return nil }
            self.init(isComplement: true, ids: Set(names))
        default: return nil
        }
    }

    private init(isComplement: Bool, ids: Set<String>) {
        self.isComplement = isComplement
        self.ids = ids
    }
}
