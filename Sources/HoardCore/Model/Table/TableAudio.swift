/// A `play`, `pause`, `stop` or `volume` op: what the host's jukebox sends for one channel (music, ambience…).
///
/// Every one is stamped by the server with its own clock (``serverTime``, Unix milliseconds) before it is applied and
/// logged, so every seat, a replay and a late joiner reckon the same position: a playing channel is at
/// `offset + (now − since) / 1000` seconds of its track on the server's clock.
public struct AudioCommand: Sendable, Hashable {
    /// What the op does.
    public enum Action: String, Sendable, Hashable, CaseIterable {
        /// A track starts on the channel (from `offset`); without a `track`, a paused channel resumes where it stopped.
        case play
        /// The channel stops where it is, keeping its position.
        case pause
        /// The channel stops and is gone.
        case stop
        /// The channel's volume changes.
        case volume
    }

    /// What it does.
    public var action: Action
    /// The channel's id (`music`, `ambience`, `rain`…).
    public var channel: String
    /// `play`: the audio asset (or its sound's blob) to play; nil resumes the paused channel.
    public var track: Digest?
    /// `play`: whether the track starts again at its end.
    public var loop: Bool?
    /// `play`, `volume`: from 0 (silent) to 1.
    public var volume: Double?
    /// `play`: where in the track to start, in seconds.
    public var offset: Double?
    /// `play`: an ambient sound's place on the map (tile units) and the radius (tiles) within which players' tokens
    /// hear it; nil for music every seat hears.
    public var at: [Double]?
    /// See ``at``.
    public var radius: Double?
    /// `play`: only these participants hear it (as a message's `to`; `["host"]` alone: the host previews it).
    public var to: [String]?
    /// The server's clock when it applied the op, in Unix milliseconds; whatever a client sends is replaced.
    public var serverTime: Double?

    /// Makes a command from its parts.
    public init(
        _ action: Action, channel: String, track: Digest? = nil, loop: Bool? = nil, volume: Double? = nil, offset: Double? = nil,
        at: [Double]? = nil, radius: Double? = nil, to: [String]? = nil, serverTime: Double? = nil
    ) {
        (self.action, self.channel, self.track, self.loop, self.volume, self.offset) = (action, channel, track, loop, volume, offset)
        (self.at, self.radius, self.to, self.serverTime) = (at, radius, to, serverTime)
    }

    /// Longest track offset, in seconds (a day).
    public static let maxOffset = 86_400.0
    /// Largest radius, in tiles.
    public static let maxRadius = 512.0

    /// Reads the fields of an op of kind `action`.
    init(_ action: Action, _ fields: inout Fields) throws(TableError) {
        self.init(action, channel: try fields.id("channel"))
        let members = fields.members
        func number(_ key: String, _ range: ClosedRange<Double>) throws(TableError) -> Double? {
            fields.consumed.insert(key)
            guard let value = members[key], value != .null else { return nil }
            guard case .number(let number) = value, range.contains(number) else {
                throw TableError(.badOp, "\(action.rawValue)'s \"\(key)\" is a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        serverTime = try number("serverTime", 0...1e15)
        switch action {
        case .play:
            if members["track"] != nil { track = try fields.digest("track") }
            if members["loop"] != nil { loop = try fields.bool("loop") }
            volume = try number("volume", 0...1)
            offset = try number("offset", 0...Self.maxOffset)
            radius = try number("radius", 0...Self.maxRadius)
            fields.consumed.insert("at")
            if let place = members["at"], place != .null {
                guard case .array(let pair) = place, pair.count == 2,
                      case .number(let x) = pair[0], case .number(let y) = pair[1], (0...512).contains(x), (0...512).contains(y)
                else { throw TableError(.badOp, "play's \"at\" is a place [x, y] in tile units, from 0 to 512") }
                at = [x, y]
            }
            guard (at == nil) == (radius == nil) else { throw TableError(.badOp, "an ambient sound has both \"at\" and \"radius\"; music neither") }
            to = try fields.recipients()
        case .volume:
            volume = try number("volume", 0...1)
            guard volume != nil else { throw TableError(.badOp, "volume needs \"volume\": a number from 0 to 1") }
        case .pause, .stop: break
        }
    }

    /// The op's fields besides its kind.
    var fields: [String: JSONValue] {
        var op: [String: JSONValue] = ["channel": .string(channel)]
        if let track { op["track"] = .string(track.description) }
        if let loop { op["loop"] = .bool(loop) }
        if let volume { op["volume"] = .number(volume) }
        if let offset { op["offset"] = .number(offset) }
        if let at { op["at"] = .array(at.map(JSONValue.number)) }
        if let radius { op["radius"] = .number(radius) }
        if let to { op["to"] = .array(to.map(JSONValue.string)) }
        if let serverTime { op["serverTime"] = .number(serverTime) }
        return op
    }

    /// The command stamped with the server's clock (`milliseconds` since 1970).
    public func stamped(_ milliseconds: Double) -> AudioCommand {
        var stamped = self
        stamped.serverTime = milliseconds.rounded()
        return stamped
    }
}

/// One channel of a table's sound as the server keeps it (in the map document's `audio` member, so a fold, a restart
/// and a late joiner keep it): its track, how it plays, and its position `offset` at the server time `since`.
public struct AudioChannel: Sendable, Hashable {
    /// The audio asset (or sound blob) it plays.
    public var track: Digest
    /// Whether it loops.
    public var loop: Bool
    /// From 0 to 1.
    public var volume: Double
    /// Its position, in seconds of the track, at ``since``.
    public var offset: Double
    /// The server time (Unix ms) at which it was at ``offset``.
    public var since: Double
    /// Whether it is paused (then it stays at ``offset``).
    public var isPaused: Bool
    /// An ambient sound's place and radius; nil for music.
    public var at: [Double]?
    public var radius: Double?
    /// Only these participants hear it (nil: everyone, or those within the radius).
    public var to: [String]?

    /// Seconds into the track at server time `now` (Unix ms), counting on from ``offset`` unless paused (a looping
    /// track's players wrap it at its duration, which the server does not need).
    public func position(at now: Double) -> Double {
        isPaused ? offset : offset + max(0, now - since) / 1000
    }

    /// The stored form, and what a viewer is sent.
    var json: JSONValue {
        var channel: [String: JSONValue] = [
            "track": .string(track.description), "loop": .bool(loop), "volume": .number(volume), "offset": .number(offset),
            "since": .number(since), "paused": .bool(isPaused),
        ]
        if let at { channel["at"] = .array(at.map(JSONValue.number)) }
        if let radius { channel["radius"] = .number(radius) }
        if let to { channel["to"] = .array(to.map(JSONValue.string)) }
        return .object(channel)
    }

    /// The stored form with the channel's `position` (seconds) at server time `now` (Unix ms): what a hearer is sent.
    public func json(at now: Double) -> JSONValue {
        guard case .object(var fields) = json else { return json }
        fields["position"] = .number((position(at: now) * 1000).rounded() / 1000)
        return .object(fields)
    }

    /// Reads the stored form; nil when it is not one.
    init?(json: JSONValue) {
        guard let track = json["track"]?.stringValue.flatMap(Digest.init), case .number(let offset)? = json["offset"],
              case .number(let since)? = json["since"]
        else { return nil }
        (self.track, self.offset, self.since) = (track, offset, since)
        loop = json["loop"] == .bool(true)
        isPaused = json["paused"] == .bool(true)
        if case .number(let volume)? = json["volume"] { self.volume = volume } else { volume = 1 }
        if case .array(let pair)? = json["at"] { at = pair.compactMap { if case .number(let v) = $0 { v } else { nil } } }
        if case .number(let radius)? = json["radius"] { self.radius = radius }
        if case .array(let names)? = json["to"] { to = names.compactMap(\.stringValue) }
    }

    init(_ command: AudioCommand, track: Digest, now: Double) {
        (self.track, loop, volume, offset, since, isPaused) = (track, command.loop ?? false, command.volume ?? 1, command.offset ?? 0, now, false)
        (at, radius, to) = (command.at, command.radius, command.to)
    }
}

extension Table {
    /// The channels of the table's sound, by id.
    public var audioChannels: [String: AudioChannel] { audio }

    /// Who hears a channel (the host always does): those it is addressed `to`, and for an ambient sound only players
    /// with a token within its radius of its place (by the tokens' tiles' centres) that sees the sound's tile past the
    /// walls (``SightMap/sees(_:from:)``, whether vision is on or not: windows and open doors let sound through).
    public func audience(of channel: AudioChannel) -> Audience {
        var audience = Self.audience(to: channel.to, from: nil) ?? .everyone
        if let at = channel.at, at.count == 2, let radius = channel.radius {
            let place = Cell(x: min(width - 1, Int(at[0].rounded(.down))), y: min(height - 1, Int(at[1].rounded(.down))))
            let near = tokens.items.compactMap { token -> String? in
                guard let owner = token["owner"]?.stringValue else { return nil }
                let cell = Cell(x: Self.int(token["x"]), y: Self.int(token["y"]))
                let (dx, dy) = (Double(cell.x) + 0.5 - at[0], Double(cell.y) + 0.5 - at[1])
                return dx * dx + dy * dy <= radius * radius && sightMap.sees(place, from: cell) ? owner : nil
            }
            audience = audience.intersection(.only(near))
        }
        return audience
    }

    /// Applies a jukebox op (the host's alone); its audience is the channel's.
    mutating func apply(_ command: AudioCommand, participant: String?) throws(TableError) -> Change {
        if participant != nil { throw TableError(.forbidden, "only the host may play, pause, stop or change the volume of sounds") }
        let now = command.serverTime ?? 0
        let op = TableOp.audio(command)
        switch command.action {
        case .play:
            if let track = command.track {
                let channel = AudioChannel(command, track: track, now: now)
                let replaced = audio.updateValue(channel, forKey: command.channel)
                let audience = audience(of: channel)
                var views = audience == .everyone ? nil : [View(audience: audience, op: op)]
                // Whoever heard the track it replaces and cannot hear this one is told to stop the channel.
                if let replaced, case let dropped = self.audience(of: replaced).subtracting(audience), !dropped.isEmpty {
                    let stop = AudioCommand(.stop, channel: command.channel, serverTime: command.serverTime)
                    views = (views ?? []) + [View(audience: dropped, op: .audio(stop))]
                }
                return Change(op: op, views: views, art: [(audience, [track])], changesVisibility: true)
            }
            guard var channel = audio[command.channel] else { throw Self.refusal("channel", command.channel) }
            if channel.isPaused { (channel.since, channel.isPaused) = (now, false) }
            if let volume = command.volume { channel.volume = volume }
            audio[command.channel] = channel
            return channelChange(op, channel)
        case .pause:
            guard var channel = audio[command.channel] else { throw Self.refusal("channel", command.channel) }
            if !channel.isPaused { (channel.offset, channel.since, channel.isPaused) = (channel.position(at: now), now, true) }
            audio[command.channel] = channel
            return channelChange(op, channel)
        case .stop:
            guard let channel = audio.removeValue(forKey: command.channel) else { throw Self.refusal("channel", command.channel) }
            var change = channelChange(op, channel)
            change.changesVisibility = true
            return change
        case .volume:
            guard var channel = audio[command.channel] else { throw Self.refusal("channel", command.channel) }
            channel.volume = command.volume ?? channel.volume
            audio[command.channel] = channel
            return channelChange(op, channel)
        }
    }

    private func channelChange(_ op: TableOp, _ channel: AudioChannel) -> Change {
        let audience = audience(of: channel)
        return Change(op: op, views: audience == .everyone ? nil : [View(audience: audience, op: op)], art: [], changesVisibility: false)
    }

    /// What `viewer` hears now (server time `now`, Unix ms): each channel they are in the audience of, with its
    /// `position` in seconds; what a late joiner's snapshot carries.
    public func audioView(for viewer: Actor, at now: Double) -> JSONValue {
        var channels: [String: JSONValue] = [:]
        for (id, channel) in audio {
            if case .participant(let participant) = viewer, !audience(of: channel).contains(participant) { continue }
            channels[id] = channel.json(at: now)
        }
        return .object(channels)
    }

    /// Whether `op` may change who hears an ambient sound: it moves, adds, removes, sets or gives a token, or changes a
    /// wall or door; and an ambient sound plays.
    func mayChangeHearers(_ op: TableOp) -> Bool {
        guard audio.values.contains(where: { $0.at != nil }) else { return false }
        switch op {
        case .move, .set, .assign, .add(.token, _), .remove(.token, _), .addWall, .removeWall, .door: return true
        default: return false
        }
    }

    /// Who hears each ambient sound, by channel id.
    func hearers() -> [String: Audience] {
        audio.filter { $0.value.at != nil }.mapValues(audience(of:))
    }

    /// Records in `change` the ambient sounds each participant starts or stops hearing since `before` (``hearers()``),
    /// with the art of those they start.
    func hear(since before: [String: Audience], into change: inout Change) {
        for (id, audience) in hearers() {
            guard let channel = audio[id] else { continue }
            let was = before[id] ?? .nobody
            for participant in audience.subtracting(was).ids {
                change.heard[participant, default: [:]][id] = .some(channel)
                change.art.append((.only([participant]), [channel.track]))
            }
            for participant in was.subtracting(audience).ids { change.heard[participant, default: [:]][id] = .some(nil) }
        }
        if !change.heard.isEmpty { change.changesVisibility = true }
    }
}
