import Testing

@testable import HoardDiscovery

/// The TXT record of `_hoard._tcp`: what a server writes and a browser reads.
@Suite struct ServerRecordTests {
    @Test func aRecordReadsBackFromItsTXTBytes() throws {
        let record = ServerRecord(instance: "0123456789abcdef", isTLS: true, name: "Hoard on nas")
        let bytes = record.txtRecord
        #expect(bytes.first == UInt8("api=1".utf8.count))
        #expect(ServerRecord(txt: bytes) == record)
        let plain = ServerRecord(instance: "fedcba9876543210", isTLS: false, name: "")
        #expect(ServerRecord(txt: plain.txtRecord)?.isTLS == false)
    }

    @Test func unknownKeysAndCaseAreIgnoredAndTheFirstValueWins() {
        let entries = ["API=1", "extra=yes", "id=abc", "id=other", "flag", "tls=1", "name=x=y"]
        let bytes = entries.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        let record = ServerRecord(txt: bytes)
        #expect(record == ServerRecord(apiVersion: 1, instance: "abc", isTLS: true, name: "x=y"))
        #expect(ServerRecord.pairs(txt: bytes)?["flag"] == "")
    }

    @Test func aRecordThatIsNotHoardsOrIsCutShortIsRefused() {
        let other = Array("\u{7}path=/x".utf8)
        #expect(ServerRecord(txt: other) == nil)
        #expect(ServerRecord.pairs(txt: [9] + Array("api=1".utf8)) == nil)
        #expect(ServerRecord(txt: []) == nil)
    }

    @Test func aLongNameIsCutToOneTXTString() {
        let record = ServerRecord(instance: "0123456789abcdef", isTLS: false, name: String(repeating: "é", count: 300))
        let pairs = ServerRecord.pairs(txt: record.txtRecord)
        #expect(pairs?["id"] == "0123456789abcdef")
        #expect((pairs?["name"]?.utf8.count ?? 0) <= 250)
    }
}
