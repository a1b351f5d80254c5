#if canImport(Glibc)
    import Foundation
    import HoardCore
    import Testing

    @testable import HoardClient
    import HoardTestSupport

    /// Records every text a connection receives, so a test can check what reached a player byte for byte.
    final class RecordingConnector: LiveConnector {
        let inner = SocketLiveConnector()
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
    @Suite(.timeLimit(.minutes(3))) struct TablePropertyTests {
        final class Player: Sendable {
            let id: String
            let client: HoardClient
            let connector = RecordingConnector()
            let copy: Locked<Table>
            let channel: LiveChannel
            let consumer: Task<Void, Never>
            let ended = Locked(false)

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
                    } catch {}
                }
            }
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
                let hostChannel = host.liveChannel(sessionId: created.id, since: nil, options: fastRetries(SocketLiveConnector()))
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
                try await hostChannel.send(.message(text: "the end", to: nil))
                #expect(await eventually(seconds: 60) { players.allSatisfy { $0.ended.current } }, "every player got the last message")
                for player in players {
                    let shown = try await player.client.session(id: created.id)
                    let expected = try CanonicalJSON.encode(sortedById(shown.map))
                    let copy = try CanonicalJSON.encode(sortedById(player.copy.current.map))
                    #expect(
                        copy == expected,
                        "\(player.id)'s copy (seed \(seed)):\n\(String(decoding: copy, as: UTF8.self))\n\(String(decoding: expected, as: UTF8.self))"
                    )
                    let received = player.connector.received.current
                    #expect(!received.isEmpty)
                    for secret in ["secret-"] + secretArt {
                        #expect(!received.contains { $0.contains(secret) }, "\(player.id) was sent \(secret)")
                    }
                    for secret in secretArt {
                        await #expect { _ = try await player.client.exchange("GET", "/v1/blobs/\(secret)") } throws: {
                            ($0 as? HoardClientError)?.status == 404
                        }
                    }
                    player.channel.close()
                    player.consumer.cancel()
                }
                hostChannel.close()
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
