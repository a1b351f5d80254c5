import Foundation
import HoardCore
import Testing

@testable import HoardArchive

/// The packs' folder, for the clean-up at exit (a C function pointer cannot capture it).
nonisolated(unsafe) private var packsFolder: String?

/// The packs tools/make-pck.py writes, generated once per test run, removed when the process exits.
private let packs: Result<String, ProblemMessage> = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let directory = NSTemporaryDirectory() + "hoard-pck-" + UUID().uuidString.lowercased()
    packsFolder = directory
    atexit { packsFolder.map { _ = try? FileManager.default.removeItem(atPath: $0) } }
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let process = try Process.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", root.path + "/tools/make-pck.py", directory])
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return .failure(ProblemMessage("tools/make-pck.py failed")) }
        return .success(directory)
    } catch {
        return .failure(ProblemMessage("\(error)"))
    }
}()

private func pack(_ name: String) throws -> String { try packs.get() + "/\(name).dungeondraft_pack" }

/// Reads every entry; returns path → bytes.
private func contents(_ name: String) throws -> [String: [UInt8]] {
    let reader = try ArchiveFormats.open(path: try pack(name), limits: ImportLimits())
    var found: [String: [UInt8]] = [:]
    while let entry = try reader.nextEntry() {
        var bytes: [UInt8] = []
        while let block = try reader.readBlock() { bytes += block }
        found[entry.path.description] = bytes
    }
    return found
}

/// The code reading the pack throws, or nil when it reads.
private func failure(_ name: String) throws -> ProblemCode? {
    do {
        _ = try contents(name)
        return nil
    } catch let error as ArchiveError {
        return error.problem.code
    }
}

@Suite("Reading Dungeondraft packs (Godot PCK)")
struct PCKReaderTests {
    @Test func aPackIsReadWithItsTexturesAtTheTopLevel() throws {
        let found = try contents("good")
        #expect(Set(found.keys) == ["packs/x1y2.json", "objects/crate_1x1.png", "walls/stone.png"])
        #expect(found["objects/crate_1x1.png"]?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true)
        #expect(try ArchiveFormats.open(path: try pack("good"), limits: ImportLimits()) is PCKReader)
    }

    /// Overlapping entries, an entry past the end of the file or inside the table, bytes that do not match their MD5,
    /// a path out of the pack (the same gate as zip), another PCK version.
    @Test(arguments: [
        ("overlap", ProblemCode.corruptArchive), ("outside", .corruptArchive), ("in-table", .corruptArchive),
        ("bad-md5", .corruptArchive), ("traversal", .unsafePath), ("version2", .unsupportedFormat),
    ])
    func aHostilePackIsRefused(name: String, code: ProblemCode) throws {
        #expect(try failure(name) == code)
    }

    @Test func theGateBudgetsApply() throws {
        var limits = ImportLimits()
        limits.maxEntries = 2
        #expect(throws: ArchiveError.self) { _ = try PCKReader(path: try pack("good"), limits: limits) }
    }
}
