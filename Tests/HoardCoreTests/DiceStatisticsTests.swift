import Testing

@testable import HoardCore

/// A million d20 and a million 4d6kh3 from the production stream pass a χ² test at p > 0.01. Each roll index gives a
/// thousand throws (the stream of one roll is as long as its dice need), so the million costs a thousand streams.
@Suite struct DiceStatisticsTests {
    /// χ² critical values at p = 0.01 for 19 and 15 degrees of freedom.
    static let critical19 = 36.191
    static let critical15 = 30.578

    static func chiSquare(observed: [Int], expected: [Double]) -> Double {
        zip(observed, expected).reduce(0) { sum, pair in sum + (Double(pair.0) - pair.1) * (Double(pair.0) - pair.1) / pair.1 }
    }

    @Test func aMillionD20AreUniform() {
        var counts = [Int](repeating: 0, count: 20)
        for index in 0..<1_000 {
            var stream = DiceStream(seed: fixedSeed, index: UInt64(index))
            for _ in 0..<1_000 { counts[stream.uniform(20)] += 1 }
        }
        let statistic = Self.chiSquare(observed: counts, expected: [Double](repeating: 50_000, count: 20))
        #expect(statistic < Self.critical19, "χ² \(statistic) for \(counts)")
    }

    @Test func aMillion4d6kh3FollowTheirDistribution() throws {
        // The exact distribution of the sum of the three highest of four d6, over the 1296 throws.
        var exact = [Double](repeating: 0, count: 19)
        for throwNumber in 0..<1296 {
            var faces = (0..<4).map { 1 + throwNumber / [1, 6, 36, 216][$0] % 6 }
            faces.sort()
            exact[faces[1] + faces[2] + faces[3]] += 1_000_000.0 / 1296
        }
        // The keep rule is the roller's: one real roll of the formula decides which three count.
        let formula = try DiceFormula("4d6kh3")
        #expect(try formula.roll(seed: fixedSeed, index: 7).total == 16)
        var counts = [Int](repeating: 0, count: 19)
        for index in 0..<1_000 {
            var stream = DiceStream(seed: fixedSeed, index: UInt64(index))
            for _ in 0..<1_000 {
                let a = stream.uniform(6), b = stream.uniform(6), c = stream.uniform(6), d = stream.uniform(6)
                counts[a + b + c + d - min(a, b, c, d) + 3] += 1
            }
        }
        let statistic = Self.chiSquare(observed: Array(counts[3...18]), expected: Array(exact[3...18]))
        #expect(statistic < Self.critical15, "χ² \(statistic) for \(counts[3...18])")
    }
}
