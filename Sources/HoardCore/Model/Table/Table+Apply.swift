extension Table {
    /// Applies an op for `actor`: checks that it applies (the entity exists and the actor sees it, the place is on the
    /// grid, the actor may do it), changes the state, and says what each participant is sent. Throws and changes
    /// nothing when it does not apply.
    ///
    /// A participant may `move` and `set` tokens they own, `stroke` and `erase` on their own layer `p:ID` (a stroke
    /// without a layer goes there), `ping` and send `message`s. Everything else is the host's. A participant acting
    /// on an entity that is absent, hidden from them or not theirs gets one refusal, the same for all three
    /// (``refusal(_:_:)``), so refusals reveal nothing hidden. A participant's stroke ids are their own: the table
    /// keeps them as `p:ID:<id>` (``ownStrokeId(_:_:)``), so no id another drew can be taken from them.
    /// Who is sent a message or a roll addressed `to` these participants by `sender`: those named and the sender (the
    /// host sees everything, so `"host"` adds nobody); nil when `to` is nil: everyone. The one audience rule of both.
    public static func audience(to: [String]?, from sender: String?) -> Audience? {
        guard let to else { return nil }
        return Audience.only(to.filter { $0 != "host" } + (sender.map { [$0] } ?? []))
    }

    mutating func applyRules(_ op: TableOp, by actor: Actor) throws(TableError) -> Change {
        let participant: String? = if case .participant(let id) = actor { id } else { nil }
        if isOpaque {
            switch op {
            case .ping, .message, .custom, .roll: break
            default: throw TableError(.badOp, "this session's map is not a hoard.map document; only ping, message and custom apply")
            }
        }
        switch op {
        case .move(let id, let x, let y):
            let token = try ownToken(id, participant)
            try onGrid(token.merging(["x": .number(Double(x)), "y": .number(Double(y))]) { $1 })
            tokens.update(id) {
                $0["x"] = .number(Double(x)); $0["y"] = .number(Double(y))
            }
            return change(op, token: id, before: tokenAudience(token))
        case .set(let id, let fields):
            let token = try ownToken(id, participant)
            if fields["sight"] != nil { try hostOnly(participant, "give tokens sight") }
            tokens.update(id) { token in for (key, value) in fields { token[key] = value == .null ? nil : value } }
            return change(op, token: id, before: tokenAudience(token))
        case .add(let layer, let entity):
            try hostOnly(participant, "add tokens and objects")
            let id = entity["id"]?.stringValue ?? ""
            try isFree(id, for: entity)
            try onGrid(entity)
            if layer == .token {
                tokens.append(entity)
                return change(op, token: id, before: .nobody)
            }
            objects.append(entity)
            let audience = objectAudience(entity)
            var change = transition(op, before: .nobody, after: audience, appear: op, vanish: nil)
            change.art = [(audience, JSONValue.object(entity).referencedDigests)]
            return change
        case .remove(let layer, let id):
            try hostOnly(participant, "remove tokens and objects")
            if layer == .token {
                guard let token = tokens[id] else { throw Self.refusal("token", id) }
                let before = tokenAudience(token)
                tokens.remove(id)
                glimpses[id] = nil
                return change(op, token: id, before: before)
            }
            guard let object = objects[id] else { throw Self.refusal("object", id) }
            objects.remove(id)
            return transition(op, before: objectAudience(object), after: .nobody, appear: nil, vanish: op)
        case .assign(let id, let owner):
            try hostOnly(participant, "give tokens to players")
            let token = try visibleToken(id, nil)
            tokens.update(id) { $0["owner"] = owner.map(JSONValue.string) }
            return change(op, token: id, before: tokenAudience(token))
        case .hide(let id), .reveal(let id):
            try hostOnly(participant, "hide and reveal tokens")
            let token = try visibleToken(id, nil)
            let isHiding = if case .hide = op { true } else { false }
            tokens.update(id) { $0["hidden"] = isHiding ? .bool(true) : nil }
            return change(op, token: id, before: tokenAudience(token))
        case .stroke(var stroke):
            if let participant {
                let own = "p:" + participant
                if stroke["layer"] == nil { stroke["layer"] = .string(own) }
                guard stroke["layer"]?.stringValue == own else { throw TableError(.forbidden, "players draw on their own layer \(own)") }
                stroke["id"] = .string(Self.ownStrokeId(stroke["id"]?.stringValue ?? "", participant))
            }
            if case .array(let points)? = stroke["points"] {
                for case .array(let pair) in points where pair.count == 2 {
                    if case .number(let x) = pair[0], case .number(let y) = pair[1], x > Double(width) || y > Double(height) {
                        throw TableError(.outOfGrid, "the stroke leaves the \(width)×\(height) grid")
                    }
                }
            }
            try isFree(stroke["id"]?.stringValue ?? "", for: stroke)
            strokes.append(stroke)
            return transition(.stroke(stroke), before: .nobody, after: strokeAudience(stroke), appear: .stroke(stroke), vanish: nil)
        case .erase(var id):
            if let participant {
                // Their own strokes only, by the id they drew it with or the one the table keeps.
                let own = "p:" + participant
                let candidates = [Self.ownStrokeId(id, participant), id]
                guard let kept = candidates.first(where: { strokes[$0]?["layer"]?.stringValue == own }) else {
                    throw Self.refusal("stroke", id, of: participant)
                }
                id = kept
            }
            guard let stroke = strokes[id] else { throw Self.refusal("stroke", id) }
            strokes.remove(id)
            let erased = TableOp.erase(stroke: id)
            return transition(erased, before: strokeAudience(stroke), after: .nobody, appear: nil, vanish: erased)
        case .ping(let x, let y):
            guard x <= Double(width), y <= Double(height) else {
                throw TableError(.outOfGrid, "the place is off the \(width)×\(height) grid")
            }
            return Change(op: op, views: nil, art: [], changesVisibility: false)
        case .message(_, let to):
            return Change(op: op, views: Self.audience(to: to, from: participant).map { [View(audience: $0, op: op)] }, art: [], changesVisibility: false)
        case .roll(let request):
            // A blind roll: the host alone sees it; its roller (a participant) is sent the op, not the dice.
            let audience = request.isBlind ? participant.map { Audience.only([$0]) } ?? .nobody : Self.audience(to: request.to, from: participant)
            return Change(op: op, views: audience.map { [View(audience: $0, op: op)] }, art: [], changesVisibility: false)
        case .audio(let command):
            return try apply(command, participant: participant)
        case .chooseDice(let by, let asset):
            guard !by.isEmpty, participant.map({ $0 == by }) ?? true else {
                throw TableError(.forbidden, "each chooses their own dice; the server says who (\"by\")")
            }
            var chosen: [String: JSONValue] = [:]
            if case .object(let members)? = document["dice"] { chosen = members }
            chosen[by] = asset.map { .string($0.description) }
            document["dice"] = chosen.isEmpty ? nil : .object(chosen)
            return Change(op: op, views: nil, art: asset.map { [(.everyone, [$0])] } ?? [], changesVisibility: asset != nil)
        case .custom(let payload):
            try hostOnly(participant, "send custom ops")
            let art = payload.referencedDigests
            customArt.formUnion(art)
            return Change(op: op, views: nil, art: [(.everyone, art)], changesVisibility: !art.isEmpty)
        case .glimpse(let id, let to, _):
            let token = try ownToken(id, participant)
            let before = tokenAudience(token)
            glimpses[id, default: []].formUnion(to)
            let appearing = tokenAudience(token).subtracting(before)
            var views: [View] = []
            if !appearing.isEmpty { views.append(View(audience: appearing, op: .add(.token, token))) }
            if let owner = token["owner"]?.stringValue { views.append(View(audience: .only([owner]), op: .seen(token: id, by: to))) }
            let art = JSONValue.object(token).referencedDigests
            return Change(op: op, views: views, art: appearing.isEmpty || art.isEmpty ? [] : [(appearing, art)], changesVisibility: true)
        case .unglimpse(let id, let from):
            try hostOnly(participant, "end glimpses")
            let token = try visibleToken(id, nil)
            let before = tokenAudience(token)
            glimpses[id]?.subtract(from)
            if glimpses[id]?.isEmpty == true { glimpses[id] = nil }
            let vanishing = before.subtracting(tokenAudience(token))
            return Change(
                op: op, views: vanishing.isEmpty ? [] : [View(audience: vanishing, op: .remove(.token, id: id))], art: [],
                changesVisibility: true)
        case .seen, .view:
            throw TableError(.badOp, "\(op.kind) is what the server tells a participant; it is not sent to the server")
        case .paint(let rects, let texture):
            try hostOnly(participant, "paint the floor")
            guard floor != nil else {
                throw TableError(.badOp, "this map's floor is not in the palette form (hoard.map/v2); replace the map to paint it")
            }
            if let outside = rects.first(where: { !$0.fits(width, height) }) {
                throw TableError(.outOfGrid, "[\(outside.x), \(outside.y), \(outside.w), \(outside.h)] leaves the \(width)×\(height) grid")
            }
            let changesTextures = floor?.paint(rects, texture: texture?.description) ?? true
            guard let fog = activeFog else {
                return Change(op: op, views: nil, art: texture.map { [(.everyone, [$0])] } ?? [], changesVisibility: changesTextures)
            }
            let seen = fog.clip(rects)
            let art: [(audience: Audience, digests: Set<Digest>)] = texture.map { [(seen.isEmpty ? .nobody : .everyone, [$0])] } ?? []
            return Change(
                op: op, views: seen.isEmpty ? [] : [View(audience: .everyone, op: .paint(rects: seen, texture: texture))], art: art,
                changesVisibility: true)
        case .addWall(let wall):
            try hostOnly(participant, "build walls")
            try isFree(wall["id"]?.stringValue ?? "", for: wall)
            if let problem = MapCheck.placeProblem("drawing.walls", wall, width, height, hex: grid != .square) {
                throw TableError(.outOfGrid, "the wall: \(problem)")
            }
            walls.append(wall)
            let audience = wallAudience(wall)
            var change = transition(op, before: .nobody, after: audience, appear: op, vanish: nil)
            change.art = [(audience, JSONValue.object(wall).referencedDigests)]
            return change
        case .removeWall(let id):
            try hostOnly(participant, "take walls down")
            guard let wall = walls[id] else { throw Self.refusal("wall", id) }
            walls.remove(id)
            return transition(op, before: wallAudience(wall), after: .nobody, appear: nil, vanish: op)
        case .door(let id, let open):
            // Refused before the wall is looked at: the answer does not depend on what the fog covers.
            if participant != nil, !playersOpenDoors {
                throw TableError(.forbidden, "the host has not let players open doors (the session setting playersOpenDoors)")
            }
            guard let wall = walls[id], participant.map({ wallAudience(wall).contains($0) }) ?? true else {
                throw Self.refusal("wall", id, of: participant)
            }
            guard wall["door"] == .bool(true) else { throw TableError(.badOp, "wall \(id) is not a door") }
            walls.update(id) { $0["open"] = .bool(open) }
            let audience = wallAudience(wall)
            return transition(op, before: audience, after: audience, appear: nil, vanish: nil)
        case .vision(let visionChange):
            try hostOnly(participant, "change vision")
            var state = vision ?? Vision(isEnabled: false)
            switch visionChange {
            case .enabled(let enabled): state.isEnabled = enabled
            case .forget(let ids): for id in ids { state.explored[id] = nil }
            }
            vision = state
            if document["vision"] == nil { document["vision"] = .object([:]) }
            // Sight is brought up to date, and the whole views sent, by ``apply(_:by:)``.
            return Change(op: op, views: [View(audience: .everyone, op: nil)], art: [], changesVisibility: true)
        case .settings(let playersOpenDoors):
            try hostOnly(participant, "change the session's settings")
            document["settings"] = .object(["playersOpenDoors": .bool(playersOpenDoors)])
            return Change(op: op, views: nil, art: [], changesVisibility: false)
        case .fog(let fogChange):
            try hostOnly(participant, "change the fog")
            let before = artAudiences()
            var state = fog ?? Fog(width: width, height: height)
            switch fogChange {
            case .enabled(let enabled): state.isEnabled = enabled
            case .reveal(let rects), .cover(let rects):
                if let outside = rects.first(where: { !$0.fits(width, height) }) {
                    throw TableError(.outOfGrid, "[\(outside.x), \(outside.y), \(outside.w), \(outside.h)] leaves the \(width)×\(height) grid")
                }
                if case .reveal = fogChange { state.set(rects, to: true) } else { state.set(rects, to: false) }
            }
            fog = state
            if document["fog"] == nil { document["fog"] = .object([:]) }
            // What the players now see is sent as their whole view, after the art it newly shows them.
            return Change(op: op, views: [View(audience: .everyone, op: nil)], art: appearingArt(since: before), changesVisibility: true)
        case .layer(let name, let audience):
            try hostOnly(participant, "choose who sees a layer")
            let before = artAudiences()
            let old = layerAudience(name)
            layers[name] = audience
            let new = layerAudience(name)
            let changed = old.union(new).subtracting(old.intersection(new))
            // Those whose view changes get it whole; the others just the layer's new setting.
            let views =
                changed.isEmpty ? nil : [View(audience: changed, op: nil), View(audience: Audience.everyone.subtracting(changed), op: op)]
            return Change(op: op, views: views, art: appearingArt(since: before), changesVisibility: true)
        }
    }

    /// Whether the host lets players open and close doors (the session setting `playersOpenDoors`).
    public var playersOpenDoors: Bool { document["settings"]?["playersOpenDoors"] == .bool(true) }

    /// The one refusal of an op on an entity the sender may not act on: absent, hidden from them, or (for a
    /// participant) not theirs read the same, code and message, so no refusal tells a player what they cannot see.
    /// Every op's entity check ends here.
    public static func refusal(_ kind: String, _ id: String, of participant: String? = nil) -> TableError {
        TableError(.unknownEntity, "no \(kind) \(id) on the table" + (participant == nil ? "" : " that you may act on"))
    }

    /// The id the table keeps for a stroke `participant` drew as `id`: `p:ID:<id>`, in a namespace only they draw in
    /// (an id already in it stays as it is).
    public static func ownStrokeId(_ id: String, _ participant: String) -> String {
        let prefix = "p:" + participant + ":"
        return id.hasPrefix(prefix) ? id : prefix + id
    }

    /// Refuses an id already on the table (tokens, objects, walls and strokes share one namespace), or one in a
    /// participant's stroke namespace (`p:ID:…`) for anything but a stroke on their layer `p:ID`.
    private func isFree(_ id: String, for entity: [String: JSONValue]) throws(TableError) {
        guard tokens[id] == nil, objects[id] == nil, walls[id] == nil, strokes[id] == nil else {
            throw TableError(.idTaken, "\(id) is already on the table; choose another id")
        }
        if let problem = MapCheck.reservedIdProblem(id, layer: entity["layer"]?.stringValue, isStroke: entity["points"] != nil) {
            throw TableError(.badOp, problem)
        }
    }

    /// The token's state now, once it is known that `participant` (nil: the host) sees it.
    private func visibleToken(_ id: String, _ participant: String?) throws(TableError) -> [String: JSONValue] {
        guard let token = tokens[id], participant.map({ tokenAudience(token).contains($0) }) ?? true else {
            throw Self.refusal("token", id, of: participant)
        }
        return token
    }

    /// The token's state now, once it is known that `participant` (nil: the host) owns it; absent, hidden and not
    /// theirs are one refusal.
    private func ownToken(_ id: String, _ participant: String?) throws(TableError) -> [String: JSONValue] {
        guard let token = tokens[id], participant.map({ token["owner"]?.stringValue == $0 }) ?? true else {
            throw Self.refusal("token", id, of: participant)
        }
        return token
    }

    /// The art that someone sees now and did not in `before` (an ``artAudiences(extra:)`` taken before the change),
    /// by the audience newly seeing it.
    func appearingArt(since before: [Digest: Audience]) -> [(audience: Audience, digests: Set<Digest>)] {
        var appearing: [Audience: Set<Digest>] = [:]
        for (digest, audience) in artAudiences() {
            let new = audience.subtracting(before[digest] ?? .nobody)
            if !new.isEmpty { appearing[new, default: []].insert(digest) }
        }
        return appearing.map { ($0.key, $0.value) }
    }

    private func hostOnly(_ participant: String?, _ what: String) throws(TableError) {
        if participant != nil { throw TableError(.forbidden, "only the host may \(what)") }
    }

    /// The first token or object of the map that is off the grid by the cells it covers (on hexes, every hex of its
    /// footprint, as a move or add is judged): why, naming it; nil when every place is on the grid. The door a map
    /// passes (``MapCheck``) checks the anchors alone, without the footprints the server resolves from the catalog.
    public func placeProblem() -> String? {
        for (list, entities) in [("tokens", tokens), ("objects", objects)] {
            for entity in entities.items {
                do { try onGrid(entity) } catch {
                    return "\((entity["id"]?.stringValue ?? "").debugDescription) in \(list): \(error.message)"
                }
            }
        }
        return nil
    }

    /// A token or object at its place is on the grid: its tile, or every hex of its footprint.
    private func onGrid(_ entity: [String: JSONValue]) throws(TableError) {
        let (x, y) = (Self.int(entity["x"]), Self.int(entity["y"]))
        guard x < width, y < height else { throw TableError(.outOfGrid, "(\(x), \(y)) is off the \(width)×\(height) grid") }
        let cells = cells(of: entity)
        guard cells.count > 1, let off = cells.first(where: { !(0..<width).contains($0.x) || !(0..<height).contains($0.y) }) else {
            return
        }
        throw TableError(.outOfGrid, "at (\(x), \(y)) its \(cells.count) hexes leave the \(width)×\(height) grid: (\(off.x), \(off.y)) is off it")
    }

    /// The change for an op on one token (nil: not a token op): who saw it before, who sees it now.
    private func change(_ op: TableOp, token id: String?, before: Audience) -> Change {
        guard let id else { return Change(op: op, views: nil, art: Self.art(of: op), changesVisibility: true) }
        let now = tokens[id]
        let after = now.map(tokenAudience) ?? .nobody
        var change = transition(op, before: before, after: after, appear: now.map { .add(.token, $0) }, vanish: .remove(.token, id: id))
        if let now, case let art = JSONValue.object(now).referencedDigests, !art.isEmpty {
            let appearing = after.subtracting(before)
            if case .add = op { change.art = [(after, art)] } else if !appearing.isEmpty { change.art = [(appearing, art)] }
        }
        return change
    }

    private static func art(of op: TableOp) -> [(audience: Audience, digests: Set<Digest>)] {
        guard case .add(_, let entity) = op, case let art = JSONValue.object(entity).referencedDigests, !art.isEmpty else { return [] }
        return [(.everyone, art)]
    }

    /// Splits participants by what they saw of an entity before and after: those who see it throughout get the op,
    /// those who start seeing it `appear`, those who stop `vanish`; those who never see it get nothing.
    private func transition(_ op: TableOp, before: Audience, after: Audience, appear: TableOp?, vanish: TableOp?) -> Change {
        let visibility =
            before != after
            || {
                switch op {
                case .add, .remove, .assign, .hide, .reveal, .addWall, .removeWall: true
                case .set(_, let fields): fields["layer"] != nil
                default: false
                }
            }()
        let both = before.intersection(after)
        if both == .everyone { return Change(op: op, views: nil, art: [], changesVisibility: visibility) }
        var views: [View] = []
        if !both.isEmpty { views.append(View(audience: both, op: op)) }
        if let appear, case let appearing = after.subtracting(before), !appearing.isEmpty {
            views.append(View(audience: appearing, op: appear))
        }
        if let vanish, case let vanishing = before.subtracting(after), !vanishing.isEmpty {
            views.append(View(audience: vanishing, op: vanish))
        }
        let isEveryonesOp = views.count == 1 && views[0].audience == .everyone && views[0].op == op
        return Change(op: op, views: isEveryonesOp ? nil : views, art: [], changesVisibility: visibility)
    }
}
