import Foundation
import HoardCore
import Testing

/// One file of tools/make-audio.py's corpus: what ffprobe says of a good file, or the codes a hostile one is refused with.
struct AudioCase: Decodable, CustomTestStringConvertible, Sendable {
    var file: String
    var mediaType: String?
    var codec: String?
    var channels: Int?
    var sampleRate: Int?
    var durationMs: Double?
    var codes: [String]?
    var about: String?

    var testDescription: String { file }

    static func load(_ name: String) -> [AudioCase] { Fixtures.cases(Fixtures.audioDirectory, name) }

    /// The file's bytes.
    func bytes() throws -> [UInt8] {
        let directory = try Fixtures.audioDirectory.get()
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + file)))
    }
}

@Suite("Audio headers against ffprobe")
struct AudioCorpusTests {
    @Test func corpusIsGenerated() throws {
        let directory = try Fixtures.audioDirectory.get()
        #expect(AudioCase.load("corpus.json").count >= 15, "\(directory)")
        #expect(AudioCase.load("hostile.json").count >= 20)
    }

    @Test(arguments: AudioCase.load("corpus.json"))
    func headerAgreesWithFFprobe(_ sample: AudioCase) throws {
        let info = try AudioHeader.read(try sample.bytes())
        #expect(info.mediaType.rawValue == sample.mediaType)
        #expect(info.codec == sample.codec)
        #expect(info.channels == sample.channels)
        #expect(info.sampleRate == sample.sampleRate)
        let probed = try #require(sample.durationMs)
        #expect(abs(Double(info.durationMs) - probed) <= 10, "read \(info.durationMs) ms, ffprobe says \(probed) ms")
    }

    @Test(arguments: AudioCase.load("hostile.json"))
    func hostileFileIsRefused(_ sample: AudioCase) throws {
        let bytes = try sample.bytes()
        let error = #expect(throws: AudioHeaderError.self, "\(sample.about ?? "")") { try AudioHeader.read(bytes) }
        #expect(sample.codes?.contains(error?.code.rawValue ?? "") == true, "\(error?.message ?? "accepted")")
        #expect(error?.message.isEmpty == false)
    }

    @Test func everyTruncationOfEveryFileIsReadOrRefusedWithoutACrash() throws {
        for sample in AudioCase.load("corpus.json") {
            let bytes = try sample.bytes()
            for length in stride(from: 0, to: min(bytes.count, 4096), by: 7) + [bytes.count - 1, bytes.count / 2] {
                if let info = try? AudioHeader.read(Array(bytes[0..<length])) {
                    #expect(info.durationMs > 0 && info.channels > 0 && info.sampleRate > 0, "\(sample.file) cut at \(length)")
                }
            }
        }
    }

    @Test func theFuzzersSeedsAreReadAndItsKeptCrashesRefused() throws {
        func files(_ folder: String) throws -> [URL] {
            let url = Fixtures.root.appendingPathComponent(folder)
            return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil).sorted { $0.path < $1.path }
        }
        let seeds = try files("Fuzz/corpus/audio-header")
        #expect(seeds.count >= 8)
        for seed in seeds {
            #expect(throws: Never.self, "\(seed.lastPathComponent)") { try AudioHeader.read([UInt8](try Data(contentsOf: seed))) }
        }
        for crash in try files("Fuzz/regressions/audio-header") {
            #expect(throws: AudioHeaderError.self, "\(crash.lastPathComponent)") { try AudioHeader.read([UInt8](try Data(contentsOf: crash))) }
        }
    }
}
