import Foundation
import Testing

@testable import HoardCore

/// The jukebox's ops on the table: parsed and written back, positions reckoned on the server's clock, ambient sounds
/// heard within their radius, kept through the map document.
@Suite struct TableAudioTests {
    static let track = Digest(bytes: [UInt8](repeating: 7, count: 32))!

    /// A 16 × 12 map with Ana's token at (1, 1) and Bo's at (10, 10).
    static func table() -> Table {
        func token(_ id: String, _ x: Int, _ y: Int, _ owner: String) -> JSONValue {
            .object(["id": .string(id), "asset": .string(track.description), "x": .number(Double(x)), "y": .number(Double(y)),
                     "number": .number(1), "owner": .string(owner)])
        }
        return Table(map: .object([
            "schema": .string("hoard.map/v1"), "grid": .object(["width": .number(16), "height": .number(12)]),
            "tokens": .array([token("a", 1, 1, "ana"), token("b", 10, 10, "bo")]),
        ]))
    }

    static func op(_ json: String) throws -> TableOp { try TableOp(json: try JSONValue(parsing: Data(json.utf8))) }

    @Test func opsRoundTripThroughTheirWireForm() throws {
        let play = try Self.op(#"{"kind":"play","channel":"rain","track":"\#(Self.track)","loop":true,"volume":0.5,"offset":3,"at":[2,2],"radius":4}"#)
        #expect(try TableOp(json: play.json) == play)
        for bad in [#"{"kind":"play","channel":"m","volume":2}"#, #"{"kind":"play","channel":"m","at":[1,1]}"#, #"{"kind":"volume","channel":"m"}"#,
                    #"{"kind":"pause"}"#, #"{"kind":"stop","channel":"m","track":"x"}"#] {
            #expect(throws: TableError.self, "\(bad)") { try Self.op(bad) }
        }
    }

    @Test func positionCountsOnTheServersClockAndStopsWhenPaused() throws {
        var table = Self.table()
        let start = 1_000_000.0
        _ = try table.apply(.audio(AudioCommand(.play, channel: "music", track: Self.track, offset: 2, serverTime: start)), by: .host)
        #expect(table.audioChannels["music"]?.position(at: start + 30_000) == 32)
        _ = try table.apply(.audio(AudioCommand(.pause, channel: "music", serverTime: start + 10_000)), by: .host)
        #expect(table.audioChannels["music"]?.position(at: start + 99_000) == 12)
        _ = try table.apply(.audio(AudioCommand(.play, channel: "music", serverTime: start + 50_000)), by: .host)
        #expect(table.audioChannels["music"]?.position(at: start + 51_000) == 13, "resumed where it paused")
        // Kept in the map document: a fold or a restart reads the same channel back.
        let again = Table(map: table.map)
        #expect(again.audioChannels == table.audioChannels)
        _ = try table.apply(.audio(AudioCommand(.stop, channel: "music", serverTime: start + 60_000)), by: .host)
        #expect(table.audioChannels.isEmpty)
        #expect(throws: TableError.self) { try table.apply(.audio(AudioCommand(.pause, channel: "music")), by: .host) }
    }

    @Test func anAmbientSoundIsHeardOnlyByPlayersWithATokenWithinItsRadius() throws {
        var table = Self.table()
        let rain = AudioCommand(.play, channel: "rain", track: Self.track, at: [2, 2], radius: 3, serverTime: 0)
        let change = try table.apply(.audio(rain), by: .host)
        #expect(change.views?.first?.audience == .only(["ana"]))
        #expect(table.audioView(for: .participant("ana"), at: 0)["rain"] != nil)
        #expect(table.audioView(for: .participant("bo"), at: 0)["rain"] == nil)
        #expect(table.view(for: .participant("bo"))["audio"] == nil && table.view(for: .host)["audio"]?["rain"] != nil)
        #expect(table.viewKey(for: .participant("ana")) != table.viewKey(for: .participant("bo")))
        #expect(table.artAudiences()[Self.track]?.contains("ana") == true)
        #expect(throws: TableError.self) { try table.apply(.audio(AudioCommand(.stop, channel: "rain")), by: .participant("ana")) }
    }

    static func wall(_ id: String, from: [Double], to: [Double], _ extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
        ["id": .string(id), "from": .array(from.map(JSONValue.number)), "to": .array(to.map(JSONValue.number))].merging(extra) { $1 }
    }

    @Test func wallsStopAnAmbientSoundWhileOpenDoorsAndWindowsLetItThrough() throws {
        var table = Self.table()
        _ = try table.apply(.audio(AudioCommand(.play, channel: "rain", track: Self.track, at: [4.5, 1.5], radius: 7, serverTime: 0)), by: .host)
        let rain = try #require(table.audioChannels["rain"])
        #expect(table.audience(of: rain) == .only(["ana"]))
        // A closed door between Ana's token (1, 1) and the rain (4, 1), on a map without vision.
        var change = try table.apply(.addWall(Self.wall("d", from: [3, 0], to: [3, 4], ["door": .bool(true)])), by: .host)
        #expect(table.audience(of: rain) == .nobody && table.audioView(for: .participant("ana"), at: 0)["rain"] == nil)
        #expect(change.heard == ["ana": ["rain": nil]])
        change = try table.apply(.door(wall: "d", open: true), by: .host)
        #expect(change.heard == ["ana": ["rain": rain]] && table.audience(of: rain) == .only(["ana"]))
        #expect(change.art.contains { $0.audience == .only(["ana"]) && $0.digests == [Self.track] })
        _ = try table.apply(.door(wall: "d", open: false), by: .host)
        _ = try table.apply(.addWall(Self.wall("w", from: [3, 4], to: [3, 12], ["kind": .string("window")])), by: .host)
        #expect(table.audience(of: rain) == .nobody, "the closed door still stops it")
        // Bo comes round below the door: through the window the rain is heard; a wall there stops it again.
        change = try table.apply(.move(token: "b", x: 1, y: 7), by: .participant("bo"))
        #expect(change.heard == ["bo": ["rain": rain]])
        change = try table.apply(.removeWall(id: "w"), by: .host)
        #expect(change.heard.isEmpty, "no wall left there")
        change = try table.apply(.addWall(Self.wall("w2", from: [3, 4], to: [3, 12])), by: .host)
        #expect(change.heard == ["bo": ["rain": nil]] && table.audience(of: rain) == .nobody)
    }

    @Test func movingATokenInAndOutOfTheRadiusStartsAndStopsTheSoundForItsOwnerAlone() throws {
        var table = Self.table()
        _ = try table.apply(.audio(AudioCommand(.play, channel: "rain", track: Self.track, at: [10.5, 1.5], radius: 2, serverTime: 0)), by: .host)
        _ = try table.apply(.audio(AudioCommand(.play, channel: "music", track: Self.track, serverTime: 0)), by: .host)
        let rain = try #require(table.audioChannels["rain"])
        #expect(table.audience(of: rain) == .nobody)
        var change = try table.apply(.move(token: "b", x: 10, y: 2), by: .participant("bo"))
        #expect(change.heard == ["bo": ["rain": rain]] && change.changesVisibility)
        change = try table.apply(.move(token: "b", x: 11, y: 1), by: .participant("bo"))
        #expect(change.heard.isEmpty, "still within the radius")
        change = try table.apply(.move(token: "a", x: 2, y: 2), by: .participant("ana"))
        #expect(change.heard.isEmpty, "Ana stays out of it")
        change = try table.apply(.move(token: "b", x: 10, y: 10), by: .participant("bo"))
        #expect(change.heard == ["bo": ["rain": nil]])
        // Giving a token near the sound to Ana is as good as moving hers there.
        change = try table.apply(.move(token: "b", x: 10, y: 1), by: .host)
        change = try table.apply(.assign(token: "b", owner: "ana"), by: .host)
        #expect(change.heard == ["ana": ["rain": rain], "bo": ["rain": nil]])
        #expect(table.audioView(for: .participant("bo"), at: 0)["music"] != nil, "music is everyone's")
    }
}
