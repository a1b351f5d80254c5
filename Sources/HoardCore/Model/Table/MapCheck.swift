/// The door every map document goes through before the server keeps it (a session's map, a replaced map, a saved
/// map) and when a stored one is read again: ``admitted(_:)`` gives the form the table reads, or says what is wrong.
/// What passes can be read by ``Table`` and judged by its audience rules whatever op follows: every place is on the
/// grid, the floor is in the palette form (so fog covers it tile by tile), every entity the table reasons about has an
/// id no other has, and no id is in a participant's stroke namespace unless it is their stroke.
///
/// A document that is not a JSON object (an app's own shape) passes as it is: the table keeps it opaque.
public enum MapCheck {
    /// Longest id a map may hold: an op's ids are at most ``TableOp/maxId`` characters, and a participant's stroke is
    /// kept as `p:<participant>:<id>`.
    public static let maxStoredId = 256

    /// The map as it is stored, or the reason it is refused: a per-tile floor as a palette and rectangles, walls and
    /// strokes without an id given one, then written as the table reads it back (the host's view), so the map a session is
    /// created with and the map its host is shown are the same bytes.
    public static func admitted(_ map: JSONValue) -> Result<JSONValue, MapProblem> {
        let stored = withIds(MapPalette.upgraded(map, anySchema: true))
        if let problem = problem(in: stored) { return .failure(MapProblem(message: problem)) }
        return .success(Table(map: stored).map)
    }

    /// What is wrong with a map in its stored form; nil when nothing is.
    public static func problem(in map: JSONValue) -> String? {
        guard case .object(let document) = map else { return nil }
        var (width, height) = (512, 512)
        var isHex = false
        if let grid = document["grid"] {
            guard let w = integer(grid["width"]), let h = integer(grid["height"]), (1...512).contains(w), (1...512).contains(h) else {
                return "grid.width and grid.height are integers from 1 to 512"
            }
            (width, height) = (w, h)
            guard let kind = Grid(map: grid) else {
                return "grid.type is \"square\" or \"hex\"; a hex grid's orientation is \"flat\" or \"pointy\" and its "
                    + "offset \"odd\" or \"even\""
            }
            if case .hex = kind { isHex = true }
        }
        if let problem = floorProblem(document["background"], width, height) { return problem }
        if let fog = document["fog"] {
            guard case .object(let members) = fog else { return "fog is an object {enabled, revealed}" }
            if let enabled = members["enabled"], enabled != .bool(true), enabled != .bool(false) { return "fog.enabled is true or false" }
            if let revealed = members["revealed"] {
                guard case .array(let rects) = revealed,
                    rects.allSatisfy({ TileRect(json: $0).map { $0.fits(width, height) } ?? false })
                else { return "fog.revealed is a list of [x, y, w, h] inside the \(width)×\(height) grid" }
            }
        }
        if let dice = document["dice"] {
            guard case .object(let chosen) = dice, chosen.values.allSatisfy({ $0.stringValue.flatMap(Digest.init) != nil }) else {
                return "dice is an object of participant ids (host:<member id> for members) to dice digests"
            }
        }
        if let vision = document["vision"] {
            guard case .object(let members) = vision, Set(members.keys).isSubset(of: ["enabled", "explored", "seen"]) else {
                return "vision is an object {enabled, explored, seen}"
            }
            if let enabled = members["enabled"], enabled != .bool(true), enabled != .bool(false) { return "vision.enabled is true or false" }
            for key in ["explored", "seen"] {
                guard let explored = members[key] else { continue }
                guard case .object(let entries) = explored,
                    entries.values.allSatisfy({ value in
                        guard case .array(let rects) = value else { return false }
                        return rects.allSatisfy { TileRect(json: $0).map { $0.fits(width, height) } ?? false }
                    })
                else { return "vision.\(key) maps participant ids to lists of [x, y, w, h] inside the \(width)×\(height) grid" }
            }
        }
        var ids: Set<String> = []
        var drawing: [String: JSONValue] = [:]
        if let value = document["drawing"] {
            guard case .object(let members) = value else { return "drawing is an object {walls, strokes, layers}" }
            drawing = members
        }
        let lists: [(name: String, value: JSONValue?)] = [
            ("tokens", document["tokens"]), ("objects", document["objects"]), ("drawing.walls", drawing["walls"]),
            ("drawing.strokes", drawing["strokes"]),
        ]
        for (name, value) in lists {
            guard let value else { continue }
            guard case .array(let entries) = value else { return "\(name) is a list" }
            for case .object(let entity) in entries {
                guard let id = entity["id"]?.stringValue, (1...maxStoredId).contains(id.count) else {
                    return "every entry of \(name) needs an \"id\": a string of 1 to \(maxStoredId) characters"
                }
                guard ids.insert(id).inserted else { return "the id \(id.debugDescription) is used twice; ids are unique across kinds" }
                let isStroke = name == "drawing.strokes"
                if let problem = reservedIdProblem(id, layer: entity["layer"]?.stringValue, isStroke: isStroke) { return problem }
                if let problem = placeProblem(name, entity, width, height, hex: isHex) { return "\(id.debugDescription) in \(name): " + problem }
            }
        }
        return nil
    }

    /// Why `id` may not be used: ids `p:<participant>:…` are a participant's strokes (``Table/ownStrokeId(_:_:)``),
    /// kept on their layer `p:<participant>` only; nil when it may.
    public static func reservedIdProblem(_ id: String, layer: String?, isStroke: Bool) -> String? {
        guard id.hasPrefix("p:") else { return nil }
        if isStroke, let layer, layer.hasPrefix("p:"), id.hasPrefix(layer + ":") { return nil }
        return "ids starting with p: name a participant's strokes (p:<participant>:…, on the layer p:<participant>); choose another id"
    }

    /// A background's problem: an object with `color`, `texture` and the palette form (`palette`, `rects` inside the
    /// grid); the per-tile form is upgraded before this, so `tiles` left over are tiles off the grid or ill-formed.
    static func floorProblem(_ background: JSONValue?, _ width: Int, _ height: Int) -> String? {
        guard let background else { return nil }
        guard case .object(let members) = background else { return "background is an object {color, texture, palette, rects}" }
        if members["tiles"] != nil {
            return "background.tiles are {x, y, texture} with x, y integers inside the \(width)×\(height) grid, one per tile"
        }
        var paletteCount = 0
        if let palette = members["palette"] {
            guard case .array(let textures) = palette, textures.allSatisfy({ $0.stringValue.flatMap(Digest.init) != nil }) else {
                return "background.palette is a list of digests"
            }
            paletteCount = textures.count
        }
        if let texture = members["texture"], texture.stringValue.flatMap(Digest.init) == nil {
            return "background.texture is a digest"
        }
        guard let rects = members["rects"] else { return nil }
        guard case .array(let entries) = rects else { return "background.rects is a list" }
        for entry in entries {
            guard case .array(let items) = entry, items.count == 5 || items.count == 3 else {
                return "background.rects are [x, y, w, h, paletteIndex] or [x, y, paletteIndex]"
            }
            let numbers = items.compactMap(integer)
            guard numbers.count == items.count else { return "background.rects hold integers" }
            let (x, y) = (numbers[0], numbers[1])
            let (w, h, index) = numbers.count == 5 ? (numbers[2], numbers[3], numbers[4]) : (1, 1, numbers[2])
            guard x >= 0, y >= 0, w >= 1, h >= 1, x + w <= width, y + h <= height else {
                return "background.rects \(numbers) leaves the \(width)×\(height) grid"
            }
            guard (-1..<paletteCount).contains(index) else { return "background.rects \(numbers) names no palette entry" }
        }
        return nil
    }

    /// Whether an entity's place is on the grid: a token's or object's tile, a wall's two corners (its cell and side on
    /// hexes), a stroke's points.
    static func placeProblem(_ list: String, _ entity: [String: JSONValue], _ width: Int, _ height: Int, hex: Bool) -> String? {
        switch list {
        case "tokens", "objects":
            guard let x = integer(entity["x"]), let y = integer(entity["y"]), (0..<width).contains(x), (0..<height).contains(y) else {
                return "x and y are a tile inside the \(width)×\(height) grid"
            }
            if entity["footprint"] != nil, list == "tokens" || Table.footprint(entity["footprint"]) == nil {
                return "footprint is an object's {\"width\", \"height\"}, whole cells from 1 to 512"
            }
            if let sight = entity["sight"] {
                guard list == "tokens", case .object(let members) = sight, TableOp.isSight(members) else {
                    return "a token's sight is {\"range\": tiles from 0 to 1024 (absent: unlimited), \"sharedWith\": participant ids}"
                }
            }
        case "drawing.walls" where entity["kind"].map({ ![.string("wall"), .string("window"), .string("curtain")].contains($0) }) ?? false:
            return "a wall's kind is \"wall\", \"window\" or \"curtain\""
        case "drawing.walls" where hex:
            guard entity["from"] == nil, entity["to"] == nil, case .array(let cell)? = entity["cell"], cell.count == 2,
                let x = integer(cell[0]), let y = integer(cell[1]), (0..<width).contains(x), (0..<height).contains(y),
                let side = integer(entity["side"]), (0...5).contains(side)
            else { return "a wall on a hex map is a cell [x, y] inside the \(width)×\(height) grid and a side from 0 to 5" }
        case "drawing.walls":
            if entity["cell"] != nil || entity["side"] != nil { return "a wall on a square map runs from corner to corner" }
            for key in ["from", "to"] {
                guard case .array(let corner)? = entity[key], corner.count == 2, let x = integer(corner[0]), let y = integer(corner[1]),
                    (0...width).contains(x), (0...height).contains(y)
                else { return "\(key) is a grid corner [x, y] inside the \(width)×\(height) grid" }
            }
        default:
            guard let points = entity["points"] else { return nil }
            guard case .array(let list) = points else { return "points is a list of [x, y]" }
            for point in list {
                guard case .array(let pair) = point, pair.count == 2, case .number(let x) = pair[0], case .number(let y) = pair[1],
                    (0...Double(width)).contains(x), (0...Double(height)).contains(y)
                else { return "points are [x, y] inside the \(width)×\(height) grid" }
            }
        }
        return nil
    }

    /// The map with an id given to each wall and stroke that has none (the schema makes them optional): `wall-<n>`,
    /// `stroke-<n>` (or `p:<participant>:stroke-<n>` on a participant's layer), none taken already: ops name them by id,
    /// and views are told apart by them.
    static func withIds(_ map: JSONValue) -> JSONValue {
        guard case .object(var document) = map, case .object(var drawing)? = document["drawing"] else { return map }
        var taken: Set<String> = []
        for key in ["tokens", "objects"] {
            if case .array(let entries)? = document[key] { for entry in entries { if let id = entry["id"]?.stringValue { taken.insert(id) } } }
        }
        for key in ["walls", "strokes"] {
            if case .array(let entries)? = drawing[key] { for entry in entries { if let id = entry["id"]?.stringValue { taken.insert(id) } } }
        }
        var changed = false
        for (key, stem) in [("walls", "wall"), ("strokes", "stroke")] {
            guard case .array(var entries)? = drawing[key] else { continue }
            var next = 1
            for index in entries.indices {
                guard case .object(var entry) = entries[index], entry["id"] == nil else { continue }
                let layer = key == "strokes" ? entry["layer"]?.stringValue : nil
                let prefix = layer.map { $0.hasPrefix("p:") ? $0 + ":" : "" } ?? ""
                while taken.contains(prefix + "\(stem)-\(next)") { next += 1 }
                entry["id"] = .string(prefix + "\(stem)-\(next)")
                taken.insert(prefix + "\(stem)-\(next)")
                entries[index] = .object(entry)
                changed = true
            }
            drawing[key] = .array(entries)
        }
        guard changed else { return map }
        document["drawing"] = .object(drawing)
        return .object(document)
    }

    private static func integer(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value, number == number.rounded(), abs(number) < 1e9 else { return nil }
        return Int(number)
    }
}

/// Why a map was refused at the door: what to fix, for people.
public struct MapProblem: Error, Sendable, Hashable {
    /// What is wrong and how to fix it.
    public var message: String
}
