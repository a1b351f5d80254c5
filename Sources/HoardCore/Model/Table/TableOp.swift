/// One change to a session's table, as the live channel carries it: `{"kind": "move", "token": "t1", "x": 5, "y": 6}`.
///
/// Each kind has a JSON Schema (Schemas/op.schema.json). Parsing checks types and sizes only; whether the op applies
/// (the token exists, the place is on the grid, the sender may do it) is for ``Table/apply(_:by:)``.
public enum TableOp: Sendable, Hashable {
    /// A token to a tile.
    case move(token: String, x: Int, y: Int)
    /// A token or object placed on the table (the map schema's token or object).
    case add(TableLayer, [String: JSONValue])
    /// A token or object taken off the table.
    case remove(TableLayer, id: String)
    /// A token's label, number, status markers or layer; a null removes the label, markers or layer.
    case set(token: String, fields: [String: JSONValue])
    /// A token given to a participant (who may then move it), or taken back (nil).
    case assign(token: String, owner: String?)
    /// A token hidden from the players (its owner still sees it).
    case hide(token: String)
    /// A hidden token shown to everyone.
    case reveal(token: String)
    /// A free-hand stroke added to a drawing layer.
    case stroke([String: JSONValue])
    /// A stroke removed.
    case erase(stroke: String)
    /// Pointing at a place (tile units); live only, not kept.
    case ping(x: Double, y: Double)
    /// Text to everyone, or to the named participants (`"host"` names the host).
    case message(text: String, to: [String]?)
    /// An app's own payload, relayed to everyone as it is.
    case custom(JSONValue)
    /// Who sees a drawing or token layer (the host always does).
    case layer(name: String, visibleTo: Audience)
    /// A token shown to some participants for some seconds, then hidden from them again by the server (`reveal` with
    /// `to` and `seconds` on the wire): the host's glimpse of any token, a player's taunt with their own.
    case glimpse(token: String, to: [String], seconds: Int)
    /// A glimpse ended for these participants (`hide` with `from`): what the server sends when its time is up.
    case unglimpse(token: String, from: [String])
    /// Tiles of the floor painted with a texture, or unpainted (nil: the default texture shows).
    case paint(rects: [TileRect], texture: Digest?)
    /// A wall segment or door added (the map schema's wall, with an `id`).
    case addWall([String: JSONValue])
    /// A wall segment or door taken away.
    case removeWall(id: String)
    /// A door opened or closed.
    case door(wall: String, open: Bool)
    /// Fog of war turned on or off, or areas revealed to the players or covered again.
    case fog(FogChange)
    /// Vision turned on or off, or what some participants explored forgotten.
    case vision(VisionChange)
    /// The session's settings: whether players may open and close doors.
    case settings(playersOpenDoors: Bool)
    /// What the server tells a token's owner: these participants glimpsed it. Never applied.
    case seen(token: String, by: [String])
    /// What the server tells a participant whose view an op changed while vision is on (``ViewChange``). Never applied.
    case view(ViewChange)
    /// Dice for the server to roll (``DiceRequest``); it logs a `rolled` event with every die, not the op.
    case roll(DiceRequest)
    /// The jukebox: `play`, `pause`, `stop` or `volume` on a channel, stamped with the server's clock.
    case audio(AudioCommand)
    /// Someone's dice for their rolls (`dice` on the wire): a `dice` asset of the session's group or a public pack, or
    /// none (nil). `by` is who chose: the server sets it to the sender (a participant id, `host:<member id>`).
    case chooseDice(by: String, asset: Digest?)

    /// What a `fog` op does.
    public enum FogChange: Sendable, Hashable {
        case enabled(Bool)
        case reveal([TileRect])
        case cover([TileRect])
    }

    /// What a `vision` op does.
    public enum VisionChange: Sendable, Hashable {
        case enabled(Bool)
        case forget([String])
    }

    /// The two layers `add` and `remove` reach.
    public enum TableLayer: String, Sendable, Hashable {
        case token
        case object
    }

    /// Every kind, as the wire names it.
    public static let kinds = [
        "move", "add", "remove", "set", "assign", "hide", "reveal", "stroke", "erase", "ping", "message", "custom", "layer",
        "paint", "wall", "door", "fog", "vision", "settings", "seen", "view", "roll", "dice", "play", "pause", "stop", "volume",
    ]

    /// Longest glimpse, in seconds.
    public static let maxGlimpse = 600

    /// Longest id of a token, object, stroke or layer; longest label.
    public static let maxId = 64
    /// Most points in one stroke.
    public static let maxPoints = 10_000
    /// Longest message text.
    public static let maxText = 2_000

    /// The op's kind on the wire.
    public var kind: String {
        switch self {
        case .move: "move"
        case .add: "add"
        case .remove: "remove"
        case .set: "set"
        case .assign: "assign"
        case .hide, .unglimpse: "hide"
        case .reveal, .glimpse: "reveal"
        case .stroke: "stroke"
        case .erase: "erase"
        case .ping: "ping"
        case .message: "message"
        case .custom: "custom"
        case .layer: "layer"
        case .paint: "paint"
        case .addWall, .removeWall: "wall"
        case .door: "door"
        case .fog: "fog"
        case .vision: "vision"
        case .settings: "settings"
        case .seen: "seen"
        case .view: "view"
        case .roll: "roll"
        case .audio(let command): command.action.rawValue
        case .chooseDice: "dice"
        }
    }

    /// Reads an op; throws `BAD_OP` with what is wrong.
    public init(json: JSONValue) throws(TableError) {
        guard case .object(let op) = json else { throw TableError(.badOp, "an op is a JSON object with a \"kind\"") }
        guard let kind = op["kind"]?.stringValue else {
            throw TableError(.badOp, "an op needs a \"kind\": one of \(Self.kinds.joined(separator: ", "))")
        }
        var fields = Fields(op, kind: kind)
        switch kind {
        case "move":
            self = .move(token: try fields.id("token"), x: try fields.tile("x"), y: try fields.tile("y"))
        case "add", "remove":
            let layer: TableLayer = op["token"] != nil ? .token : .object
            if kind == "add" {
                let entity = try fields.object(layer.rawValue)
                self = .add(layer, layer == .token ? try Self.token(entity) : try Self.object(entity))
            } else {
                self = .remove(layer, id: try fields.id(layer.rawValue))
            }
        case "set":
            let token = try fields.id("token")
            var changes: [String: JSONValue] = [:]
            for (key, value) in op where key != "kind" && key != "token" {
                guard ["label", "number", "markers", "layer", "sight"].contains(key) else { continue }
                fields.consumed.insert(key)
                if value == .null, key != "number" { changes[key] = .null; continue }
                changes[key] = try Self.tokenField(key, value)
            }
            guard !changes.isEmpty else { throw TableError(.badOp, "set changes label, number, markers, layer or sight; give at least one") }
            self = .set(token: token, fields: changes)
        case "assign":
            let token = try fields.id("token")
            fields.consumed.insert("owner")
            switch op["owner"] {
            case nil, .null?: self = .assign(token: token, owner: nil)
            case .string(let owner)? where (1...Self.maxId).contains(owner.count): self = .assign(token: token, owner: owner)
            default: throw TableError(.badOp, "assign's \"owner\" is a participant id, or null to take the token back")
            }
        case "hide":
            let token = try fields.id("token")
            self = op["from"] == nil ? .hide(token: token) : .unglimpse(token: token, from: try fields.participants("from"))
        case "reveal":
            let token = try fields.id("token")
            if op["to"] == nil, op["seconds"] == nil {
                self = .reveal(token: token)
            } else {
                let to = try fields.participants("to")
                fields.consumed.insert("seconds")
                guard case .number(let seconds)? = op["seconds"], seconds == seconds.rounded(), (1...Double(Self.maxGlimpse)).contains(seconds)
                else { throw TableError(.badOp, "a glimpse's \"seconds\" is a whole number from 1 to \(Self.maxGlimpse)") }
                self = .glimpse(token: token, to: to, seconds: Int(seconds))
            }
        case "seen": self = .seen(token: try fields.id("token"), by: try fields.participants("by"))
        case "view":
            guard let change = ViewChange(op) else {
                throw TableError(.badOp, "a view op has tokens, objects and walls (objects), removed (ids), explored and seen (rectangles)")
            }
            fields.consumed.formUnion(op.keys)
            self = .view(change)
        case "paint":
            let rects = try fields.rects("rects")
            fields.consumed.insert("texture")
            switch op["texture"] {
            case nil, .null?: self = .paint(rects: rects, texture: nil)
            default: self = .paint(rects: rects, texture: try fields.digest("texture"))
            }
        case "wall":
            switch (op["add"], op["remove"]) {
            case (let wall?, nil):
                fields.consumed.insert("add")
                guard case .object(let members) = wall else { throw TableError(.badOp, "wall's \"add\" is a wall object") }
                self = .addWall(try Self.wall(members))
            case (nil, .some): self = .removeWall(id: try fields.id("remove"))
            default: throw TableError(.badOp, "a wall op has \"add\" (a wall) or \"remove\" (a wall's id)")
            }
        case "door":
            let wall = try fields.id("wall")
            self = .door(wall: wall, open: try fields.bool("open"))
        case "fog":
            switch (op["enabled"], op["reveal"], op["cover"]) {
            case (.some, nil, nil): self = .fog(.enabled(try fields.bool("enabled")))
            case (nil, .some, nil): self = .fog(.reveal(try fields.rects("reveal")))
            case (nil, nil, .some): self = .fog(.cover(try fields.rects("cover")))
            default: throw TableError(.badOp, "a fog op has one of \"enabled\" (true or false), \"reveal\" or \"cover\" (rectangles)")
            }
        case "vision":
            switch (op["enabled"], op["forget"]) {
            case (.some, nil): self = .vision(.enabled(try fields.bool("enabled")))
            case (nil, .some): self = .vision(.forget(try fields.participants("forget")))
            default: throw TableError(.badOp, "a vision op has \"enabled\" (true or false) or \"forget\" (participant ids)")
            }
        case "settings": self = .settings(playersOpenDoors: try fields.bool("playersOpenDoors"))
        case "stroke": self = .stroke(try Self.stroke(try fields.object("stroke")))
        case "erase": self = .erase(stroke: try fields.id("stroke"))
        case "ping": self = .ping(x: try fields.coordinate("x"), y: try fields.coordinate("y"))
        case "message":
            self = .message(text: try fields.string("text", max: Self.maxText), to: try fields.recipients())
        case "roll": self = .roll(try DiceRequest(&fields))
        case "play", "pause", "stop", "volume":
            self = .audio(try AudioCommand(AudioCommand.Action(rawValue: kind) ?? .play, &fields))
        case "dice":
            fields.consumed.formUnion(["by", "asset"])
            guard case .string(let by) = op["by"] ?? .string(""), by.count <= 2 * Self.maxId else {
                throw TableError(.badOp, "dice's \"by\" is who chose them; the server sets it")
            }
            switch op["asset"] {
            case nil, .null?: self = .chooseDice(by: by, asset: nil)
            default: self = .chooseDice(by: by, asset: try fields.digest("asset"))
            }
        case "custom":
            fields.consumed.insert("payload")
            guard let payload = op["payload"] else { throw TableError(.badOp, "custom needs a \"payload\"") }
            self = .custom(payload)
        case "layer":
            let name = try fields.id("layer")
            fields.consumed.insert("visibleTo")
            guard let value = op["visibleTo"], value != .null, let audience = Audience(json: value),
                !audience.isComplement || audience.ids.isEmpty
            else {
                throw TableError(.badOp, "layer's \"visibleTo\" is \"*\" (everyone) or a list of participant ids ([] for the host only)")
            }
            self = .layer(name: name, visibleTo: audience)
        default:
            throw TableError(.badOp, "unknown op kind '\(kind.prefix(40))'; the kinds are \(Self.kinds.joined(separator: ", "))")
        }
        try fields.checkAllConsumed()
    }

    /// The op in its wire form.
    public var json: JSONValue {
        var op: [String: JSONValue] = ["kind": .string(kind)]
        switch self {
        case .move(let token, let x, let y):
            op["token"] = .string(token)
            op["x"] = .number(Double(x))
            op["y"] = .number(Double(y))
        case .add(let layer, let entity): op[layer.rawValue] = .object(entity)
        case .remove(let layer, let id): op[layer.rawValue] = .string(id)
        case .set(let token, let fields):
            op["token"] = .string(token)
            op.merge(fields) { $1 }
        case .assign(let token, let owner):
            op["token"] = .string(token)
            op["owner"] = owner.map(JSONValue.string) ?? .null
        case .hide(let token), .reveal(let token): op["token"] = .string(token)
        case .glimpse(let token, let to, let seconds):
            op["token"] = .string(token)
            op["to"] = .array(to.map(JSONValue.string))
            op["seconds"] = .number(Double(seconds))
        case .unglimpse(let token, let from):
            op["token"] = .string(token)
            op["from"] = .array(from.map(JSONValue.string))
        case .seen(let token, let by):
            op["token"] = .string(token)
            op["by"] = .array(by.map(JSONValue.string))
        case .view(let change): op.merge(change.fields) { $1 }
        case .paint(let rects, let texture):
            op["rects"] = .array(rects.map(\.json))
            op["texture"] = texture.map { .string($0.description) } ?? .null
        case .addWall(let wall): op["add"] = .object(wall)
        case .removeWall(let id): op["remove"] = .string(id)
        case .door(let wall, let open):
            op["wall"] = .string(wall)
            op["open"] = .bool(open)
        case .fog(.enabled(let enabled)): op["enabled"] = .bool(enabled)
        case .fog(.reveal(let rects)): op["reveal"] = .array(rects.map(\.json))
        case .fog(.cover(let rects)): op["cover"] = .array(rects.map(\.json))
        case .vision(.enabled(let enabled)): op["enabled"] = .bool(enabled)
        case .vision(.forget(let ids)): op["forget"] = .array(ids.map(JSONValue.string))
        case .settings(let playersOpenDoors): op["playersOpenDoors"] = .bool(playersOpenDoors)
        case .stroke(let stroke): op["stroke"] = .object(stroke)
        case .erase(let stroke): op["stroke"] = .string(stroke)
        case .ping(let x, let y):
            op["x"] = .number(x)
            op["y"] = .number(y)
        case .message(let text, let to):
            op["text"] = .string(text)
            if let to { op["to"] = .array(to.map(JSONValue.string)) }
        case .roll(let request): op.merge(request.fields) { $1 }
        case .audio(let command): op.merge(command.fields) { $1 }
        case .chooseDice(let by, let asset):
            if !by.isEmpty { op["by"] = .string(by) }
            op["asset"] = asset.map { .string($0.description) } ?? .null
        case .custom(let payload): op["payload"] = payload
        case .layer(let name, let audience):
            op["layer"] = .string(name)
            op["visibleTo"] = audience.json
        }
        return .object(op)
    }

    /// The art an op brings onto the table (what the server must hold, and the session may then reach).
    public var art: Set<Digest> {
        switch self {
        case .add(_, let entity), .addWall(let entity): JSONValue.object(entity).referencedDigests
        case .custom(let payload): payload.referencedDigests
        case .paint(_, let texture?), .chooseDice(_, let texture?): [texture]
        case .audio(let command): command.track.map { [$0] } ?? []
        default: []
        }
    }

    // MARK: Entities

    /// A wall as the map schema has it, with the `id` ops name it by: from corner to corner (square maps) or along a
    /// side of a cell (hex maps: `cell` [x, y] and `side` 0 to 5).
    static func wall(_ entity: [String: JSONValue]) throws(TableError) -> [String: JSONValue] {
        var fields = Fields(entity, kind: "a wall", isEntity: true)
        _ = try fields.id("id")
        func isPair(_ value: JSONValue?, upTo limit: Double) -> Bool {
            guard case .array(let pair)? = value, pair.count == 2 else { return false }
            return pair.allSatisfy { if case .number(let v) = $0 { v == v.rounded() && (0...limit).contains(v) } else { false } }
        }
        if entity["cell"] != nil || entity["side"] != nil {
            fields.consumed.formUnion(["cell", "side"])
            guard isPair(entity["cell"], upTo: 511), case .number(let side)? = entity["side"], side == side.rounded(), (0...5).contains(side)
            else { throw TableError(.badOp, "a hex wall is a \"cell\" [x, y] (integers from 0 to 511) and a \"side\" from 0 to 5") }
        } else {
            for key in ["from", "to"] {
                fields.consumed.insert(key)
                guard isPair(entity[key], upTo: 512) else {
                    throw TableError(.badOp, "a wall's \"\(key)\" is a grid corner [x, y], integers from 0 to 512")
                }
            }
        }
        if entity["texture"] != nil { _ = try fields.digest("texture") }
        for key in ["door", "open"] where entity[key] != nil { _ = try fields.bool(key) }
        if let kind = entity["kind"] {
            fields.consumed.insert("kind")
            guard kind == .string("wall") || kind == .string("window") || kind == .string("curtain") else {
                throw TableError(.badOp, "a wall's \"kind\" is \"wall\", \"window\" (does not block sight) or \"curtain\" (blocks only sight)")
            }
        }
        try fields.checkAllConsumed()
        return entity
    }

    /// A token as the map schema has it; checked field by field.
    static func token(_ entity: [String: JSONValue]) throws(TableError) -> [String: JSONValue] {
        var fields = Fields(entity, kind: "a token", isEntity: true)
        try fields.placement()
        for key in ["number", "label", "owner", "hidden", "markers", "layer", "sight"] {
            guard let value = entity[key] else {
                if key == "number" { throw TableError(.badOp, "a token needs a \"number\" (0 to 999)") }
                continue
            }
            fields.consumed.insert(key)
            _ = try tokenField(key, value)
        }
        try fields.checkAllConsumed()
        return entity
    }

    static func tokenField(_ key: String, _ value: JSONValue) throws(TableError) -> JSONValue {
        switch (key, value) {
        case ("number", .number(let number)) where number == number.rounded() && (0...999).contains(number): return value
        case ("label", .string(let text)) where text.count <= maxId: return value
        case ("owner", .string(let text)) where (1...maxId).contains(text.count): return value
        case ("layer", .string(let text)) where (1...maxId).contains(text.count): return value
        case ("hidden", .bool): return value
        case ("sight", .object(let sight)) where Self.isSight(sight): return value
        case ("markers", .array(let items))
        where items.count <= 16 && items.allSatisfy({ ($0.stringValue?.count).map { (1...32).contains($0) } == true }):
            return value
        default:
            throw TableError(
                .badOp,
                "a token's \(key) is "
                    + [
                        "number": "an integer from 0 to 999", "label": "a string of at most 64 characters",
                        "owner": "a participant id", "layer": "a layer name of 1 to 64 characters", "hidden": "true or false",
                        "markers": "a list of at most 16 strings of 1 to 32 characters",
                        "sight": "{\"range\": tiles from 0 to 1024 (absent: unlimited), \"sharedWith\": up to 64 participant ids}",
                    ][key, default: "not a token field"])
        }
    }

    /// A token's `sight`: an optional whole `range` from 0 to 1024 tiles and an optional `sharedWith` list of up to 64
    /// participant ids.
    static func isSight(_ sight: [String: JSONValue]) -> Bool {
        for (key, value) in sight {
            switch (key, value) {
            case ("range", .number(let range)) where range == range.rounded() && (0...1024).contains(range): continue
            case ("sharedWith", .array(let ids))
            where ids.count <= 64 && ids.allSatisfy({ ($0.stringValue?.count).map { (1...maxId).contains($0) } == true }):
                continue
            default: return false
            }
        }
        return true
    }

    static func object(_ entity: [String: JSONValue]) throws(TableError) -> [String: JSONValue] {
        var fields = Fields(entity, kind: "an object", isEntity: true)
        try fields.placement()
        if let rotation = entity["rotation"] {
            fields.consumed.insert("rotation")
            guard case .number(let degrees) = rotation, [0, 90, 180, 270].contains(degrees) else {
                throw TableError(.badOp, "an object's rotation is 0, 90, 180 or 270")
            }
        }
        if let footprint = entity["footprint"] {
            fields.consumed.insert("footprint")
            guard Table.footprint(footprint) != nil else {
                throw TableError(.badOp, "an object's footprint is {\"width\", \"height\"}, whole cells from 1 to 512")
            }
        }
        try fields.checkAllConsumed()
        return entity
    }

    static func stroke(_ entity: [String: JSONValue]) throws(TableError) -> [String: JSONValue] {
        var fields = Fields(entity, kind: "a stroke", isEntity: true)
        _ = try fields.id("id")
        let color = try fields.string("color", max: 7)
        guard color.utf8.count == 7, color.hasPrefix("#"),
            color.utf8.dropFirst().allSatisfy({ $0 < 128 && Character(Unicode.Scalar($0)).isHexDigit })
        else { throw TableError(.badOp, "a stroke's color is #rrggbb") }
        fields.consumed.insert("width")
        guard case .number(let width)? = entity["width"], width > 0, width <= 4 else {
            throw TableError(.badOp, "a stroke's width is over 0 and at most 4 tiles")
        }
        fields.consumed.insert("points")
        guard case .array(let points)? = entity["points"], (2...maxPoints).contains(points.count) else {
            throw TableError(.badOp, "a stroke has 2 to \(maxPoints) points")
        }
        for point in points {
            guard case .array(let pair) = point, pair.count == 2, case .number(let x) = pair[0], case .number(let y) = pair[1],
                (0...512).contains(x), (0...512).contains(y)
            else { throw TableError(.badOp, "a stroke's points are [x, y] pairs from 0 to 512 (tile units)") }
        }
        if let layer = entity["layer"] {
            fields.consumed.insert("layer")
            guard let name = layer.stringValue, (1...maxId).contains(name.count) else {
                throw TableError(.badOp, "a stroke's layer is a name of 1 to 64 characters")
            }
        }
        try fields.checkAllConsumed()
        return entity
    }
}

/// Reads an op's fields one by one and remembers which it read, so that a field the kind does not have is refused.
struct Fields {
    let members: [String: JSONValue]
    let kind: String
    var consumed: Set<String> = ["kind"]

    /// `kind` names what is read in messages; an entity (a token, object or stroke) has no `kind` field of its own.
    init(_ members: [String: JSONValue], kind: String, isEntity: Bool = false) {
        self.members = members
        self.kind = kind
        if isEntity { consumed = [] }
    }

    /// What every placed entity has: an `id`, its `asset` and its top-left tile.
    mutating func placement() throws(TableError) {
        _ = try id("id")
        _ = try digest("asset")
        _ = try tile("x")
        _ = try tile("y")
    }

    mutating func id(_ key: String) throws(TableError) -> String {
        try string(key, max: TableOp.maxId)
    }

    /// `to` of a message or a roll: nil (absent or null) for everyone, else 1 to 64 participant ids (or `"host"`).
    mutating func recipients() throws(TableError) -> [String]? {
        consumed.insert("to")
        switch members["to"] {
        case nil, .null?: return nil
        case .array(let items)? where (1...64).contains(items.count):
            let names = items.compactMap(\.stringValue).filter { (1...TableOp.maxId).contains($0.count) }
            guard names.count == items.count else { throw TableError(.badOp, "\(kind)'s \"to\" lists participant ids (or \"host\")") }
            return names
        default: throw TableError(.badOp, "\(kind)'s \"to\" is a list of 1 to 64 participant ids, or absent for everyone")
        }
    }

    mutating func string(_ key: String, max: Int) throws(TableError) -> String {
        consumed.insert(key)
        guard let text = members[key]?.stringValue, (1...max).contains(text.count) else {
            throw TableError(.badOp, "\(kind) needs \"\(key)\": a string of 1 to \(max) characters")
        }
        return text
    }

    mutating func digest(_ key: String) throws(TableError) -> Digest {
        consumed.insert(key)
        guard let text = members[key]?.stringValue, let digest = Digest(text) else {
            throw TableError(.badOp, "\(kind) needs \"\(key)\": a digest (sha256:<64 lowercase hex>)")
        }
        return digest
    }

    mutating func tile(_ key: String) throws(TableError) -> Int {
        consumed.insert(key)
        guard case .number(let value)? = members[key], value == value.rounded(), (0...511).contains(value) else {
            throw TableError(.badOp, "\(kind) needs \"\(key)\": a tile, an integer from 0 to 511")
        }
        return Int(value)
    }

    mutating func coordinate(_ key: String) throws(TableError) -> Double {
        consumed.insert(key)
        guard case .number(let value)? = members[key], (0...512).contains(value) else {
            throw TableError(.badOp, "\(kind) needs \"\(key)\": a number from 0 to 512 (tile units)")
        }
        return value
    }

    mutating func bool(_ key: String) throws(TableError) -> Bool {
        consumed.insert(key)
        guard case .bool(let value)? = members[key] else { throw TableError(.badOp, "\(kind) needs \"\(key)\": true or false") }
        return value
    }

    /// A list of 1 to 64 participant ids.
    mutating func participants(_ key: String) throws(TableError) -> [String] {
        consumed.insert(key)
        guard case .array(let items)? = members[key], (1...64).contains(items.count) else {
            throw TableError(.badOp, "\(kind) needs \"\(key)\": a list of 1 to 64 participant ids")
        }
        let ids = items.compactMap(\.stringValue).filter { (1...TableOp.maxId).contains($0.count) }
        guard ids.count == items.count else { throw TableError(.badOp, "\(kind)'s \"\(key)\" lists participant ids (strings of 1 to 64 characters)") }
        return ids
    }

    /// A list of 1 to ``TileRect/maxPerOp`` rectangles `[x, y, w, h]`.
    mutating func rects(_ key: String) throws(TableError) -> [TileRect] {
        consumed.insert(key)
        guard case .array(let items)? = members[key], (1...TileRect.maxPerOp).contains(items.count) else {
            throw TableError(.badOp, "\(kind) needs \"\(key)\": a list of 1 to \(TileRect.maxPerOp) rectangles [x, y, w, h]")
        }
        let rects = items.compactMap(TileRect.init(json:))
        guard rects.count == items.count else {
            throw TableError(.badOp, "\(kind)'s \"\(key)\" holds rectangles [x, y, w, h]: a tile (0 to 511) and sides of 1 to 512")
        }
        guard rects.reduce(0, { $0 + $1.w * $1.h }) <= TileRect.maxTilesPerOp else {
            throw TableError(.badOp, "\(kind)'s \"\(key)\" covers more than \(TileRect.maxTilesPerOp) tiles (overlaps counted); send it in parts")
        }
        return rects
    }

    mutating func object(_ key: String) throws(TableError) -> [String: JSONValue] {
        consumed.insert(key)
        guard case .object(let object)? = members[key] else { throw TableError(.badOp, "\(kind) needs \"\(key)\": an object") }
        return object
    }

    func checkAllConsumed() throws(TableError) {
        if let extra = members.keys.filter({ !consumed.contains($0) }).sorted().first {
            throw TableError(.badOp, "\(kind) has no field '\(extra.prefix(40))'")
        }
    }
}
