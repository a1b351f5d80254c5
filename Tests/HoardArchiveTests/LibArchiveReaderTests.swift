import Foundation
import HoardPlugins
import HoardCore
import Testing
@testable import HoardArchive

@Suite("Reading archives through libarchive")
struct LibArchiveReaderTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every regular entry's path and byte count.
    static func contents(_ path: String) throws -> [String: Int] {
        let reader = try LibArchiveReader(path: path, limits: ImportLimits())
        var found: [String: Int] = [:]
        while let entry = try reader.nextEntry() {
            var size = 0
            while let block = try reader.readBlock() { size += block.count }
            if !entry.path.isDirectory { found[entry.path.description] = size }
        }
        return found
    }

    @Test func readsEveryEntryOfTheSamplePackWithItsSize() throws {
        let pack = Self.root.appendingPathComponent("Packs/dungeon-basics.zip").path
        let found = try Self.contents(pack)
        #expect(found["pack.json"] != nil)
        #expect(found["tokens/ogre_2x2.png"].map { $0 > 100 } == true)
        #expect(found.count >= 20)
    }

    @Test func readsATarGzMadeByTarWithTheSameBytes() throws {
        let directory = NSTemporaryDirectory() + "hoard-tar-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/src/tokens", withIntermediateDirectories: true)
        let bytes = Data((0..<5000).map { UInt8($0 % 251) })
        try bytes.write(to: URL(fileURLWithPath: directory + "/src/tokens/goblin.png"))
        let tar = try ChildProcess.run(["tar", "-czf", directory + "/pack.tar.gz", "-C", directory + "/src", "tokens"])
        try #require(tar.status == 0, "\(tar.errorText)")
        #expect(try Self.contents(directory + "/pack.tar.gz") == ["tokens/goblin.png": 5000])
    }

    @Test func namesWhatAFileIsWhenItIsNotAnArchive() throws {
        let path = NSTemporaryDirectory() + "hoard-not-an-archive-" + UUID().uuidString + ".zip"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C, 0, 4]).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: ArchiveError.self) { _ = try LibArchiveReader(path: path, limits: ImportLimits()) }
        #expect(error?.problem.code == .unsupportedFormat)
        #expect(error?.problem.message.contains("7-Zip") == true)
    }

    @Test func aMissingFileIsUnreadableInput() {
        let error = #expect(throws: ArchiveError.self) { _ = try LibArchiveReader(path: "/nonexistent/x.zip", limits: ImportLimits()) }
        #expect(error?.problem.code == .unreadableInput)
    }
}
