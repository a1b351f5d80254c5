/// The palette form of a map's floor (`hoard.map/v2`): each texture's digest once in `background.palette`, the painted
/// tiles as rectangles `background.rects: [[x, y, w, h, paletteIndex], …]` (later ones over earlier ones; index -1: the
/// default `texture`; a single tile is written `[x, y, paletteIndex]`, so a floor painted tile by tile in random
/// textures stays under 4 MB at 512 × 512). A map painted in rooms and corridors is a few kilobytes where `hoard.map/v1` repeats a
/// 71-character digest in every painted tile (a fully painted 512 × 512 map: about 26 MB).
public enum MapPalette {
    /// The v2 schema tag.
    public static let schema = "hoard.map/v2"

    /// Most tiles the rectangles of a map's floor and fog may cover, counted with overlaps (16 whole 512 × 512
    /// grids): reading a floor costs a write per covered tile, so a map may not make the server paint forever.
    public static let maxPaintedTiles = 16 * 512 * 512

    /// What is wrong with a map's floor or fog when their rectangles cover more than ``maxPaintedTiles`` tiles; nil
    /// when nothing is.
    public static func excess(_ map: JSONValue) -> String? {
        var covered = 0
        for case .array(let rects)? in [map["background"]?["rects"], map["fog"]?["revealed"]] {
            for case .array(let rect) in rects {
                guard rect.count == 4 || rect.count == 5, case .number(let w) = rect[2], case .number(let h) = rect[3] else {
                    covered += 1
                    continue
                }
                covered += Int(min(max(w, 1), 512)) * Int(min(max(h, 1), 512))
            }
        }
        guard covered > maxPaintedTiles else { return nil }
        return "the map's floor and fog rectangles cover \(covered) tiles (overlaps counted); at most \(maxPaintedTiles): merge overlapping rectangles"
    }

    /// A `hoard.map/v1` document in the v2 form: the same floor, as a palette and rectangles; anything else as it is
    /// (a v2 map, an app's own shape, a v1 map whose tiles are not all `{x, y, texture}` inside the grid). With
    /// `anySchema`, a per-tile floor is upgraded whatever the map's schema says (the door, ``MapCheck``).
    public static func upgraded(_ map: JSONValue, anySchema: Bool = false) -> JSONValue {
        guard case .object(var document) = map, anySchema || document["schema"] == .string("hoard.map/v1"),
              case .object(var background)? = document["background"], case .array(let tiles)? = background["tiles"]
        else { return map }
        let width = side(map["grid"]?["width"]), height = side(map["grid"]?["height"])
        var palette: [String] = []
        var indexOf: [String: Int] = [:]
        var cells = [Int32](repeating: -2, count: width * height)  // -2: not painted
        for tile in tiles {
            guard case .object(let fields) = tile, fields.count == 3, case .number(let x)? = fields["x"], case .number(let y)? = fields["y"],
                  let texture = fields["texture"]?.stringValue, x == x.rounded(), y == y.rounded(),
                  (0..<Double(width)).contains(x), (0..<Double(height)).contains(y)
            else { return map }
            let index = indexOf[texture] ?? {
                palette.append(texture)
                indexOf[texture] = palette.count - 1
                return palette.count - 1
            }()
            cells[Int(y) * width + Int(x)] = Int32(index)
        }
        background["tiles"] = nil
        let (used, rects) = floor(cells, width: width, height: height)
        background["palette"] = .array(used.map { .string(palette[Int($0)]) })
        background["rects"] = .array(rects)
        document["background"] = .object(background)
        document["schema"] = .string(schema)
        return .object(document)
    }

    /// A floor's tiles (palette indices, -1 the default texture, -2 unpainted) in the wire form: the indices in use,
    /// in order of first use, and the rectangles naming them by their place in that list (single tiles as
    /// `[x, y, i]`).
    static func floor(_ cells: [Int32], width: Int, height: Int) -> (used: [Int32], rects: [JSONValue]) {
        var used: [Int32] = []
        var position: [Int32: Int] = [-1: -1]
        let rects = rectangles(cells, width: width, height: height).map { rect -> JSONValue in
            let index = position[rect.index] ?? {
                used.append(rect.index)
                position[rect.index] = used.count - 1
                return used.count - 1
            }()
            let numbers = rect.w == 1 && rect.h == 1 ? [rect.x, rect.y, index] : [rect.x, rect.y, rect.w, rect.h, index]
            return .array(numbers.map { .number(Double($0)) })
        }
        return (used, rects)
    }

    /// A run of one value along a row: where it starts, how long, which value.
    struct Run: Hashable {
        var x: Int
        var w: Int
        var index: Int32
    }

    /// A rectangle of tiles holding one value.
    struct Rect: Equatable {
        var x: Int, y: Int, w: Int, h: Int
        var index: Int32
    }

    /// Painted cells (any value but -2) as rectangles: runs along each row, joined with the same run on the rows
    /// below; in the order of their top-left corners (row by row).
    static func rectangles(_ cells: [Int32], width: Int, height: Int) -> [Rect] {
        var done: [Rect] = []
        // Runs still growing downwards: their start row and height.
        var open: [Run: (y: Int, h: Int)] = [:]
        var next: [Run: (y: Int, h: Int)] = [:]
        for y in 0..<height {
            var x = 0
            let row = y * width
            while x < width {
                let index = cells[row + x]
                var end = x + 1
                while end < width, cells[row + end] == index { end += 1 }
                if index != -2 {
                    let run = Run(x: x, w: end - x, index: index)
                    if let growing = open.removeValue(forKey: run) { next[run] = (growing.y, growing.h + 1) } else { next[run] = (y, 1) }
                }
                x = end
            }
            for (run, span) in open { done.append(Rect(x: run.x, y: span.y, w: run.w, h: span.h, index: run.index)) }
            swap(&open, &next)
            next.removeAll(keepingCapacity: true)
        }
        for (run, span) in open { done.append(Rect(x: run.x, y: span.y, w: run.w, h: span.h, index: run.index)) }
        return done.sorted { ($0.y, $0.x) < ($1.y, $1.x) }
    }

    private static func side(_ value: JSONValue?) -> Int {
        guard case .number(let number)? = value, number == number.rounded(), (1...512).contains(number) else { return 512 }
        return Int(number)
    }
}
