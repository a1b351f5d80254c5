/// A game session's table as the server holds it: the map document (`hoard.map/v1`) with the ops applied, and
/// who may see what. Pure state, no I/O: the server applies ops to it in sequence order, replays its log into it after
/// a restart, and asks it for each participant's view.
///
/// The document is kept split: the members ops change (tokens, objects, strokes, layer visibility) as ordered,
/// indexed lists, everything else as it came. A map that is not a JSON object is *opaque*: only `ping`, `message`
/// and `custom` apply to it.
public struct Table: Sendable {
    /// Who acts.
    public enum Actor: Sendable, Hashable {
        /// The session's host: may do anything.
        case host
        /// A participant, by id.
        case participant(String)
    }

    /// One op applied: what to log and what each participant is sent.
    public struct Change: Sendable {
        /// The op as applied: what the host is sent, what the log keeps, what a replay applies again.
        public var op: TableOp
        /// What participants are sent, when not everyone sees ``op``: disjoint audiences, each with its op, or with
        /// nil when the op changes too much of their view to say as one op (they are sent their whole view again).
        /// Participants in none are sent nothing. nil: everyone is sent ``op``.
        public var views: [View]?
        /// Art the op puts in front of someone: for each audience, the digests it now shows them (the host included).
        public var art: [(audience: Audience, digests: Set<Digest>)]
        /// Whether the op is kept (logged and folded into the map); a `ping` is not.
        public var isKept: Bool { if case .ping = op { false } else { true } }
        /// Whether who-may-fetch-which-art changed (``artAudiences(extra:)`` is worth asking again).
        public var changesVisibility: Bool
        /// Ambient sounds participants start or stop hearing (a token moved, a door opened…): participant → channel id →
        /// the channel they now hear, or nil for one they no longer hear.
        public var heard: [String: [String: AudioChannel?]] = [:]
        /// When the op changed who may fetch which art for some participants only: them (whoever is not in it may fetch
        /// exactly what they could before). nil: for anyone (ask ``artAudiences(extra:)`` again).
        public var artAffected: Set<String>? = nil
    }

    /// What some participants are sent for one op.
    public struct View: Sendable {
        /// Who.
        public var audience: Audience
        /// The op they are sent; nil: their whole view again.
        public var op: TableOp?
    }

    /// The map's grid, in tiles (512 × 512 when the map has none).
    public private(set) var width: Int
    public private(set) var height: Int
    /// Whether the map is not a JSON object (no tokens, objects or strokes to change).
    public let isOpaque: Bool
    /// The map's grid (square when it names none). On hexes a token or object covers its footprint's hexes
    /// (``Grid/cells(of:at:)``): every one of them must be on the map, and it is seen when fog reveals any of them.
    public let grid: Grid
    /// The footprints of the art the table places, by digest: what the server resolved from the catalog (art it did
    /// not resolve covers one cell). Only hex maps read them; a square map checks and shows a place by its tile.
    public var footprints: [Digest: Footprint] = [:]

    var document: [String: JSONValue]
    var drawing: [String: JSONValue]
    var tokens: EntityList
    var objects: EntityList
    var strokes: EntityList
    var walls: EntityList
    var layers: [String: Audience]
    /// The floor in the palette form; nil when the map's `background` is in another shape (then it stays in
    /// ``document``, seen by everyone, and cannot be painted).
    var floor: Floor?
    /// Fog of war, when the map has it (on or off).
    var fog: Fog?
    /// Vision, when the map has it (on or off), with the tiles each participant explored.
    var vision: Vision?
    /// The walls that block sight.
    var sightMap: SightMap
    /// While vision is on: the tiles each token with sight sees now, by token id.
    var tokenSeen: [String: [Int]] = [:]
    /// While vision is on: the tiles each participant sees now through their tokens and those shared with them.
    var lit: [String: TileSet] = [:]
    /// Tokens being glimpsed → by whom (``TableOp/glimpse(token:to:seconds:)``); not part of the map.
    public internal(set) var glimpses: [String: Set<String>] = [:]
    /// Digests referenced outside the floor, walls, tokens, objects and strokes: seen by everyone.
    let fixedArt: Set<Digest>
    /// The jukebox's channels by id (``AudioChannel``), kept in the map document's `audio` member.
    var audio: [String: AudioChannel] = [:]
    /// Art that `custom` ops named: everyone's (kept while the table is in memory; a fold does not keep it).
    public internal(set) var customArt: Set<Digest> = []
    let original: JSONValue?

    /// Reads a map document; with vision on, works out what each token sees.
    public init(map: JSONValue) {
        self.init(reading: map)
        if !isOpaque { sightMap = SightMap(grid: grid, width: width, height: height, walls: walls.items) }
        if isVisionOn { updateSight(of: nil) }
    }

    private init(reading map: JSONValue) {
        guard case .object(var document) = map else {
            (width, height, isOpaque, original, grid) = (512, 512, true, map, .square)
            (self.document, self.drawing, layers, fixedArt) = ([:], [:], [:], map.referencedDigests)
            (tokens, objects, strokes, walls) = (EntityList(nil), EntityList(nil), EntityList(nil), EntityList(nil))
            sightMap = SightMap(grid: .square, width: 1, height: 1)
            return
        }
        width = Self.side(map["grid"]?["width"])
        height = Self.side(map["grid"]?["height"])
        grid = Grid(map: map["grid"]) ?? .square
        var drawing: [String: JSONValue] = [:]
        if case .object(let members)? = document["drawing"] { drawing = members }
        tokens = EntityList(document.removeValue(forKey: "tokens"))
        objects = EntityList(document.removeValue(forKey: "objects"))
        strokes = EntityList(drawing.removeValue(forKey: "strokes"))
        walls = EntityList(drawing.removeValue(forKey: "walls"))
        floor = Floor(document["background"], width: width, height: height)
        if floor != nil, document["background"] != nil { document["background"] = .object([:]) }
        fog = Fog(document["fog"], width: width, height: height)
        if fog != nil { document["fog"] = .object([:]) }
        if case .object(let channels)? = document.removeValue(forKey: "audio") {
            audio = channels.compactMapValues(AudioChannel.init(json:))
        }
        vision = Vision(document["vision"], width: width, height: height)
        if vision != nil { document["vision"] = .object([:]) }
        sightMap = SightMap(grid: .square, width: 1, height: 1)
        var layers: [String: Audience] = [:]
        if case .object(let entries)? = drawing.removeValue(forKey: "layers") {
            for (name, value) in entries { if let audience = Audience(json: value) { layers[name] = audience } }
        }
        self.layers = layers
        if document["drawing"] != nil { document["drawing"] = .object([:]) }
        // Entries of the lists that are not objects (an app's own shapes) are shown to everyone as they are.
        let loose = (tokens.entries + objects.entries + strokes.entries + walls.entries).filter {
            if case .object = $0 { false } else { true }
        }
        fixedArt = JSONValue.object(document).referencedDigests.union(JSONValue.object(drawing).referencedDigests)
            .union(JSONValue.array(loose).referencedDigests)
        self.document = document
        self.drawing = drawing
        isOpaque = false
        original = nil
    }

    private static func side(_ value: JSONValue?) -> Int {
        guard case .number(let number)? = value, number == number.rounded(), (1...512).contains(number) else { return 512 }
        return Int(number)
    }

    // MARK: The document and views

    /// The whole map as it is now (the host's view).
    public var map: JSONValue { view(for: .host) }

    /// The map as `viewer` may see it: without the tokens and strokes on layers hidden from them, and without hidden
    /// tokens they do not own.
    public func view(for viewer: Actor) -> JSONValue {
        if let original { return original }
        var document = self.document
        var drawing = self.drawing
        let fog: Fog? = if case .participant(let id) = viewer { floorFog(for: id) } else { nil }
        if let floor, document["background"] != nil || floor.isPainted { document["background"] = floor.json(under: fog) }
        if let state = self.fog { document["fog"] = state.json }
        if let vision {
            let only: String? = if case .participant(let id) = viewer { id } else { nil }
            document["vision"] = vision.json(width: width, height: height, seen: lit, only: only)
        }
        tokens.write(into: &document, key: "tokens", keeping: isVisible(to: viewer, audience: tokenAudience))
        objects.write(into: &document, key: "objects", keeping: isVisible(to: viewer, audience: objectAudience))
        walls.write(into: &drawing, key: "walls", keeping: isVisible(to: viewer, audience: wallAudience))
        strokes.write(into: &drawing, key: "strokes", keeping: isVisible(to: viewer, audience: strokeAudience))
        if !layers.isEmpty { drawing["layers"] = .object(layers.mapValues(\.json)) }
        if document["drawing"] != nil || !drawing.isEmpty { document["drawing"] = .object(drawing) }
        let heard = audio.filter { if case .participant(let id) = viewer { audience(of: $0.value).contains(id) } else { true } }
        if !heard.isEmpty { document["audio"] = .object(heard.mapValues(\.json)) }
        return .object(document)
    }

    /// What tells `viewer`'s view apart from other viewers' of this same state: the places, in their lists, of the
    /// tokens and strokes they do not see (two participants with the same key see the same map), or `host`. Made of
    /// numbers only, so no id (ids are the client's strings) can make two different views share a key.
    public func viewKey(for viewer: Actor) -> String {
        guard case .participant(let participant) = viewer else { return "host" }
        // With vision on, what each participant sees and explored is their own.
        if isVisionOn { return "v\(participant.utf8.count):" + participant }
        let seesToken = isVisible(to: viewer, audience: tokenAudience)
        let seesStroke = isVisible(to: viewer, audience: strokeAudience)
        // The floor, walls and objects are the same for every participant.
        func unseen(_ list: EntityList, _ sees: ([String: JSONValue]) -> Bool) -> String {
            list.entries.indices.filter { if case .object(let members) = list.entries[$0] { !sees(members) } else { false } }
                .map(String.init).joined(separator: ",")
        }
        let unheard = audio.keys.sorted().enumerated().filter { audio[$0.element].map { !audience(of: $0).contains(participant) } ?? false }
        return "t" + unseen(tokens, seesToken) + "s" + unseen(strokes, seesStroke) + "a" + unheard.map { String($0.offset) }.joined(separator: ",")
    }

    /// Who sees the token, object, wall or stroke with this id (the host always does); nil when none has it.
    public func audience(ofEntity id: String) -> Audience? {
        if let token = tokens[id] { return tokenAudience(token) }
        if let object = objects[id] { return objectAudience(object) }
        if let stroke = strokes[id] { return strokeAudience(stroke) }
        if let wall = walls[id] { return wallAudience(wall) }
        return nil
    }

    private func isVisible(to viewer: Actor, audience: @escaping ([String: JSONValue]) -> Audience) -> ([String: JSONValue]) -> Bool {
        switch viewer {
        case .host: { _ in true }
        case .participant(let id): { audience($0).contains(id) }
        }
    }

    /// Who sees a token: its layer's audience while it is neither hidden nor under fog; always its owner, and those
    /// glimpsing it.
    func tokenAudience(_ token: [String: JSONValue]) -> Audience {
        var audience =
            token["hidden"] == .bool(true) ? .nobody : layerAudience(token["layer"]?.stringValue).intersection(placeAudience(token))
        if let owner = token["owner"]?.stringValue { audience = audience.union(.only([owner])) }
        if let id = token["id"]?.stringValue, let glimpsing = glimpses[id] { audience = audience.union(.only(glimpsing)) }
        return audience
    }

    /// The fog while it is on.
    var activeFog: Fog? { fog?.isEnabled == true ? fog : nil }

    /// Who sees what stands on the grid: everyone unless fog covers its tile (on squares, its top-left tile) or every
    /// hex of its footprint (on hexes).
    func placeAudience(_ entity: [String: JSONValue]) -> Audience {
        if isVisionOn { return tilesAudience(cells(of: entity), seenBy: lit) }
        guard let fog = activeFog else { return .everyone }
        return cells(of: entity).contains { fog.reveals($0.x, $0.y) } ? .everyone : .nobody
    }

    /// The cells a token or object stands on, as the table judges them: its tile on squares, its footprint's hexes on
    /// hexes (one hex when its art is not resolved or its size is past 4).
    func cells(of entity: [String: JSONValue]) -> [Cell] {
        let anchor = Cell(x: Self.int(entity["x"]), y: Self.int(entity["y"]))
        guard case .hex = grid else { return [anchor] }
        let footprint = Self.footprint(entity["footprint"])
            ?? entity["asset"]?.stringValue.flatMap(Digest.init).flatMap { footprints[$0] } ?? .single
        return grid.cells(of: footprint, at: anchor) ?? [anchor]
    }

    /// An object's own `footprint` (`{"width", "height"}`, whole cells from 1 to 512), or nil.
    static func footprint(_ value: JSONValue?) -> Footprint? {
        guard case .object(let members)? = value, members.count == 2, case .number(let w)? = members["width"],
            case .number(let h)? = members["height"], w == w.rounded(), h == h.rounded(), abs(w) <= 512, abs(h) <= 512
        else { return nil }
        return Footprint(width: Int(w), height: Int(h))
    }

    /// Who sees an object: everyone unless fog covers its tile.
    func objectAudience(_ object: [String: JSONValue]) -> Audience { placeAudience(object) }

    /// Who sees a wall or door: everyone unless fog covers every tile it touches (on hexes, both cells of its side).
    func wallAudience(_ wall: [String: JSONValue]) -> Audience {
        guard isVisionOn || activeFog != nil else { return .everyone }
        let touched: [Cell]
        if case .hex(let layout) = grid, case .array(let pair)? = wall["cell"], pair.count == 2 {
            let cell = Cell(x: Self.int(pair[0]), y: Self.int(pair[1]))
            let side = Cube.directions[min(5, max(0, Self.int(wall["side"])))]
            touched = [cell, layout.cell(of: layout.cube(of: cell) + side)]
        } else {
            let (from, to) = (Self.corner(wall["from"]), Self.corner(wall["to"]))
            touched = Fog.tiles(touchedByWallFrom: from.x, from.y, to: to.x, to.y, width: width, height: height)
                .map { Cell(x: $0 % width, y: $0 / width) }
        }
        if isVisionOn { return tilesAudience(touched, seenBy: vision?.explored ?? [:]) }
        guard let fog = activeFog else { return .everyone }
        return touched.contains { fog.reveals($0.x, $0.y) } ? .everyone : .nobody
    }

    private static func corner(_ value: JSONValue?) -> (x: Int, y: Int) {
        guard case .array(let pair)? = value, pair.count == 2 else { return (0, 0) }
        return (int(pair[0]), int(pair[1]))
    }

    static func int(_ value: JSONValue?) -> Int {
        if case .number(let number)? = value, abs(number) < 1e9 { Int(number) } else { 0 }
    }

    /// Who sees a stroke: its layer's audience.
    func strokeAudience(_ stroke: [String: JSONValue]) -> Audience { layerAudience(stroke["layer"]?.stringValue) }

    /// Who sees a layer: as the host set it (``TableOp/layer(name:visibleTo:)``), else `host`: nobody, `p:ID`: that
    /// participant, any other name (and none): everyone. A participant always sees their own layer `p:ID`.
    public func layerAudience(_ name: String?) -> Audience {
        guard let name else { return .everyone }
        let own: Audience = name.hasPrefix("p:") ? .only([String(name.dropFirst(2))]) : .nobody
        if let set = layers[name] { return set.union(own) }
        if name == "host" { return .nobody }
        return name.hasPrefix("p:") ? own : .everyone
    }

    /// The table as it would be with every glimpse ended: who sees what for good (a glimpse's art is timed apart).
    public var withoutGlimpses: Table {
        var table = self
        table.glimpses = [:]
        return table
    }

    /// Everyone's chosen dice (the map's `dice`: who → a `dice` asset), set by `dice` ops; everyone sees them.
    public var chosenDice: [String: Digest] {
        guard case .object(let chosen)? = document["dice"] else { return [:] }
        return chosen.compactMapValues { $0.stringValue.flatMap(Digest.init) }
    }

    /// The art of a token (nothing when it is not on the table).
    public func art(ofToken id: String) -> Set<Digest> {
        tokens[id].map { JSONValue.object($0).referencedDigests } ?? []
    }

    /// Who may fetch each piece of art the table shows (the host may fetch all of it): the floor, walls, objects and
    /// art of `custom` ops everyone; a token's art those who see a token that uses it. `extra` adds art with its
    /// audience (a participant's upload: them). Art the table does not show is in nobody's view.
    public func artAudiences(extra: [Digest: Audience] = [:]) -> [Digest: Audience] {
        var audiences = extra
        forEachArt { digests, audience in
            let audience = audience()
            for digest in digests { audiences[digest, default: .nobody].formUnion(audience) }
        }
        return audiences
    }

    /// The art `participant` may fetch: ``artAudiences(extra:)``'s answer for them alone, asked of their sight alone
    /// (``seenOnly(by:)``), without gathering everyone's audiences.
    public func art(seenBy participant: String) -> Set<Digest> {
        var seen: Set<Digest> = []
        seenOnly(by: participant).forEachArt { digests, audience in
            if !digests.isSubset(of: seen), audience().contains(participant) { seen.formUnion(digests) }
        }
        return seen
    }

    /// Calls `body` with each piece of art the table shows and who sees it there (the same digest may come more than
    /// once, with different audiences: its audience is their union). An audience is worked out only when asked, and
    /// never for an entity without art (most walls).
    private func forEachArt(_ body: (Set<Digest>, () -> Audience) -> Void) {
        func each(_ entities: EntityList, _ audience: @escaping ([String: JSONValue]) -> Audience) {
            for entity in entities.items {
                let digests = JSONValue.object(entity).referencedDigests
                if !digests.isEmpty { body(digests) { audience(entity) } }
            }
        }
        body(fixedArt.union(customArt).union(chosenDice.values)) { .everyone }
        if let floor {
            let seen = isVisionOn ? fog.map { floor.textures(under: $0) } ?? [] : floor.textures(under: activeFog)
            body(seen) { .everyone }
            if isVisionOn {
                for (id, tiles) in vision?.explored ?? [:] { body(floor.textures(at: tiles)) { .only([id]) } }
            }
            if activeFog != nil || isVisionOn { body(floor.textures(under: nil).subtracting(seen)) { .nobody } }
        }
        each(walls, wallAudience)
        each(objects, objectAudience)
        each(tokens, tokenAudience)
        each(strokes, strokeAudience)
        for channel in audio.values { body([channel.track]) { audience(of: channel) } }
    }
}

/// An ordered list of a document's entries with an index of the objects among them by their `id`; entries that are
/// not objects with an id stay in place, unindexed and untouched.
struct EntityList: Sendable {
    private(set) var entries: [JSONValue] = []
    private var index: [String: Int] = [:]
    /// Whether the document had this member (so an empty list is written back, and a missing one is not invented).
    let wasPresent: Bool

    init(_ value: JSONValue?) {
        wasPresent = value != nil
        if case .array(let entries)? = value { for entry in entries { append(entry) } }
    }

    /// The objects, in order.
    var items: [[String: JSONValue]] { entries.compactMap { if case .object(let members) = $0 { members } else { nil } } }

    subscript(id: String) -> [String: JSONValue]? {
        guard let position = index[id], case .object(let members) = entries[position] else { return nil }
        return members
    }

    mutating func append(_ entry: [String: JSONValue]) { append(.object(entry)) }

    private mutating func append(_ entry: JSONValue) {
        if let id = entry["id"]?.stringValue, index[id] == nil { index[id] = entries.count }
        entries.append(entry)
    }

    mutating func update(_ id: String, _ change: (inout [String: JSONValue]) -> Void) {
        guard let position = index[id], case .object(var members) = entries[position] else { return }
        entries[position] = .null
        change(&members)
        entries[position] = .object(members)
    }

    mutating func remove(_ id: String) {
        guard let position = index.removeValue(forKey: id) else { return }
        entries.remove(at: position)
        for later in position..<entries.count {
            if let id = entries[later]["id"]?.stringValue, index[id] == later + 1 { index[id] = later }
        }
    }

    func write(into document: inout [String: JSONValue], key: String, keeping isKept: ([String: JSONValue]) -> Bool) {
        guard wasPresent || !entries.isEmpty else { return }
        document[key] = .array(
            entries.filter { entry in
                if case .object(let members) = entry { isKept(members) } else { true }
            })
    }
}
