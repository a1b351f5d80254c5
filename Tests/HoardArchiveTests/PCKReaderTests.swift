import Foundation
import HoardCore
import Testing

@testable import HoardArchive

/// The packs Scripts/make-pck.py writes, generated once per test run.
private let packs: Result<String, ProblemMessage> = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let directory = NSTemporaryDirectory() + "hoard-pck-" + UUID().uuidString.lowercased()
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let process = try Process.run(URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", root.path + "/Scripts/make-pck.py", directory])
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return .failure(ProblemMessage("Scripts/make-pck.py failed")) }
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

    @Test func overlappingEntriesAreRefused() throws {
        #expect(try failure("overlap") == .corruptArchive)
    }

    @Test func anEntryPastTheEndOfTheFileIsRefused() throws {
        #expect(try failure("outside") == .corruptArchive)
    }

    @Test func anEntryInsideTheTableIsRefused() throws {
        #expect(try failure("in-table") == .corruptArchive)
    }

    @Test func bytesThatDoNotMatchTheirMD5AreRefused() throws {
        #expect(try failure("bad-md5") == .corruptArchive)
    }

    @Test func aPathOutOfThePackIsRefusedByTheSameGateAsZip() throws {
        #expect(try failure("traversal") == .unsafePath)
    }

    @Test func otherPCKVersionsAreRefusedByName() throws {
        #expect(try failure("version2") == .unsupportedFormat)
    }

    @Test func theGateBudgetsApply() throws {
        var limits = ImportLimits()
        limits.maxEntries = 2
        #expect(throws: ArchiveError.self) { _ = try PCKReader(path: try pack("good"), limits: limits) }
    }
}
