import ArgumentParser
import Foundation
import HoardCore

/// `hoard map sight-bench`: how long one token's sight takes to recompute after a move on a large map of rooms and
/// corridors, on one core (Benchmarks/sight.sh); and whether it hears a sound within its range past the walls
/// (``SightMap/sees(_:from:)``, asked once per token and ambient sound when an op may change who hears).
struct SightBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sight-bench", abstract: "Time sight recomputed after MOVES moves on a generated map; print percentiles.",
        shouldDisplay: false)

    @Option(help: "Wall segments (one tile side each), in rooms with doors and along corridors.") var walls = 1_000
    @Option(help: "The token's sight range, in tiles.") var range = 30
    @Option(help: "Moves timed.") var moves = 5_000
    @Option(help: "square or hex (flat, odd).") var grid = "square"
    @Option(help: "The map's side, in tiles.") var side = 512

    func run() throws {
        let kind: Grid = grid == "hex" ? .hex(HexLayout(.flat, .odd)) : .square
        var random = SystemRandomNumberGenerator()
        let segments = Self.rooms(grid: kind, side: side, count: walls, random: &random)
        let map = SightMap(grid: kind, width: side, height: side, walls: segments)
        let clock = ContinuousClock()
        var times: [Double] = []
        var cpuTimes: [Double] = []
        var tiles = 0
        var heard = 0
        var hearTimes: [Double] = []
        // A token walking: each move a step to a neighbour, now and then a jump (a teleport, a new token).
        var cell = Cell(x: side / 2, y: side / 2)
        for index in 0..<(moves + 100) {
            if index % 50 == 0 {
                cell = Cell(x: Int.random(in: 0..<side, using: &random), y: Int.random(in: 0..<side, using: &random))
            } else {
                let next = kind.neighbours(of: cell).randomElement(using: &random)!
                if (0..<side).contains(next.x), (0..<side).contains(next.y) { cell = next }
            }
            var seen: [Int] = []
            let cpuBefore = Self.threadTime()
            let elapsed = clock.measure { seen = map.seen(from: cell, range: range) }
            let cpu = Self.threadTime() - cpuBefore
            tiles += seen.count
            let sound = Cell(
                x: min(side - 1, max(0, cell.x + Int.random(in: -range...range, using: &random))),
                y: min(side - 1, max(0, cell.y + Int.random(in: -range...range, using: &random))))
            let hearBefore = Self.threadTime()
            heard += map.sees(sound, from: cell) ? 1 : 0
            if index >= 100 { hearTimes.append((Self.threadTime() - hearBefore) * 1e6) }
            // The first hundred warm the caches and are not counted.
            if index >= 100 {
                times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
                cpuTimes.append(cpu * 1e3)
            }
        }
        func percentiles(_ values: [Double], unit: String = "ms") -> String {
            let sorted = values.sorted()
            func at(_ p: Double) -> String { String(format: "%.3f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) }
            return "p50 \(at(0.5)) \(unit), p99 \(at(0.99)) \(unit), max \(at(1)) \(unit)"
        }
        Terminal.out(
            "\(grid) \(side)×\(side), \(map.blockingSegments.count) blocking wall segments, range \(range), \(moves) moves "
                + "(\(tiles / (moves + 100)) tiles seen a move on average): on the thread's CPU clock \(percentiles(cpuTimes)); "
                + "wall clock \(percentiles(times)); a sound within range heard \(heard * 100 / (moves + 100)) % of the time, on the CPU "
                + "clock \(percentiles(hearTimes, unit: "µs"))")
    }

    /// Seconds of CPU this thread used: what the move cost on one core, without the time other processes of a shared
    /// machine took the core away.
    static func threadTime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Rooms of 4 to 20 tiles a side (on hexes: patches of radius 2 to 8) walled one tile side a segment, each with a door
    /// (every other one open), until `count` segments stand.
    static func rooms(grid: Grid, side: Int, count: Int, random: inout some RandomNumberGenerator) -> [[String: JSONValue]] {
        var walls: [[String: JSONValue]] = []
        func pair(_ x: Int, _ y: Int) -> JSONValue { .array([.number(Double(x)), .number(Double(y))]) }
        while walls.count < count {
            var room: [[String: JSONValue]] = []
            switch grid {
            case .square:
                let (w, h) = (Int.random(in: 4...20, using: &random), Int.random(in: 4...20, using: &random))
                let (x0, y0) = (Int.random(in: 0...(side - w), using: &random), Int.random(in: 0...(side - h), using: &random))
                for x in x0..<(x0 + w) {
                    room += [["from": pair(x, y0), "to": pair(x + 1, y0)], ["from": pair(x, y0 + h), "to": pair(x + 1, y0 + h)]]
                }
                for y in y0..<(y0 + h) {
                    room += [["from": pair(x0, y), "to": pair(x0, y + 1)], ["from": pair(x0 + w, y), "to": pair(x0 + w, y + 1)]]
                }
            case .hex(let layout):
                let centre = layout.cube(of: Cell(x: Int.random(in: 8..<(side - 8), using: &random), y: Int.random(in: 8..<(side - 8), using: &random)))
                let inside = Set(centre.within(Int.random(in: 2...8, using: &random)))
                for cube in inside {
                    for direction in 0..<6 where !inside.contains(cube + Cube.directions[direction]) {
                        let cell = layout.cell(of: cube)
                        room.append(["cell": pair(cell.x, cell.y), "side": .number(Double(direction))])
                    }
                }
            }
            let door = Int.random(in: 0..<room.count, using: &random)
            room[door]["door"] = .bool(true)
            room[door]["open"] = .bool(walls.count % 2 == 0)
            for wall in room.prefix(count - walls.count) {
                var wall = wall
                wall["id"] = .string("w\(walls.count)")
                walls.append(wall)
            }
        }
        return walls
    }
}
