import Foundation
import HoardTestSupport
import Testing

@testable import HoardCore

private func texture(_ n: Int) -> String { Digest(bytes: [UInt8](repeating: UInt8(n), count: 32))!.description }

private func v1(width: Int, height: Int, tiles: [(Int, Int, Int)]) -> JSONValue {
    .object([
        "schema": .string("hoard.map/v1"), "grid": .object(["width": .number(Double(width)), "height": .number(Double(height))]),
        "background": .object(["texture": .string(texture(0)), "tiles": .array(tiles.map { x, y, t in
            .object(["x": .number(Double(x)), "y": .number(Double(y)), "texture": .string(texture(t))])
        })]),
    ])
}

/// The texture each painted tile gets from a v2 floor (later rectangles over earlier ones).
private func paint(_ map: JSONValue) -> [Int: String] {
    guard case .array(let palette)? = map["background"]?["palette"], case .array(let rects)? = map["background"]?["rects"] else { return [:] }
    var cells: [Int: String] = [:]
    for case .array(let rect) in rects {
        let numbers = rect.compactMap { if case .number(let v) = $0 { Int(v) } else { nil } }
        let n = numbers.count == 3 ? [numbers[0], numbers[1], 1, 1, numbers[2]] : numbers
        for y in n[1]..<(n[1] + n[3]) { for x in n[0]..<(n[0] + n[2]) { cells[y * 1000 + x] = palette[n[4]].stringValue } }
    }
    return cells
}

@Suite struct MapPaletteTests {
    @Test func aMapPaintedInRoomsBecomesAFewRectangles() throws {
        var tiles: [(Int, Int, Int)] = []
        for y in 0..<512 { for x in 0..<512 { tiles.append((x, y, (x / 64 + y / 64) % 4 + 1)) } }  // 64 rooms of 64 × 64
        let map = MapPalette.upgraded(v1(width: 512, height: 512, tiles: tiles))
        #expect(map["schema"] == .string("hoard.map/v2"))
        guard case .array(let rects)? = map["background"]?["rects"] else { Issue.record("no rects"); return }
        #expect(rects.count == 64)
        let bytes = try CanonicalJSON.encode(map)
        #expect(bytes.count < 8_000, "a fully painted 512 × 512 map in rooms: \(bytes.count) bytes")
        #expect(map["background"]?["texture"] == .string(texture(0)), "the default texture stays")
    }

    @Test func aFloorPaintedTileByTileInRandomTexturesStaysUnderFourMegabytes() throws {
        var random = SeededRandom(seed: 9)
        var tiles: [(Int, Int, Int)] = []
        for y in 0..<512 { for x in 0..<512 { tiles.append((x, y, Int(random.next(upperBound: 64)) + 1)) } }
        let bytes = try CanonicalJSON.encode(MapPalette.upgraded(v1(width: 512, height: 512, tiles: tiles)))
        #expect(bytes.count < 4_000_000, "\(bytes.count) bytes")
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func everyPaintedTileKeepsItsTexture(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var expected: [Int: String] = [:]
        var tiles: [(Int, Int, Int)] = []
        for _ in 0..<3_000 {
            let (x, y, t) = (Int(random.next(upperBound: 40)), Int(random.next(upperBound: 30)), Int(random.next(upperBound: 6)) + 1)
            tiles.append((x, y, t))
            expected[y * 1000 + x] = texture(t)
        }
        let map = MapPalette.upgraded(v1(width: 40, height: 30, tiles: tiles))
        #expect(paint(map) == expected)
    }

    @Test func whatIsNotAPlainV1FloorIsLeftAsItIs() {
        let odd = JSONValue.object(["schema": .string("hoard.map/v1"), "background": .object(["tiles": .array([.string("x")])])])
        #expect(MapPalette.upgraded(odd) == odd)
        let outside = v1(width: 4, height: 4, tiles: [(5, 0, 1)])
        #expect(MapPalette.upgraded(outside) == outside)
        let app = JSONValue.object(["floor": .string(texture(1))])
        #expect(MapPalette.upgraded(app) == app)
    }
}
