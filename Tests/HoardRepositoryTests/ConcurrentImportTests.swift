import Foundation
import HoardPlugins
import HoardCore
import HoardRepository
import Testing

/// Imports that overlap: the same archive twice (idempotent), changed content without a version (each gets its
/// own version instead of a conflict), and a catalog another process keeps busy (the import waits).
@Suite("Concurrent imports")
struct ConcurrentImportTests {
    /// A one-token pack named `race` without a version; `seed` makes its picture unique.
    static func archive(seed: Int, in directory: String) throws -> String {
        let path = directory + "/race-\(seed).zip"
        try Fixtures.zip(at: path, [
            ("pack.json", Array(#"{"name":"race"}"#.utf8)), ("tokens/a.png", Fixtures.png(width: 256, height: 256, seed: seed)),
        ])
        return path
    }

    @Test func concurrentImportsOfTheSameArchiveStoreItOnce() async throws {
        let test = try TestHoard()
        defer { try? FileManager.default.removeItem(atPath: test.path) }
        let archive = try Self.archive(seed: 1, in: test.path)
        // Two Hoards on one data directory, like the CLI next to a server: separate catalog connections.
        let other = try Hoard(dataDirectory: test.path)
        let reports = try await withThrowingTaskGroup(of: ImportReport.self) { group in
            for hoard in [test.hoard, other, test.hoard, other] {
                group.addTask { try await hoard.importPack(at: archive) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reports.filter { $0.outcome == .imported }.count == 1)
        #expect(Set(reports.map(\.version)) == ["1"])
        #expect(Set(reports.map(\.manifestDigest)).count == 1)
        #expect(try test.hoard.catalog.packs().map(\.name) == ["race"])
        #expect(try await test.hoard.verify().isHealthy)
    }

    @Test func concurrentImportsOfChangedContentWithoutAVersionEachGetTheirOwnVersion() async throws {
        let test = try TestHoard()
        defer { try? FileManager.default.removeItem(atPath: test.path) }
        _ = try await test.hoard.importPack(at: try Self.archive(seed: 0, in: test.path))
        let archives = try (1...4).map { try Self.archive(seed: $0, in: test.path) }
        let other = try Hoard(dataDirectory: test.path)
        let reports = try await withThrowingTaskGroup(of: ImportReport.self) { group in
            for (n, archive) in archives.enumerated() {
                let hoard = n.isMultiple(of: 2) ? test.hoard : other
                group.addTask { try await hoard.importPack(at: archive) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reports.allSatisfy { $0.outcome == .imported })
        #expect(Set(reports.map(\.version)) == ["2", "3", "4", "5"])
        #expect(try await test.hoard.verify().isHealthy)
    }

    @Test func anImportWaitsForACatalogAnotherProcessKeepsBusy() async throws {
        let test = try TestHoard()
        defer { try? FileManager.default.removeItem(atPath: test.path) }
        let archive = try Self.archive(seed: 7, in: test.path)
        let holder = try CatalogHolder(catalog: test.hoard.directory.catalogPath, seconds: 1.5)
        let started = ContinuousClock.now
        let report = try await test.hoard.importPack(at: archive)
        #expect(report.outcome == .imported)
        #expect(ContinuousClock.now - started > .milliseconds(500))
        holder.wait()
        #expect(try await test.hoard.verify().isHealthy)
    }
}

/// Another process holding the catalog's write lock (`BEGIN EXCLUSIVE`) for a while: SQLite answers "busy" to
/// every other writer until it lets go.
struct CatalogHolder {
    let process: ChildProcess

    /// Starts the holder and returns once it holds the lock.
    init(catalog: String, seconds: Double) throws {
        let script = """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            time.sleep(float(sys.argv[2]))
            db.execute("ROLLBACK")
            """
        process = try ChildProcess.start(["python3", "-c", script, catalog, String(seconds)], output: .pipe)
        let line = String(decoding: process.output?.availableData ?? Data(), as: UTF8.self)
        guard line.hasPrefix("locked") else { throw ProblemMessage("the catalog holder did not take the lock: \(line)") }
    }

    func wait() { process.wait() }
}
