import HoardCore

/// A map with its tokens and strokes in id order: two copies of a table are equal but for order when these are equal
/// (a token or stroke that appears to a player is put on top of their copy).
public func sortedById(_ map: JSONValue) -> JSONValue {
    func byId(_ list: JSONValue?) -> JSONValue? {
        guard case .array(let items)? = list else { return list }
        return .array(items.sorted { ($0["id"]?.stringValue ?? "") < ($1["id"]?.stringValue ?? "") })
    }
    guard case .object(var document) = map else { return map }
    document["tokens"] = byId(document["tokens"])
    if case .object(var drawing)? = document["drawing"] {
        drawing["strokes"] = byId(drawing["strokes"])
        document["drawing"] = .object(drawing)
    }
    return .object(document)
}
