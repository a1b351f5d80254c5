import Foundation
import HoardCore
import Testing

/// ``JSONValue/init(parsing:maxDepth:)`` reads exactly what `JSONDecoder` reads, and refuses what RFC 8259 refuses;
/// ``JSONValueDecoder`` decodes the same values as `JSONDecoder`.
@Suite struct JSONParserTests {
    static func viaFoundation(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    static func parsed(_ text: String) throws -> JSONValue { try JSONValue(parsing: Data(text.utf8)) }

    /// A random document of every kind of value, escapes and non-ASCII text included.
    static func randomDocument(_ rng: inout some RandomNumberGenerator, depth: Int = 0) -> JSONValue {
        let words = ["", "goblin", "sha256:" + String(repeating: "0a", count: 32), "caf\u{E9}", "line\nbreak", "tab\there",
                     "quote\"d", "back\\slash", "\u{1F409} dragon", "\u{7}bell", "/slash"]
        switch Int.random(in: depth > 3 ? 0...3 : 0...5, using: &rng) {
        case 0: return [.null, .bool(true), .bool(false)].randomElement(using: &rng)!
        case 1: return .number([0, -0.5, 42, -7, 1e21, 3.25e-5, 123456789012345, 0.1].randomElement(using: &rng)!)
        case 2, 3: return .string(words.randomElement(using: &rng)!)
        case 4: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomDocument(&rng, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) { members[words.randomElement(using: &rng)!] = randomDocument(&rng, depth: depth + 1) }
            return .object(members)
        }
    }

    @Test func readsWhatJSONDecoderReads() throws {
        var rng = SystemRandomNumberGenerator()
        let encoder = JSONEncoder()
        for _ in 0..<300 {
            let text = String(decoding: try encoder.encode(Self.randomDocument(&rng)), as: UTF8.self)
            #expect(try Self.parsed(text) == Self.viaFoundation(text), "\(text)")
        }
        let written = #" { "a" : [ 1 , -2.5e3 , 0.0001, 1E2, true, null, "\u00e9\ud83d\ude00\/\b\f\n\r\t" ] , "b":{} , "c":[] } "#
        #expect(try Self.parsed(written) == Self.viaFoundation(written))
        #expect(try Self.parsed(#"{"k":1,"k":2}"#) == .object(["k": .number(2)]))
    }

    @Test func tellsWhereEachTopLevelMemberLies() throws {
        let text = #" { "map" : {"a":[1,{"b":"}"}]} , "seq":12,"name":"x\"y" ,"empty":[] } "#
        let data = Data(text.utf8)
        let (value, members) = try JSONValue.parsingMembers(data)
        #expect(value == (try Self.parsed(text)))
        #expect(Set(members.keys) == ["map", "seq", "name", "empty"])
        for (key, range) in members {
            let piece = try JSONValue(parsing: data[range])
            guard case .object(let all) = value else { Issue.record("not an object"); return }
            #expect(piece == all[key], "\(key)")
        }
        #expect(String(decoding: data[try #require(members["name"])], as: UTF8.self) == #""x\"y""#)
        #expect(try JSONValue.parsingMembers(Data("[1,{\"a\":2}]".utf8)).members.isEmpty, "only a top-level object has members")
        #expect(throws: JSONParseError.self) { try JSONValue.parsingMembers(Data("{\"a\":}".utf8)) }
    }

    @Test func refusesWhatIsNotJSON() throws {
        let bad = [
            "", " ", "[1,]", "{\"a\":1,}", "[01]", "[1.]", "[.5]", "[1e]", "[-]", "[+1]", "NaN", "[Infinity]", "tru", "nul",
            "[1] [2]", "{'a':1}", "{a:1}", "[\"a\"", "\"abc", "[\"\\x\"]", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\u12\"]",
            "[\"a\u{1}b\"]", "/* c */ 1", "[1e999]", "{\"a\" 1}", "[1 2]",
        ]
        for text in bad { #expect(throws: JSONParseError.self, "\(text.debugDescription)") { try Self.parsed(text) } }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Data([0x22, 0xC3, 0x28, 0x22])) }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONParseError.self) { try Self.parsed(deep) }
        #expect(try JSONValue(parsing: Data(deep.utf8), maxDepth: 700) != .null)
    }

    struct Sample: Codable, Equatable {
        struct Inner: Codable, Equatable {
            var digest: Digest
            var size: Int64
            var scale: UInt8
            var ratio: Double?
        }
        var name: String
        var flags: [Bool]
        var inner: [Inner]
        var extra: JSONValue
        var missing: String?
        var kind: AssetKind
    }

    @Test func decodesTheSameValuesAsJSONDecoder() throws {
        let text = """
            {"name":"ogre","flags":[true,false],"kind":"token","extra":{"x":[1,"two",null]},
             "inner":[{"digest":"sha256:\(String(repeating: "ab", count: 32))","size":1234567,"scale":2,"ratio":null},
                      {"digest":"sha256:\(String(repeating: "cd", count: 32))","size":0,"scale":8,"ratio":0.5}]}
            """
        let data = Data(text.utf8)
        let fast = try JSONValueDecoder.decode(Sample.self, from: data)
        #expect(fast == (try JSONDecoder().decode(Sample.self, from: data)))
        #expect(fast.inner[1].ratio == 0.5 && fast.missing == nil)
    }

    @Test func decodingErrorsSayWhere() throws {
        let wrongType = #"{"name":"ogre","flags":[true,"no"],"kind":"token","extra":1,"inner":[]}"#
        #expect {
            try JSONValueDecoder.decode(Sample.self, from: Data(wrongType.utf8))
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["flags", "1"]
        }
        let tooBig = #"{"name":"ogre","flags":[],"kind":"token","extra":1,"inner":[{"digest":"sha256:\#(String(repeating: "ab", count: 32))","size":1,"scale":300}]}"#
        #expect {
            try JSONValueDecoder.decode(Sample.self, from: Data(tooBig.utf8))
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["inner", "0", "scale"]
        }
        #expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Sample.self, from: Data(#"{"name":"x"}"#.utf8)) }
    }
}
