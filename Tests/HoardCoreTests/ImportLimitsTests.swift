import Foundation
import Testing

@testable import HoardCore

/// The limits as a JSON object of numbers.
private func fields(_ limits: ImportLimits) throws -> [String: Int64] {
    try JSONDecoder().decode([String: Int64].self, from: JSONEncoder().encode(limits))
}

private func decode(_ json: String) throws -> ImportLimits {
    try JSONDecoder().decode(ImportLimits.self, from: Data(json.utf8))
}

@Test func settingMaxEntriesChangesOnlyMaxEntries() throws {
    var limits = ImportLimits()
    try limits.set("maxEntries=5")
    #expect(limits.maxEntries == 5)
    var expected = ImportLimits()
    expected.maxEntries = 5
    #expect(limits == expected)
}

@Test(arguments: ImportLimits.CodingKeys.allCases.map(\.rawValue))
func everyKeyCanBeSetByName(_ key: String) throws {
    var limits = ImportLimits()
    let value: Int64 = 12_345
    #expect(try fields(limits)[key] != value)
    try limits.set("\(key)=\(value)")
    let after = try fields(limits)
    #expect(after[key] == value)
    // Nothing else moved.
    let before = try fields(ImportLimits())
    for (other, original) in before where other != key {
        #expect(after[other] == original, "setting \(key) changed \(other)")
    }
}

@Test func largeValuesFitTheWideLimits() throws {
    var limits = ImportLimits()
    try limits.set("maxArchiveBytes=\(Int64(1) << 40)")
    #expect(limits.maxArchiveBytes == Int64(1) << 40)
}

@Test func anUnknownKeyIsRefusedWithTheListOfKnownKeys() throws {
    var limits = ImportLimits()
    let error = #expect(throws: ProblemMessage.self) { try limits.set("maxFoo=3") }
    let message = try #require(error).description
    #expect(message.contains("maxFoo"))
    for key in ImportLimits.CodingKeys.allCases {
        #expect(message.contains(key.rawValue), "the message should list \(key.rawValue)")
    }
    #expect(limits == ImportLimits())
}

@Test(arguments: ["MaxEntries=5", "maxentries=5", " maxEntries=5"])
func keysAreMatchedExactly(_ assignment: String) {
    var limits = ImportLimits()
    #expect(throws: ProblemMessage.self) { try limits.set(assignment) }
    #expect(limits == ImportLimits())
}

@Test(arguments: ["maxEntries=abc", "maxEntries=0", "maxEntries=-1", "maxEntries=", "maxEntries", "=5", "maxEntries=5.5",
                  "maxEntries=1e3", "maxEntries=99999999999999999999", ""])
func aBadValueIsRefusedAndChangesNothing(_ assignment: String) throws {
    var limits = ImportLimits()
    let error = #expect(throws: ProblemMessage.self) { try limits.set(assignment) }
    #expect(try #require(error).description.contains("KEY=POSITIVE_INTEGER"))
    #expect(limits == ImportLimits())
}

@Test func aValueWithEqualsSignsInsideIsRefused() {
    var limits = ImportLimits()
    #expect(throws: ProblemMessage.self) { try limits.set("maxEntries=5=6") }
    #expect(limits.maxEntries == ImportLimits().maxEntries)
}

@Test func decodingAnEmptyObjectGivesTheDefaults() throws {
    #expect(try decode("{}") == ImportLimits())
}

@Test func decodingKeepsTheDefaultsOfMissingKeys() throws {
    let limits = try decode(#"{"maxEntries": 10, "maxEntryBytes": 1048576}"#)
    #expect(limits.maxEntries == 10)
    #expect(limits.maxEntryBytes == 1_048_576)
    var expected = ImportLimits()
    expected.maxEntries = 10
    expected.maxEntryBytes = 1_048_576
    #expect(limits == expected)
}

@Test func encodingThenDecodingKeepsEveryLimit() throws {
    var limits = ImportLimits()
    for (index, key) in ImportLimits.CodingKeys.allCases.enumerated() {
        try limits.set("\(key.rawValue)=\(index + 1)")
    }
    let copy = try JSONDecoder().decode(ImportLimits.self, from: JSONEncoder().encode(limits))
    #expect(copy == limits)
    #expect(copy != ImportLimits())
    #expect(try fields(copy).count == ImportLimits.CodingKeys.allCases.count)
}

@Test func decodingAWrongTypeThrows() {
    #expect(throws: DecodingError.self) { try decode(#"{"maxEntries": "many"}"#) }
}
