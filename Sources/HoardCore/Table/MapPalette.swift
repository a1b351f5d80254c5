/// The palette form of a map's floor (`hoard.map/v2`): each texture's digest once in `background.palette`, the painted
/// tiles as rectangles `background.rects: [[x, y, w, h, paletteIndex], …]` (later ones over earlier ones; index -1: the
/// default `texture`; a single tile is written `[x, y, paletteIndex]`, so a floor painted tile by tile in random
/// textures stays under 4 MB at 512 × 512). A map painted in rooms and corridors is a few kilobytes where `hoard.map/v1` repeats a
/// 71-character digest in every painted tile (a fully painted 512 × 512 map: about 26 MB).
public enum MapPalette {
    /// The v2 schema tag.
    public static let schema = "hoard.map/v2"

    /// A `hoard.map/v1` document in the v2 form: the same floor, as a palette and rectangles; anything else as it is
    /// (a v2 map, an app's own shape, a v1 map whose tiles are not all `{x, y, texture}` inside the grid).
    public static func upgraded(_ map: JSONValue) -> JSONValue {
        guard case .object(var document) = map, document["schema"] == .string("hoard.map/v1"),
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
        background["palette"] = .array(palette.map(JSONValue.string))
        background["rects"] = .array(rectangles(cells, width: width, height: height).map { rect in
            let short = rect[2] == 1 && rect[3] == 1 ? [rect[0], rect[1], rect[4]] : rect
            return .array(short.map { .number(Double($0)) })
        })
        document["background"] = .object(background)
        document["schema"] = .string(schema)
        return .object(document)
    }

    /// Painted cells as rectangles: runs along each row, joined with the same run on the rows below; in the order of
    /// their top-left corners (row by row).
    static func rectangles(_ cells: [Int32], width: Int, height: Int) -> [[Int]] {
        var done: [[Int]] = []
        // Runs still growing downwards, keyed by (x, w, index): their start row and height.
        var open: [[Int]: (y: Int, h: Int)] = [:]
        for y in 0..<height {
            var runs: [[Int]] = []
            var x = 0
            while x < width {
                let index = cells[y * width + x]
                var end = x + 1
                while end < width, cells[y * width + end] == index { end += 1 }
                if index != -2 { runs.append([x, end - x, Int(index)]) }
                x = end
            }
            var next: [[Int]: (y: Int, h: Int)] = [:]
            for run in runs {
                if let growing = open.removeValue(forKey: run) {
                    next[run] = (growing.y, growing.h + 1)
                } else {
                    next[run] = (y, 1)
                }
            }
            for (run, span) in open { done.append([run[0], span.y, run[1], span.h, run[2]]) }
            open = next
        }
        for (run, span) in open { done.append([run[0], span.y, run[1], span.h, run[2]]) }
        return done.sorted { ($0[1], $0[0]) < ($1[1], $1[0]) }
    }

    private static func side(_ value: JSONValue?) -> Int {
        guard case .number(let number)? = value, number == number.rounded(), (1...512).contains(number) else { return 512 }
        return Int(number)
    }
}
