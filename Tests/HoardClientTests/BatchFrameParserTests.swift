import Foundation
import HoardCore
import Testing

@testable import HoardClient

@Suite struct BatchFrameParserTests {
    /// Three blobs (one empty, one full of newlines), one unavailable, one too large, framed as the server does.
    static func sample() -> (stream: Data, records: [BatchFrameParser.Record]) {
        let blobs = [Data(), Data(repeating: UInt8(ascii: "\n"), count: 37), randomData(1000)]
        let unavailable = digest(of: Data("absent".utf8))
        let large = digest(of: Data("large".utf8))
        var stream = Data()
        var records: [BatchFrameParser.Record] = []
        for (index, blob) in blobs.enumerated() {
            let name = digest(of: blob)
            stream += Data("\(name) \(blob.count)\n".utf8) + blob + Data("\n".utf8)
            records.append(.blob(name, blob))
            if index == 0 {
                stream += Data("\(unavailable) -\n".utf8)
                records.append(.unavailable(unavailable))
            }
        }
        stream += Data("\(large) >\n".utf8)
        records.append(.tooLarge(large))
        return (stream, records)
    }

    @Test func recordsAreTheSameWhereverTheChunksSplit() throws {
        let (stream, expected) = Self.sample()
        for split in 0...stream.count {
            var parser = BatchFrameParser()
            var records = try parser.feed(stream.prefix(split))
            records += try parser.feed(stream.dropFirst(split))
            try parser.finish()
            #expect(records == expected, "split at \(split)")
        }
    }

    @Test func recordsAreTheSameWhenFedOneByteAtATime() throws {
        let (stream, expected) = Self.sample()
        var parser = BatchFrameParser()
        var records: [BatchFrameParser.Record] = []
        for byte in stream { records += try parser.feed([byte]) }
        try parser.finish()
        #expect(records == expected)
    }

    @Test func aStreamCutInsideARecordThrowsAtTheEnd() throws {
        let (stream, _) = Self.sample()
        let blob = randomData(10)
        let header = Data("\(digest(of: blob)) 10\n".utf8)
        for cut in [stream + header, stream + header + blob.prefix(4), stream + header + blob, stream + header.prefix(20)] {
            var parser = BatchFrameParser()
            _ = try parser.feed(cut)
            #expect(throws: HoardClientError.self) { try parser.finish() }
            do {
                try parser.finish()
            } catch let error as HoardClientError {
                #expect(error.code == .network)
            }
        }
    }

    @Test func aStreamEndingBetweenRecordsIsComplete() throws {
        var parser = BatchFrameParser()
        _ = try parser.feed(Data())
        try parser.finish()
    }

    @Test(arguments: [
        "sha256:ABC -\n",
        "sha256:\(String(repeating: "A", count: 64)) 3\nabc\n",
        "sha256:\(String(repeating: "a", count: 64)) -3\nabc\n",
        "sha256:\(String(repeating: "a", count: 64)) +3\nabc\n",
        "sha256:\(String(repeating: "a", count: 64)) 3\nabcX",
        "sha256:\(String(repeating: "a", count: 64))  3\nabc\n",
        "sha256:\(String(repeating: "a", count: 64)) 99999999999999999999999\n",
        "md5:\(String(repeating: "a", count: 64)) 3\nabc\n",
        String(repeating: "x", count: 200),
    ])
    func malformedFramingIsRefused(_ text: String) throws {
        var parser = BatchFrameParser()
        #expect(throws: HoardClientError.self) { _ = try parser.feed(Data(text.utf8)) }
    }

    @Test func aRecordLargerThanTheLimitIsRefusedBeforeItsBytesArrive() throws {
        var parser = BatchFrameParser(maxBlobSize: 100)
        let header = "sha256:\(String(repeating: "a", count: 64)) 101\n"
        #expect(throws: HoardClientError.self) { _ = try parser.feed(Data(header.utf8)) }
    }
}
