import Foundation
import HTTPTypes
import HoardCore
import HoardRepository
import HummingbirdTesting
import Testing

/// Audio blobs stream as players' apps ask for them: Safari's `bytes=0-1` probe, open and suffix ranges, `If-Range`,
/// each with 206, the sound's media type and the strong ETag, through the router and the fast path alike.
@Suite("Audio streaming")
struct AudioStreamingTests {
    /// tools/make-audio.py's corpus, generated once per test run.
    static let corpus: Result<String, any Error> = Result {
        let directory = NSTemporaryDirectory() + "hoard-server-audio-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Python.run([Fixture.root.appendingPathComponent("tools/make-audio.py").path, directory])
        return directory
    }

    /// Imports the audio pack into red; returns its sounds' variants by media type.
    static func importSounds(_ fixture: Fixture) async throws -> [String: AssetDescriptor.Variant] {
        var options = Importer.Options()
        options.group = "red"
        _ = try await fixture.hoard.importPack(at: try corpus.get() + "/audio-pack.zip", options: options)
        let sounds = try fixture.hoard.catalog.assets(kind: .audio).compactMap(\.variants.first)
        return Dictionary(sounds.map { ($0.mediaType.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
    }

    @Test(arguments: [TestingSetup.router, .live])
    func everySoundAnswersRangesWith206ItsTypeAndAStrongETag(_ setup: TestingSetup) async throws {
        try await Fixture.with(packs: false) { fixture in
            let sounds = try await Self.importSounds(fixture)
            #expect(Set(sounds.keys) == ["audio/ogg", "audio/mpeg", "audio/flac", "audio/wav", "audio/mp4", "audio/webm"])
            try await fixture.run(setup) { client in
                for (type, sound) in sounds {
                    let size = Int(sound.size)
                    let whole = try #require(try await fixture.hoard.store.read(sound.digest, range: nil))
                    let cases: [(String, ClosedRange<Int>)] = [
                        ("bytes=0-1", 0...1), ("bytes=0-", 0...(size - 1)), ("bytes=1000-", 1000...(size - 1)), ("bytes=-500", (size - 500)...(size - 1)),
                        ("bytes=100-199", 100...199),
                    ]
                    for (header, range) in cases {
                        try await client.execute(uri: "/v1/blobs/\(sound.digest)", method: .get, headers: auth(fixture.red, [.range: header])) { response in
                            #expect(response.status == .partialContent, "\(type) \(header)")
                            #expect(response.headers[.contentType] == type)
                            #expect(response.headers[.eTag] == "\"\(sound.digest)\"", "a strong ETag, the digest")
                            #expect(response.headers[.acceptRanges] == "bytes")
                            #expect(response.headers[.contentRange] == "bytes \(range.lowerBound)-\(range.upperBound)/\(size)", "\(type) \(header)")
                            #expect(response.bytes == Array(whole[range]), "\(type) \(header)")
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: [TestingSetup.router, .live])
    func ifRangeServesThePartOnlyForTheSoundsOwnETag(_ setup: TestingSetup) async throws {
        try await Fixture.with(packs: false) { fixture in
            let sound = try #require(try await Self.importSounds(fixture)["audio/ogg"])
            let whole = try #require(try await fixture.hoard.store.read(sound.digest, range: nil))
            try await fixture.run(setup) { client in
                let current = [HTTPField.Name.range: "bytes=10-", .ifRange: "\"\(sound.digest)\""]
                try await client.execute(uri: "/v1/blobs/\(sound.digest)", method: .get, headers: auth(fixture.red, HTTPFields(current))) { response in
                    #expect(response.status == .partialContent)
                    #expect(response.bytes == Array(whole[10...]))
                }
                let stale = [HTTPField.Name.range: "bytes=10-", .ifRange: "\"sha256:\(String(repeating: "0", count: 64))\""]
                try await client.execute(uri: "/v1/blobs/\(sound.digest)", method: .get, headers: auth(fixture.red, HTTPFields(stale))) { response in
                    #expect(response.status == .ok, "a stale If-Range gets the whole sound")
                    #expect(response.headers[.contentType] == "audio/ogg")
                    #expect(response.bytes == whole)
                }
            }
        }
    }
}

extension HTTPFields {
    /// Fields from a dictionary literal of names and values.
    init(_ fields: [HTTPField.Name: String]) {
        self.init()
        for (name, value) in fields { self[name] = value }
    }
}
