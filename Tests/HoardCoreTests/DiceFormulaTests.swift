import Testing

@testable import HoardCore

/// The seed 00 01 02 … 1f. Its draws below were computed outside Swift (Python's hmac and the rejection rule as
/// DiceStream documents it): roll 7 throws d6 faces 6 2 5 5 3 2 4 3 2 1 6 6; roll 0 throws d20 faces 13 19 1 9 11 5 1
/// 17 19 13.
let fixedSeed = DiceSeed((0..<32).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())!

private func roll(_ formula: String, _ index: UInt64 = 7) throws -> DiceRoll {
    try DiceFormula(formula).roll(seed: fixedSeed, index: index)
}

private func refusal(_ formula: String) -> DiceFailure? {
    do {
        _ = try DiceFormula(formula)
        return nil
    } catch {
        return error.code
    }
}

@Suite struct DiceFormulaTests {
    @Test func theSeedIsTheOneTheTableWasComputedWith() {
        #expect(fixedSeed.description == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        #expect(fixedSeed.commitment == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd")
    }

    @Test func theStreamDrawsWhatAnIndependentHMACImplementationDraws() throws {
        #expect(try roll("12d6").terms[0].dice.map(\.face) == [6, 2, 5, 5, 3, 2, 4, 3, 2, 1, 6, 6])
        #expect(try roll("10d20", 0).terms[0].dice.map(\.face) == [13, 19, 1, 9, 11, 5, 1, 17, 19, 13])
        #expect(try roll("3d1000000", 42).terms[0].dice.map(\.face) == [434364, 116866, 810517])
        #expect(try roll("3d%").terms[0].dice.map(\.face) == [70, 74, 13])
        #expect(try roll("4dF").terms[0].dice.map(\.face) == [1, 0, 0, 0])
    }

    @Test(arguments: [
        // Roll 7's d6 faces: 6 2 5 5 3 2 4 3 2 1 6 6.
        ("12d6", 45), ("4d6kh3", 16), ("4d6k3", 16), ("4d6kh3+2", 18), ("4d6kl1", 2), ("4d6dl1", 16), ("4d6dh1", 12),
        ("10d6r1", 38), ("10d6rr<2", 38), ("4d6!", 21), ("4d6x", 21), ("4d6xo", 21), ("4d6!!", 21), ("4d6!p", 20),
        ("3d6cs>=5", 2), ("3d6cs>=5cf<3", 1), ("3d6min3", 14), ("3d6max4", 10), ("4dF", 1), ("d6", 6),
        ("(1d6+3)*2", 18), ("7/2", 3), ("-7/2", -3), ("2*3+4", 10), ("2*(3+4)", 14), ("1d6 - 10", -4), ("- -2", 2),
    ])
    func aFormulaRollsItsTableValue(formula: String, total: Int) throws {
        #expect(try roll(formula).total == total)
    }

    @Test func everyDieIsRecordedWithWhatHappenedToIt() throws {
        let kept = try roll("4d6kh3").terms[0].dice
        #expect(kept.map(\.isDropped) == [false, true, false, false])
        let rerolled = try roll("10d6r1").terms[0].dice
        #expect(rerolled.count == 11 && rerolled[9].isRerolled && rerolled[10].face == 6 && !rerolled[10].isRerolled)
        let exploded = try roll("4d6!").terms[0].dice
        #expect(exploded.map(\.face) == [6, 2, 5, 5, 3] && exploded.map(\.isExploded) == [true, false, false, false, false])
        let compounded = try roll("4d6!!").terms[0].dice
        #expect(compounded[0].face == 8 && compounded[0].rolls == [6, 2] && compounded.count == 4)
        let penetrated = try roll("4d6!p").terms[0].dice
        #expect(penetrated[1].face == 1 && penetrated[1].rolls == [2])
        let counted = try roll("3d6cs>=5").terms[0].dice
        #expect(counted.map(\.isSuccess) == [true, false, true])
        #expect(try roll("3d6min3").json == roll("3d6min3").json, "the same seed and index roll the same")
        #expect(try roll("12d6", 8).terms[0].dice.map(\.face) != roll("12d6", 7).terms[0].dice.map(\.face))
    }

    @Test func theRecordCarriesFlagsOnlyWhenSet() throws {
        let json = try roll("2d6kh1+1").json
        let text = String(decoding: try CanonicalJSON.encode(json), as: UTF8.self)
        #expect(
            text == #"{"formula":"2d6kh1+1","index":7,"terms":[{"dice":[{"face":6},{"dropped":true,"face":2}],"#
                + #""notation":"2d6kh1","value":6}],"total":7}"#)
    }

    @Test(arguments: [
        "", "4d", "d", "d0", "4d6kh3kh1", "(1d6", "1d6)", "1d6+", "2d6q", "0d6", "4d6kh5", "2d6r", "2d6cs", "2d6min",
        "1d6 6", "3 d6",
    ])
    func aMalformedFormulaIsRefused(formula: String) {
        #expect(refusal(formula) == .badFormula)
    }

    @Test(arguments: [
        "1000000000d6", "99999999999999999999999d6", "1001d6", "600d6+600d6", "1d1000001", "1d6+1000001",
        String(repeating: "(", count: 17) + "1" + String(repeating: ")", count: 17), String(repeating: "-", count: 17) + "1",
        "1d6+" + String(repeating: "1+", count: 130) + "1", "d6r<7", "d6rr>=1", "d1!", "d6x>=1", "dF!>-2", "d6!!<=6",
    ])
    func aFormulaPastItsLimitsIsRefusedBeforeRolling(formula: String) {
        #expect(refusal(formula) == .diceLimit)
    }

    @Test func limitsThatAreNotPassedAreAccepted() throws {
        #expect(refusal("1000d6") == nil)
        #expect(refusal(String(repeating: "(", count: 15) + "1" + String(repeating: ")", count: 15)) == nil)
        #expect(refusal("d6xo>=1") == nil, "an explosion once ends")
        #expect(refusal("1d1000000") == nil)
    }

    @Test func explosionsStopAtTheExtraDiceBudget() throws {
        var limits = DiceLimits()
        limits.extraDice = 3
        let rolled = try DiceFormula("20d2!", limits: limits).roll(seed: fixedSeed, index: 1, limits: limits)
        #expect(rolled.terms[0].dice.count == 23, "20 dice and 3 explosions")
    }

    @Test func aDivisionByZeroIsRefusedWhenRolled() {
        #expect(throws: DiceError.self) { try roll("1/(1d1-1)") }
    }

    @Test func theAuditPassesTrueRollsAndCatchesATamperedOne() throws {
        let rolls = try [roll("4d6kh3+2", 3), roll("1d20", 4), roll("8d6!cs>=5", 9)].map(\.json)
        #expect(DiceAudit.verify(seed: fixedSeed, commitment: fixedSeed.commitment, rolls: rolls).isEmpty)
        var tampered = rolls
        if case .object(var first) = tampered[1] {
            first["total"] = .number(21)
            tampered[1] = .object(first)
        }
        let found = DiceAudit.verify(seed: fixedSeed, commitment: fixedSeed.commitment, rolls: tampered)
        #expect(found.map(\.index) == [4])
        let otherSeed = DiceSeed.random()
        #expect(DiceAudit.verify(seed: otherSeed, commitment: fixedSeed.commitment, rolls: rolls).count >= 1)
        #expect(DiceSeed(otherSeed.description) == otherSeed)
    }
}

@Suite struct DiceStatisticsRecordTests {
    @Test func eachRollerHasARecordPerDieAndTheLuckiestLeadsItsList() throws {
        func event(_ who: String, _ formula: String, _ index: UInt64) throws -> JSONValue {
            .object(["type": .string("rolled"), "from": .string(who), "roll": try DiceFormula(formula).roll(seed: fixedSeed, index: index).json])
        }
        // Roll 7's d6 faces are 6 2 5 5 3 2 4 3 2 1 6 6; roll 0's d20 faces begin 13 19 1.
        let statistics = DiceStatistics(rolls: [
            try event("ana", "4d6kh3+2", 7), try event("bo", "3d20", 0), try event("bo", "12d6", 7),
            .object(["type": .string("rolled"), "from": .string("cy"), "blind": .bool(true)]),
        ])
        #expect(statistics.dice.map(\.die) == ["d6", "d20"])
        let d6 = try #require(statistics.dice.first)
        #expect(d6.rollers.map(\.who) == ["ana", "bo"], "ana's mean 4.5 leads bo's 3.75")
        let bo = try #require(d6.rollers.last)
        #expect(bo.count == 12 && bo.mean == 45.0 / 12 && bo.expected == 3.5 && bo.highest == 6 && bo.streak == 2)
        let d20 = try #require(statistics.dice.last?.rollers.first)
        #expect(d20.who == "bo" && d20.count == 3 && d20.highest == 19 && d20.mean == 11 && d20.expected == 10.5)
    }
}

@Suite struct PlayerKeyTests {
    @Test func aKeyIsReadOnlyInTheShapeTheServerMakesIt() {
        let key = PlayerKey.random()
        #expect(PlayerKey(key.description) == key && key.description.count == 51 && key != PlayerKey.random())
        let body = String(key.description.dropFirst(8))
        let short = String(body.dropLast())
        let bad: [String] = [
            "", "hoard_k_", "hoard_p_" + body, key.description + "a", "hoard_k_" + short, "hoard_k_" + short + "-",
            "hoard_k_" + short + "é", "HOARD_K_" + body,
        ]
        for bad in bad {
            #expect(PlayerKey(bad) == nil, "\(bad)")
        }
    }

    @Test func aKeyIsOnePlayerPerGroupAndTheIdGivesNoKey() throws {
        let key = try #require(PlayerKey("hoard_k_" + String(repeating: "a", count: 43)))
        let player = key.player(inGroup: 1)
        #expect(player == key.player(inGroup: 1) && player != key.player(inGroup: 2) && player != PlayerKey.random().player(inGroup: 1))
        #expect(player.hasPrefix("player:") && player.count == 39 && player.dropFirst(7).allSatisfy(\.isHexDigit) && !player.contains("aaaa"))
    }

    /// A roll names its player when they joined with a key: their record is the player's across sessions (seats
    /// differ), separate from a seat's of the same name, and the kind of each record says so.
    @Test func aPlayersRollsAddUpUnderThePlayerNotTheSeatOrTheName() throws {
        func event(_ from: String, _ player: String?, _ index: UInt64) throws -> JSONValue {
            var body: [String: JSONValue] = [
                "type": .string("rolled"), "from": .string(from), "name": .string("Ann"), "roll": try DiceFormula("2d6").roll(seed: fixedSeed, index: index).json,
            ]
            body["player"] = player.map(JSONValue.string)
            return .object(body)
        }
        let statistics = DiceStatistics(rolls: [
            try event("seat-1", "player:1", 1), try event("seat-2", "player:1", 2), try event("seat-3", nil, 3), try event("host:4", nil, 4),
        ])
        let records = try #require(statistics.dice.first).rollers.sorted { $0.who < $1.who }
        #expect(records.map(\.who) == ["host:4", "player:1", "seat-3"] && records.map(\.kind) == ["member", "player", "seat"])
        #expect(records.map(\.count) == [2, 4, 2] && records.allSatisfy { $0.name == "Ann" })
    }
}
