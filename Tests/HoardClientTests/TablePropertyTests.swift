#if canImport(Glibc)
    import Foundation
    import HoardCore
    import Testing

    @testable import HoardClient
    import HoardTestSupport

    /// Records every text a connection receives, so a test can check what reached a player byte for byte.
    final class RecordingConnector: LiveConnector {
        let inner = DroppableLiveConnector()
        let received = Locked([String]())

        func connect(to url: URL, token: String?) async throws -> any LiveConnection {
            Recording(inner: try await inner.connect(to: url, token: token), received: received)
        }

        struct Recording: LiveConnection {
            let inner: any LiveConnection
            let received: Locked<[String]>
            func receive() async throws -> String? {
                let text = try await inner.receive()
                if let text { received.withLock { $0.append(text) } }
                return text
            }
            func send(_ text: String) async throws { try await inner.send(text) }
            func close() { inner.close() }
        }
    }

    /// Random interleavings of host and player ops over real sockets, with players dropping and reconnecting and one
    /// joining late: every player's copy, built only from what their live channel delivered, ends equal to the table as
    /// the server shows them, and no byte any player received names a hidden token or its art.
    // One test at a time: five of them at once, each with a server and several clients, on a loaded 2-core CI machine
    // left a player reconnecting past the minute it is given.
    @Suite(.serialized, .timeLimit(.minutes(3))) struct TablePropertyTests {
        /// The players who did not get the last message, with the connection state and any failure of their channel.
        static func stragglers(_ players: [Player]) -> String {
            players.filter { !$0.ended.current }.map { "\($0.id) connected: \($0.channel.isConnected), failure: \($0.failure.current ?? "none")" }
                .joined(separator: "; ")
        }

        final class Player: Sendable {
            let id: String
            let client: HoardClient
            let connector = RecordingConnector()
            let copy: Locked<Table>
            let channel: LiveChannel
            let consumer: Task<Void, Never>
            let ended = Locked(false)
            /// Why the player's event stream ended early, if it did.
            let failure = Locked<String?>(nil)

            init(joined: JoinedSession) {
                id = joined.participantId
                client = joined.client
                let copy = Locked(Table(map: joined.session.map))
                self.copy = copy
                var options = LiveOptions()
                options.firstRetryDelay = .milliseconds(10)
                options.maxRetryDelay = .milliseconds(50)
                options.connector = connector
                let channel = joined.live(options: options)
                self.channel = channel
                let ended = self.ended
                let failure = self.failure
                consumer = Task {
                    do {
                        for try await event in channel.events {
                            switch event {
                            case .snapshot(_, _, let map): copy.withLock { $0 = Table(map: map) }
                            case .op(_, _, let json):
                                guard let op = try? TableOp(json: json) else { continue }
                                if case .message(let text, _) = op, text == "the end" { ended.withLock { $0 = true } }
                                copy.withLock { _ = try? $0.apply(op, by: .host) }
                            default: break
                            }
                        }
                    } catch {
                        failure.withLock { $0 = "\(error)" }
                    }
                }
            }
        }

        /// Sends the host's last message until every player has it (60 s at most): on a loaded machine the host's ops
        /// reach the server in bursts, and one refused for the socket's rate is not applied; another, with its own op id,
        /// is. Players still get every op they see, in order, or the comparison of their copies fails.
        static func sendTheEnd(_ host: LiveChannel, until players: [Player]) async throws -> Bool {
            for _ in 0..<12 {
                try await host.send(.message(text: "the end", to: nil))
                if await eventually(seconds: 5, { players.allSatisfy { $0.ended.current } }) { return true }
            }
            return false
        }

        @Test(arguments: [21, 22, 23] as [UInt64]) func everyPlayersCopyIsTheirViewThroughDropsAndReconnects(seed: UInt64) async throws {
            try await ServerFixture.with { fixture in
                var random = SeededRandom(seed: seed)
                let art = try await fixture.upload(sizes: [100, 120, 140, 160]).map(\.digest.description)
                let secretArt = [art[1], art[3]]
                let host = fixture.client()
                func token(_ id: String, _ asset: String, hidden: Bool = false) -> JSONValue {
                    var token: [String: JSONValue] = [
                        "id": .string(id), "asset": .string(asset), "x": .number(1), "y": .number(1), "number": .number(1),
                    ]
                    if hidden { token["hidden"] = .bool(true) }
                    return .object(token)
                }
                let map = JSONValue.object([
                    "schema": .string("hoard.map/v1"), "grid": .object(["width": .number(16), "height": .number(12)]),
                    "drawing": .object(["walls": .array([]), "strokes": .array([])]),
                    "tokens": .array([token("goblin", art[0]), token("secret-1", art[1], hidden: true), token("wolf", art[2])]),
                ])
                let created = try await host.createSession(name: "Crypt", map: map)
                let hostChannel = host.liveChannel(sessionId: created.id, since: nil, options: fastRetries(DroppableLiveConnector()))
                var players: [Player] = []
                for name in ["Ana", "Bo"] {
                    players.append(Player(joined: try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: name)))
                }
                #expect(await eventually(seconds: 30) { hostChannel.isConnected && players.allSatisfy(\.channel.isConnected) })
                for step in 0..<160 {
                    if step == 60 {
                        players.append(Player(joined: try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: "Cy")))
                    }
                    if random.next(upperBound: 25) == 0 {
                        players[Int(random.next(upperBound: UInt64(players.count)))].connector.inner.dropAll()
                    }
                    let ids = players.map(\.id)
                    if random.next(upperBound: 4) == 0 {
                        let player = players[Int(random.next(upperBound: UInt64(players.count)))]
                        let own: TableOp =
                            switch random.next(upperBound: 3) {
                            case 0:
                                .move(
                                    token: ["goblin", "wolf", "t1"][Int(random.next(upperBound: 3))], x: Int(random.next(upperBound: 16)),
                                    y: 2)
                            case 1:
                                .stroke([
                                    "id": .string("s\(step)"), "color": .string("#336699"), "width": .number(0.5),
                                    "points": .array([.array([.number(0), .number(0)]), .array([.number(3), .number(3)])]),
                                ])
                            default: .message(text: "hi \(step)", to: [ids[Int(random.next(upperBound: UInt64(ids.count)))]])
                            }
                        try await player.channel.send(own)
                    } else {
                        try await hostChannel.send(Self.hostOp(&random, step: step, players: ids, art: art))
                    }
                    if step % 30 == 29 { try await Task.sleep(for: .milliseconds(400)) }  // within the socket's rate budget
                }
                try await Task.sleep(for: .milliseconds(300))
                #expect(
                    try await Self.sendTheEnd(hostChannel, until: players),
                    "every player got the last message; those who did not: \(Self.stragglers(players))")
                try await Self.check(players, session: created.id, seed: seed, secrets: ["secret-"] + secretArt, secretBlobs: secretArt)
                hostChannel.close()
            }
        }

        /// The same over fog, paint, walls, doors and glimpses: the east (x ≥ 12) is never revealed, so no byte any
        /// player receives names the floor, object, wall or token art used only there; a hidden `hider` is glimpsed to
        /// players for a second at a time, and once the glimpses have ended no player's view holds it.
        @Test(arguments: [31, 32] as [UInt64]) func fogAndGlimpsesKeepEveryPlayersCopyTheirView(seed: UInt64) async throws {
            try await ServerFixture.with { fixture in
                var random = SeededRandom(seed: seed)
                let art = try await fixture.upload(sizes: [100, 120, 140, 160]).map(\.digest.description)
                let secretArt = [art[1], art[3]]
                let host = fixture.client()
                func token(_ id: String, _ asset: String, x: Int, y: Int, hidden: Bool = false) -> JSONValue {
                    .object([
                        "id": .string(id), "asset": .string(asset), "x": .number(Double(x)), "y": .number(Double(y)), "number": .number(1),
                        "hidden": .bool(hidden),
                    ])
                }
                func numbers(_ values: [Int]) -> JSONValue { .array(values.map { .number(Double($0)) }) }
                let map = JSONValue.object([
                    "schema": .string("hoard.map/v2"), "grid": .object(["width": .number(16), "height": .number(12)]),
                    "background": .object([
                        "palette": .array([.string(art[0]), .string(art[3])]), "rects": .array([numbers([0, 0, 4, 4, 0]), numbers([12, 0, 4, 12, 1])]),
                    ]),
                    "fog": .object(["enabled": .bool(true), "revealed": .array([numbers([0, 0, 4, 4])])]),
                    "drawing": .object([
                        "walls": .array([.object(["id": .string("east"), "from": numbers([13, 1]), "to": numbers([13, 9]), "texture": .string(art[1])])]),
                        "strokes": .array([]),
                    ]),
                    "objects": .array([.object(["id": .string("chest"), "asset": .string(art[1]), "x": .number(14), "y": .number(4)])]),
                    "tokens": .array([
                        token("goblin", art[0], x: 1, y: 1), token("hider", art[2], x: 2, y: 2, hidden: true),
                        token("secret-1", art[3], x: 14, y: 9),
                    ]),
                ])
                let created = try await host.createSession(name: "Fog", map: map)
                let hostChannel = host.liveChannel(sessionId: created.id, since: nil, options: fastRetries(DroppableLiveConnector()))
                var players: [Player] = []
                for name in ["Ana", "Bo", "Cy"] {
                    players.append(Player(joined: try await HoardClient(baseURL: fixture.baseURL).join(code: created.code, name: name)))
                }
                #expect(await eventually(seconds: 30) { hostChannel.isConnected && players.allSatisfy(\.channel.isConnected) })
                let ids = players.map(\.id)
                try await hostChannel.send(.assign(token: "goblin", owner: ids[0]))
                try await hostChannel.send(.settings(playersOpenDoors: true))
                for step in 0..<120 {
                    if random.next(upperBound: 30) == 0 {
                        players[Int(random.next(upperBound: UInt64(players.count)))].connector.inner.dropAll()
                    }
                    func pick<T>(_ items: [T]) -> T { items[Int(random.next(upperBound: UInt64(items.count)))] }
                    let x = Int(random.next(upperBound: 8)), y = Int(random.next(upperBound: 10))
                    let west = TileRect(x: x, y: y, w: 1 + Int(random.next(upperBound: 3)), h: 1 + Int(random.next(upperBound: 2)))
                    if random.next(upperBound: 4) == 0 {
                        let player = players[0]
                        try await player.channel.send(
                            random.next(upperBound: 2) == 0 ? .move(token: "goblin", x: x, y: y) : .door(wall: "w\(step % 3)", open: true))
                        continue
                    }
                    let op: TableOp =
                        switch random.next(upperBound: 10) {
                        case 0: .fog(.reveal([west]))
                        case 1: .fog(.cover([west]))
                        case 2: .paint(rects: [west], texture: pick([Digest(art[0]), Digest(art[2]), nil]) ?? nil)
                        case 3: .paint(rects: [TileRect(x: 12 + Int(random.next(upperBound: 4)), y: y, w: 1, h: 2)], texture: Digest(art[3]))
                        case 4:
                            .addWall([
                                "id": .string("w\(step % 3)"), "from": numbers([x, y]), "to": numbers([x + 1, y]), "door": .bool(true),
                                "texture": .string(art[2]),
                            ])
                        case 5: .removeWall(id: "w\(step % 3)")
                        case 6: .glimpse(token: "hider", to: [pick(ids)], seconds: 1)
                        case 7: .move(token: "hider", x: x, y: y)
                        case 8: .add(.object, ["id": .string("o\(step)"), "asset": .string(art[0]), "x": .number(Double(x)), "y": .number(Double(y))])
                        default: .move(token: pick(["goblin", "secret-1"]), x: pick([x, 12 + x % 4]), y: y)
                        }
                    // The secret token stays in the east: only moves that keep it there.
                    if case .move("secret-1", let tx, _) = op, tx < 12 { continue }
                    try await hostChannel.send(op)
                    if step % 30 == 29 { try await Task.sleep(for: .milliseconds(400)) }  // within the socket's rate budget
                }
                try await Task.sleep(for: .milliseconds(1_500))  // every glimpse (1 s) has ended on the server's clock
                #expect(
                    try await Self.sendTheEnd(hostChannel, until: players),
                    "every player got the last message; those who did not: \(Self.stragglers(players))")
                // A loaded machine may apply the last glimpse late: its second is counted from then, on the server.
                let unseen = try await eventually(seconds: 20) {
                    var clear = true
                    for player in players {
                        let text = String(decoding: try CanonicalJSON.encode(try await player.client.session(id: created.id).map), as: UTF8.self)
                        let copy = String(decoding: try CanonicalJSON.encode(player.copy.current.map), as: UTF8.self)
                        clear = clear && !text.contains("hider") && !copy.contains("hider")
                    }
                    return clear
                }
                #expect(unseen, "once the glimpses have ended, no player's view or copy holds the hider")
                for player in players {
                    let received = player.connector.received.current
                    #expect(received.contains { $0.contains("\"reveal\"") || $0.contains("\"paint\"") || $0.contains("snapshot") })
                }
                try await Self.check(players, session: created.id, seed: seed, secrets: ["secret-", "chest"] + secretArt, secretBlobs: secretArt)
                hostChannel.close()
            }
        }

        /// Every player's copy equals their view as the server shows it; nothing they received contains a secret, and the
        /// secret blobs answer them 404. Closes their channels.
        static func check(_ players: [Player], session: String, seed: UInt64, secrets: [String], secretBlobs: [String]) async throws {
            for player in players {
                let shown = try await player.client.session(id: session)
                let expected = try CanonicalJSON.encode(sortedById(shown.map))
                let copy = try CanonicalJSON.encode(sortedById(player.copy.current.map))
                #expect(
                    copy == expected,
                    "\(player.id)'s copy (seed \(seed)):\n\(String(decoding: copy, as: UTF8.self))\n\(String(decoding: expected, as: UTF8.self))"
                )
                let received = player.connector.received.current
                #expect(!received.isEmpty)
                for secret in secrets { #expect(!received.contains { $0.contains(secret) }, "\(player.id) was sent \(secret)") }
                for secret in secretBlobs {
                    await #expect { _ = try await player.client.exchange("GET", "/v1/blobs/\(secret)") } throws: {
                        ($0 as? HoardClientError)?.status == 404
                    }
                }
                player.channel.close()
                player.consumer.cancel()
            }
        }

        /// The host's ops: anything on the visible tokens, only moves, labels, hiding and removal on `secret-*` (never
        /// shown to anyone, so no player may ever be sent their id or art).
        static func hostOp(_ random: inout SeededRandom, step: Int, players: [String], art: [String]) -> TableOp {
            let visible = ["goblin", "wolf", "t1", "t2"][Int(random.next(upperBound: 4))]
            let secret = ["secret-1", "secret-2"][Int(random.next(upperBound: 2))]
            let player = players[Int(random.next(upperBound: UInt64(players.count)))]
            let x = Int(random.next(upperBound: 16)), y = Int(random.next(upperBound: 12))
            func token(_ id: String, _ asset: String, hidden: Bool) -> [String: JSONValue] {
                var token: [String: JSONValue] = [
                    "id": .string(id), "asset": .string(asset), "x": .number(Double(x)), "y": .number(Double(y)), "number": .number(2),
                ]
                if hidden { token["hidden"] = .bool(true) }
                return token
            }
            switch random.next(upperBound: 14) {
            case 0: return .add(.token, token(visible, art[Int(random.next(upperBound: 2)) * 2], hidden: random.next(upperBound: 2) == 0))
            case 1: return .add(.token, token(secret, art[[1, 3][Int(random.next(upperBound: 2))]], hidden: true))
            case 2: return .remove(.token, id: random.next(upperBound: 2) == 0 ? visible : secret)
            case 3: return .move(token: secret, x: x, y: y)
            case 4: return .set(token: secret, fields: ["label": .string("secret-label")])
            case 5: return .hide(token: random.next(upperBound: 2) == 0 ? visible : secret)
            case 6: return .reveal(token: visible)
            case 7: return .assign(token: visible, owner: random.next(upperBound: 3) == 0 ? nil : player)
            case 8:
                return .set(
                    token: visible,
                    fields: ["layer": random.next(upperBound: 2) == 0 ? .string("host") : .null, "label": .string("l\(step)")])
            case 9: return .layer(name: "p:\(player)", visibleTo: random.next(upperBound: 2) == 0 ? .everyone : .only([]))
            case 10: return .erase(stroke: "s\(Int(random.next(upperBound: UInt64(step + 1))))")
            case 11: return .message(text: "psst \(step)", to: [player])
            default: return .move(token: visible, x: x, y: y)
            }
        }
    }

#endif
