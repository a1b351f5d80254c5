// Vision: what each participant's tokens see (``SightMap``), what they explored, and who is sent what when it changes.
extension Table {
    /// Applies an op for `actor` (``applyRules(_:by:)`` says what each op may do); with vision on, then brings sight up
    /// to date: the participants whose seen or explored tiles changed are sent what their view gained and lost (a
    /// `view` op; after an erasing `paint` or a `vision` op, everyone their whole view again), after the art it newly
    /// shows them, and the others what the op alone shows them. A `paint` goes to each clipped to the floor they are shown.
    public mutating func apply(_ op: TableOp, by actor: Actor) throws(TableError) -> Change {
        let heardBefore = mayChangeHearers(op) ? hearers() : nil
        var change = try applySeen(op, by: actor)
        if let heardBefore { hear(since: heardBefore, into: &change) }
        change.artAffected?.formUnion(change.heard.keys)
        return change
    }

    /// Who may fetch other art after a move with vision on, which changes only what the token's viewers see (`changed`:
    /// whose seen or explored tiles changed) and who sees the token itself: those who saw it before or see it now.
    /// nil for any other op, or when everyone sees the token (the fog reveals its tile).
    private func artAffected(by op: TableOp, since old: Table, changed: Set<String>) -> Set<String>? {
        guard case .move(let id, _, _) = op else { return nil }
        var affected = Audience.only(changed)
        for table in [old, self] { if let token = table.tokens[id] { affected.formUnion(table.tokenAudience(token)) } }
        return affected.isComplement ? nil : affected.ids
    }

    /// ``apply(_:by:)`` but for who hears what.
    private mutating func applySeen(_ op: TableOp, by actor: Actor) throws(TableError) -> Change {
        let isVisionOp = if case .vision = op { true } else { false }
        guard isVisionOn || isVisionOp else {
            let change = try applyRules(op, by: actor)
            updateWalls(after: op)
            return change
        }
        let old = self
        let touched = tokensAffected(by: op)
        let viewersBefore = Set(touched.flatMap { tokens[$0].map(TokenSight.viewers(of:)) ?? [] })
        var change = try applyRules(op, by: actor)
        updateWalls(after: op)
        let changed = updateSight(of: isVisionOp ? nil : touched.union(tokensAffected(by: op)), viewersBefore: viewersBefore)
        if case .paint(let rects, let texture?) = op { return painted(change, rects: rects, texture: texture) }
        let isPaint = if case .paint = op { true } else { false }
        guard !changed.isEmpty || isPaint || isVisionOp else {
            change.artAffected = artAffected(by: op, since: old, changed: changed)
            return change
        }
        // An erase may show participants the default texture for the first time: everyone gets their view again.
        let whole: Audience = isPaint || isVisionOp ? .everyone : .only(changed)
        var views = (change.views ?? [View(audience: .everyone, op: change.op)]).compactMap { view -> View? in
            let rest = view.audience.subtracting(whole)
            return rest.isEmpty ? nil : View(audience: rest, op: view.op)
        }
        if isPaint || isVisionOp {
            views.append(View(audience: whole, op: nil))
        } else {
            for participant in changed.sorted() {
                views.append(View(audience: .only([participant]), op: .view(viewChange(from: old, for: participant))))
            }
        }
        change.views = views
        if isPaint || isVisionOp {
            change.art += appearingArt(since: old.artAudiences())
        } else {
            for participant in changed.sorted() {
                let appearing = art(seenBy: participant).subtracting(old.art(seenBy: participant))
                if !appearing.isEmpty { change.art.append((audience: .only([participant]), digests: appearing)) }
            }
        }
        change.changesVisibility = true
        change.artAffected = artAffected(by: op, since: old, changed: changed)
        return change
    }

    /// A paint with a texture, vision on: each participant is sent it clipped to the floor they are shown (what the fog
    /// reveals and what they explored), the texture's art first to those it reaches; nobody's sight changes. (An erase
    /// may show them the default texture for the first time: they get their whole view.)
    private func painted(_ change: Change, rects: [TileRect], texture: Digest) -> Change {
        var change = change
        var views: [View] = []
        var reached = Audience.nobody
        let explorers = vision?.explored ?? [:]
        for (participant, tiles) in explorers.sorted(by: { $0.key < $1.key }) {
            let clipped = shownFloor(explored: tiles).clip(rects)
            guard !clipped.isEmpty else { continue }
            views.append(View(audience: .only([participant]), op: .paint(rects: clipped, texture: texture)))
            reached.formUnion(.only([participant]))
        }
        let others = Audience.everyone.subtracting(.only(explorers.keys))
        let clipped = shownFloor(explored: nil).clip(rects)
        if !clipped.isEmpty {
            views.append(View(audience: others, op: .paint(rects: clipped, texture: texture)))
            reached.formUnion(others)
        }
        change.views = views
        change.art = reached.isEmpty ? [] : [(audience: reached, digests: Set([texture]))]
        change.changesVisibility = true
        return change
    }

    /// Keeps ``sightMap`` to the walls after a wall or door op, vision on or off (walls stop sound either way).
    private mutating func updateWalls(after op: TableOp) {
        if case .addWall(let wall) = op { sightMap.set(wall["id"]?.stringValue ?? "", to: wall) }
        if case .removeWall(let id) = op { sightMap.set(id, to: nil) }
        if case .door(let id, _) = op { sightMap.set(id, to: walls[id]) }
    }

    /// Whether players see only what their tokens see (and what the fog reveals).
    var isVisionOn: Bool { vision?.isEnabled == true }

    /// The tokens whose sight an op may change: the token it moves, sets, gives, adds or removes; for a wall or door,
    /// every token with sight whose range reaches it.
    func tokensAffected(by op: TableOp) -> Set<String> {
        switch op {
        case .move(let id, _, _), .set(let id, _), .assign(let id, _), .remove(.token, let id): return [id]
        case .add(.token, let token): return token["id"]?.stringValue.map { [$0] } ?? []
        case .addWall(let wall): return tokensReaching(wall)
        case .removeWall(let id), .door(let id, _): return walls[id].map(tokensReaching) ?? []
        default: return []
        }
    }

    /// The tokens with sight that may see past `wall`: those without a range, and those whose range's box reaches a
    /// tile the wall touches.
    private func tokensReaching(_ wall: [String: JSONValue]) -> Set<String> {
        var cells: [Cell] = []
        if case .array(let pair)? = wall["cell"], pair.count == 2 {
            cells = [Cell(x: Self.int(pair[0]), y: Self.int(pair[1]))]
        } else {
            for key in ["from", "to"] {
                if case .array(let pair)? = wall[key], pair.count == 2 { cells.append(Cell(x: Self.int(pair[0]), y: Self.int(pair[1]))) }
            }
        }
        let (minX, maxX) = (cells.map(\.x).min() ?? 0, cells.map(\.x).max() ?? 0)
        let (minY, maxY) = (cells.map(\.y).min() ?? 0, cells.map(\.y).max() ?? 0)
        var reached: Set<String> = []
        for token in tokens.items {
            guard let id = token["id"]?.stringValue, let sight = TokenSight(token["sight"]) else { continue }
            guard let range = sight.range else {
                reached.insert(id)
                continue
            }
            // On hexes a range of r hexes spans up to 1.16 r columns or rows: twice the range and two more is room enough.
            let reach = 2 * range + 2
            let (x, y) = (Self.int(token["x"]), Self.int(token["y"]))
            if x + reach >= minX, x - reach <= maxX, y + reach >= minY, y - reach <= maxY { reached.insert(id) }
        }
        return reached
    }

    /// Recomputes the sight of `ids` (nil: every token) and the seen tiles of the participants who see through them now
    /// or did before (`viewersBefore`), adding them to what each explored; returns the participants whose seen or
    /// explored tiles changed. With vision off, nobody sees through tokens.
    @discardableResult
    mutating func updateSight(of ids: Set<String>?, viewersBefore: Set<String> = []) -> Set<String> {
        guard isVisionOn else {
            let had = Set(lit.keys)
            (tokenSeen, lit) = ([:], [:])
            return had
        }
        var affected = viewersBefore
        if ids == nil { affected.formUnion(lit.keys) }
        for id in ids ?? Set(tokens.items.compactMap { $0["id"]?.stringValue }) {
            guard let token = tokens[id], let sight = TokenSight(token["sight"]) else {
                tokenSeen[id] = nil
                continue
            }
            tokenSeen[id] = sightMap.seen(from: Cell(x: Self.int(token["x"]), y: Self.int(token["y"])), range: sight.range)
            affected.formUnion(TokenSight.viewers(of: token))
        }
        guard !affected.isEmpty else { return [] }
        var seen: [String: TileSet] = [:]
        for token in tokens.items {
            guard let id = token["id"]?.stringValue, let tiles = tokenSeen[id] else { continue }
            for viewer in TokenSight.viewers(of: token) where affected.contains(viewer) {
                var union = seen[viewer] ?? TileSet(count: width * height)
                for tile in tiles { union.insert(tile) }
                seen[viewer] = union
            }
        }
        var changed: Set<String> = []
        for participant in affected {
            let now = seen[participant]
            if now != lit[participant] { changed.insert(participant) }
            lit[participant] = now
            guard let now else { continue }
            if vision?.explored[participant] == nil { vision?.explored[participant] = TileSet(count: width * height) }
            if vision?.explored[participant]?.formUnion(now) == true { changed.insert(participant) }
        }
        return changed
    }

    /// Who sees any of `cells` with vision on: everyone where the fog reveals one (whether or not it is on), and each
    /// participant in `seen` whose tiles hold one.
    func tilesAudience(_ cells: [Cell], seenBy seen: [String: TileSet]) -> Audience {
        let tiles = cells.filter { (0..<width).contains($0.x) && (0..<height).contains($0.y) }.map { $0.y * width + $0.x }
        if let fog, tiles.contains(where: { fog.revealed[$0] }) { return .everyone }
        var seers: Set<String> = []
        for (participant, seenTiles) in seen where tiles.contains(where: seenTiles.contains) { seers.insert(participant) }
        return .only(seers)
    }

    /// The tiles of the floor `participant` is shown: as the fog lets them be seen, or with vision on, what the fog
    /// reveals and what they explored.
    func floorFog(for participant: String) -> Fog? {
        isVisionOn ? shownFloor(explored: vision?.explored[participant]) : activeFog
    }

    /// With vision on, the floor's tiles a participant who `explored` these is shown: those and what the fog reveals.
    private func shownFloor(explored: TileSet?) -> Fog {
        var shown = fog ?? Fog(width: width, height: height)
        shown.isEnabled = true
        explored?.forEach { shown.revealed[$0] = true }
        return shown
    }
}
