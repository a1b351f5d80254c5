/// What one participant's view gained and lost by one op while vision is on (the `view` op, which only the server
/// sends): the tokens, objects and walls that came into it or changed in it, those that left it, the floor of the
/// tiles newly explored, and the tiles seen now. Their view before the op with this applied
/// (``apply(to:participant:)``) is their view after it.
public struct ViewChange: Sendable, Hashable {
    /// Tokens, objects and walls that came into the view or changed in it, as they are now.
    public var tokens: [[String: JSONValue]] = []
    public var objects: [[String: JSONValue]] = []
    public var walls: [[String: JSONValue]] = []
    /// Ids of the tokens, objects and walls that left the view (ids are unique across kinds).
    public var removed: [String] = []
    /// The floor of the tiles newly shown, in the `background` form (palette, rectangles of palette indices, and the
    /// default `texture` when it shows there); nil: none.
    public var floor: JSONValue?
    /// Tiles explored for the first time.
    public var explored: [TileRect] = []
    /// Every tile seen now.
    public var seen: [TileRect] = []

    public init() {}

    /// Reads the `view` op's fields; nil when they are not one.
    init?(_ op: [String: JSONValue]) {
        func entities(_ key: String) -> [[String: JSONValue]]? {
            guard case .array(let items)? = op[key] ?? .array([]) else { return nil }
            let objects = items.compactMap { if case .object(let members) = $0 { members } else { nil } }
            return objects.count == items.count ? objects : nil
        }
        func rects(_ key: String) -> [TileRect]? {
            guard case .array(let items)? = op[key] ?? .array([]) else { return nil }
            let rects = items.compactMap(TileRect.init(json:))
            return rects.count == items.count ? rects : nil
        }
        guard let tokens = entities("tokens"), let objects = entities("objects"), let walls = entities("walls"),
            case .array(let removed)? = op["removed"] ?? .array([]), let explored = rects("explored"), let seen = rects("seen")
        else { return nil }
        (self.tokens, self.objects, self.walls) = (tokens, objects, walls)
        self.removed = removed.compactMap(\.stringValue)
        (self.explored, self.seen) = (explored, seen)
        floor = op["floor"]
    }

    /// The `view` op's fields, without its `kind`.
    var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "tokens": .array(tokens.map(JSONValue.object)), "objects": .array(objects.map(JSONValue.object)),
            "walls": .array(walls.map(JSONValue.object)), "removed": .array(removed.map(JSONValue.string)),
            "explored": .array(explored.map(\.json)), "seen": .array(seen.map(\.json)),
        ]
        if let floor { fields["floor"] = floor }
        return fields
    }

    /// `participant`'s map (as the server last sent it, with every change since) with this change made: what a
    /// client's view model does with a `view` op.
    public func apply(to map: JSONValue, participant: String) -> JSONValue {
        guard case .object(var document) = map else { return map }
        let gone = Set(removed)
        func merged(_ list: JSONValue?, _ changed: [[String: JSONValue]]) -> JSONValue {
            var items: [JSONValue] = []
            if case .array(let old)? = list { items = old.filter { $0["id"]?.stringValue.map { !gone.contains($0) } ?? true } }
            for entity in changed {
                let id = entity["id"]?.stringValue
                if let index = items.firstIndex(where: { $0["id"]?.stringValue == id }) {
                    items[index] = .object(entity)
                } else {
                    items.append(.object(entity))
                }
            }
            return .array(items)
        }
        document["tokens"] = merged(document["tokens"], tokens)
        document["objects"] = merged(document["objects"], objects)
        var drawing: [String: JSONValue] = [:]
        if case .object(let members)? = document["drawing"] { drawing = members }
        drawing["walls"] = merged(drawing["walls"], walls)
        document["drawing"] = .object(drawing)
        if case .object(let shown)? = floor { document["background"] = Self.painting(document["background"], with: shown) }
        var vision: [String: JSONValue] = [:]
        if case .object(let members)? = document["vision"] { vision = members }
        var explored: [String: JSONValue] = [:]
        if case .object(let members)? = vision["explored"] { explored = members }
        if case .array(let known)? = explored[participant] ?? .array([]) {
            explored[participant] = .array(known + self.explored.map(\.json))
        }
        vision["explored"] = .object(explored)
        vision["seen"] = .object([participant: .array(seen.map(\.json))])
        document["vision"] = .object(vision)
        return .object(document)
    }

    /// A `background` with the tiles of `shown` (the same form) painted over it.
    private static func painting(_ background: JSONValue?, with shown: [String: JSONValue]) -> JSONValue {
        var members: [String: JSONValue] = [:]
        if case .object(let known)? = background { members = known }
        var palette: [JSONValue] = []
        if case .array(let known)? = members["palette"] { palette = known }
        var rects: [JSONValue] = []
        if case .array(let known)? = members["rects"] { rects = known }
        var newPalette: [JSONValue] = []
        if case .array(let given)? = shown["palette"] { newPalette = given }
        if case .array(let given)? = shown["rects"] {
            // `[x, y, w, h, index]`, or `[x, y, index]` for one tile.
            for case .array(var rect) in given where rect.count == 5 || rect.count == 3 {
                let last = rect.count - 1
                if case .number(let index) = rect[last], index >= 0, Int(index) < newPalette.count {
                    let texture = newPalette[Int(index)]
                    if let known = palette.firstIndex(of: texture) {
                        rect[last] = .number(Double(known))
                    } else {
                        palette.append(texture)
                        rect[last] = .number(Double(palette.count - 1))
                    }
                }
                rects.append(.array(rect))
            }
        }
        for (key, value) in shown where key != "palette" && key != "rects" { members[key] = value }
        members["palette"] = .array(palette)
        members["rects"] = .array(rects)
        return .object(members)
    }
}

extension Table {
    /// This table with only `participant`'s seen and explored tiles: who-sees answers (``tokenAudience(_:)``,
    /// ``wallAudience(_:)``…) are right for them and leave out everyone else's sight.
    func seenOnly(by participant: String) -> Table {
        var table = self
        table.lit = lit[participant].map { [participant: $0] } ?? [:]
        table.vision?.explored = vision?.explored[participant].map { [participant: $0] } ?? [:]
        return table
    }

    /// What `participant`'s view gained and lost between `old` (this table before an op) and now.
    func viewChange(from old: Table, for participant: String) -> ViewChange {
        var change = ViewChange()
        func differences(_ before: EntityList, _ now: EntityList, _ audience: ([String: JSONValue]) -> Audience,
            _ oldAudience: ([String: JSONValue]) -> Audience) -> [[String: JSONValue]] {
            var shownBefore: [String: [String: JSONValue]] = [:]
            for entity in before.items where oldAudience(entity).contains(participant) {
                if let id = entity["id"]?.stringValue { shownBefore[id] = entity }
            }
            var changed: [[String: JSONValue]] = []
            for entity in now.items where audience(entity).contains(participant) {
                guard let id = entity["id"]?.stringValue else { continue }
                if shownBefore.removeValue(forKey: id) != entity { changed.append(entity) }
            }
            change.removed += shownBefore.keys.sorted()
            return changed
        }
        // Who sees what, asked of this participant's sight alone: the same answer for them, without going through
        // every other participant's tiles for every entity (that made a 200-player table's moves quadratic).
        let now = seenOnly(by: participant)
        let then = old.seenOnly(by: participant)
        change.tokens = differences(then.tokens, now.tokens, now.tokenAudience, then.tokenAudience)
        change.objects = differences(then.objects, now.objects, now.objectAudience, then.objectAudience)
        change.walls = differences(then.walls, now.walls, now.wallAudience, then.wallAudience)
        let count = width * height
        let exploredNow = vision?.explored[participant] ?? TileSet(count: count)
        let newlyExplored = exploredNow.subtracting(old.vision?.explored[participant] ?? TileSet(count: count))
        change.explored = newlyExplored.rects(width: width, height: height)
        change.seen = (lit[participant] ?? TileSet(count: count)).rects(width: width, height: height)
        // The floor as ``view(for:)`` writes it: only when the map has a background or paint.
        if let floor, document["background"] != nil || floor.isPainted, !newlyExplored.isEmpty {
            var shown = Fog(width: width, height: height)
            shown.isEnabled = true
            newlyExplored.forEach { tile in if !(fog?.revealed[tile] ?? false) { shown.revealed[tile] = true } }
            if shown.revealed.contains(true) { change.floor = floor.json(under: shown) }
        }
        return change
    }
}
