import Foundation
import HoardPlugins
import HoardCatalog
import HoardRepository
import HoardStore
import HoardTestSupport
@testable import HoardCore

/// Generated corpora's folders, for the clean-up at exit (a C function pointer cannot capture them).
nonisolated(unsafe) private var generatedCorpora: [String] = []
private let generatedCorporaLock = NSLock()

/// Paths and builders shared by the import tests.
enum Fixtures {
    /// The repository root, found from this file's path.
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A sample pack shipped in Packs/.
    static func pack(_ name: String) -> String { root.appendingPathComponent("Packs/\(name)").path }

    /// A fresh empty folder, removed by the caller.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "hoard-test-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs a command and returns its standard output; throws when it exits non-zero.
    @discardableResult
    static func run(_ arguments: [String], input: Data? = nil) throws -> String {
        let outcome = try ChildProcess.run(arguments, input: input)
        guard outcome.status == 0 else { throw ProblemMessage("\(arguments.joined(separator: " ")) failed: \(outcome.errorText)") }
        return outcome.outputText
    }

    /// The hostile corpus, generated once per test run by tools/make-hostile.py, removed when the process exits.
    static let hostileDirectory = corpus("make-hostile.py")

    /// The audio corpus (every format, hostile files, two packs), generated once per test run by tools/make-audio.py
    /// with ffmpeg.
    static let audioDirectory = corpus("make-audio.py")

    /// The corpus of real-world layouts, generated once per test run by tools/make-layouts.py.
    static let layoutsDirectory = corpus("make-layouts.py")

    /// The cases `index` (a JSON array in a generated corpus) lists; none when the corpus could not be generated.
    static func cases<Case: Decodable>(_ corpus: Result<String, ProblemMessage>, _ index: String) -> [Case] {
        guard case .success(let directory) = corpus, let data = FileManager.default.contents(atPath: directory + "/" + index),
              let cases = try? JSONDecoder().decode([Case].self, from: data)
        else { return [] }
        return cases
    }

    /// The bytes of a zip of `entries` (``zip(at:_:stored:)``).
    static func zipBytes(_ entries: [(String, [UInt8])]) throws -> [UInt8] {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try zip(at: directory + "/x.zip", entries)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/x.zip")))
    }

    /// A folder `script` (in tools/) writes its corpus into, removed when the process exits.
    private static func corpus(_ script: String) -> Result<String, ProblemMessage> {
        do {
            let directory = try temporaryDirectory()
            generatedCorporaLock.withLock {
                if generatedCorpora.isEmpty {
                    atexit { for folder in generatedCorpora { _ = try? FileManager.default.removeItem(atPath: folder) } }
                }
                generatedCorpora.append(directory)
            }
            try run(["python3", root.appendingPathComponent("tools/\(script)").path, directory])
            return .success(directory)
        } catch {
            return .failure(ProblemMessage("\(error)"))
        }
    }

    /// A minimal PNG: signature, IHDR with this size, an IDAT whose bytes make the content unique, IEND.
    static func png(width: Int, height: Int, seed: Int = 0) -> [UInt8] { PNGBytes.minimal(width: width, height: height, seed: seed) }

    /// Writes a zip with Python's zipfile (deflated unless `stored`), entries in the order given.
    static func zip(at path: String, _ entries: [(String, [UInt8])], stored: Bool = false) throws {
        let spec = entries.map { ["name": $0.0, "data": Data($0.1).base64EncodedString()] }
        let script = """
            import base64, json, sys, zipfile
            entries = json.load(sys.stdin)
            method = zipfile.ZIP_STORED if \(stored ? "True" : "False") else zipfile.ZIP_DEFLATED
            with zipfile.ZipFile(sys.argv[1], "w", method) as z:
                for e in entries:
                    info = zipfile.ZipInfo(e["name"], (2024, 1, 1, 0, 0, 0))
                    info.compress_type = method
                    z.writestr(info, base64.b64decode(e["data"]))
            """
        try run(["python3", "-c", script, path], input: try JSONSerialization.data(withJSONObject: spec))
    }

    /// Every file under a folder (relative paths), for "nothing changed" checks.
    static func files(under path: String) -> Set<String> {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return [] }
        var files = Set<String>()
        while let next = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + next, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.insert(next)
            }
        }
        return files
    }
}

/// A Hoard in a fresh temporary data directory.
struct TestHoard {
    let path: String
    let hoard: Hoard

    init(registry: PluginRegistry = .builtIn()) throws {
        path = try Fixtures.temporaryDirectory()
        hoard = try Hoard(dataDirectory: path, registry: registry)
    }

    /// What a refused import must leave untouched: blob files (staging included), and catalog rows.
    func snapshot() throws -> Snapshot {
        Snapshot(files: Fixtures.files(under: path + "/blobs"), packs: try hoard.catalog.packs(), blobs: Set(try hoard.catalog.blobs().map(\.digest)))
    }

    struct Snapshot: Equatable {
        var files: Set<String>
        var packs: [PackSummary]
        var blobs: Set<Digest>
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Imports a zip of `entries`, written as `name` in a temporary folder, as one pack.
    func importZip(_ entries: [(String, [UInt8])], named name: String = "pack.zip") async throws -> ImportReport {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Fixtures.zip(at: directory + "/" + name, entries)
        return try await hoard.importPack(at: directory + "/" + name)
    }
}
