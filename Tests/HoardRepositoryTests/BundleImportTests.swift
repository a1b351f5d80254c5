import Foundation
import HoardCore
import HoardRepository
import Testing

/// One bundle of tools/make-hostile.py's corpus (bundles.json): each inner archive's expected outcome.
struct BundleCase: Decodable, CustomTestStringConvertible, Sendable {
    /// "imported", or the acceptable error codes.
    enum Expected: Decodable, Sendable {
        case imported
        case refused([String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let codes = try? container.decode([String].self) { self = .refused(codes) } else { self = .imported }
        }
    }

    var file: String
    var about: String
    var packs: [String: Expected]
    var limits: ImportLimits?

    var testDescription: String { file }

    static func load() -> [BundleCase] { Fixtures.cases(Fixtures.hostileDirectory, "bundles.json") }
}

@Suite("Bundles: archives of packs")
struct BundleImportTests {
    @Test func bundlesAreGenerated() {
        #expect(BundleCase.load().count >= 3)
    }

    @Test(arguments: BundleCase.load())
    func eachInnerArchiveIsItsOwnPackAndAHostileOneRefusesOnlyItself(_ sample: BundleCase) async throws {
        let directory = try Fixtures.hostileDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        var options = Importer.Options()
        options.limits = sample.limits ?? ImportLimits()
        let outcome = try await test.hoard.importArchive(at: directory + "/" + sample.file, options: options)
        guard case .bundle(let members) = outcome else {
            Issue.record("\(sample.file) was not read as a bundle")
            return
        }
        #expect(Set(members.map(\.archive)) == Set(sample.packs.keys), "\(sample.about)")
        var imported: [String] = []
        for member in members {
            switch (sample.packs[member.archive], member.outcome) {
            case (.imported, .success(let report)):
                imported.append(report.pack)
            case (.refused(let codes), .failure(let error)):
                #expect(codes.contains(error.code.rawValue), "\(member.archive): \(error)")
            case (let expected, let outcome):
                Issue.record("\(member.archive): expected \(String(describing: expected)), got \(outcome)")
            }
        }
        #expect(try test.hoard.catalog.packs().map(\.name).sorted() == imported.sorted())
        #expect(Fixtures.files(under: test.path + "/blobs/v1/staging").isEmpty)
    }

    @Test func importingABundleAsOnePackIsRefusedAndChangesNothing() async throws {
        let directory = try Fixtures.hostileDirectory.get()
        let test = try TestHoard()
        defer { test.remove() }
        let before = try test.snapshot()
        let error = await #expect(throws: ImportError.self) {
            try await test.hoard.importPack(at: directory + "/bundle-of-bombs.zip")
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.errors.first?.message.contains("bundle of 5 packs") == true)
        #expect(try test.snapshot() == before)
    }

    @Test func innerPacksAreNamedByTheirFileAndReportedInNameOrder() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let orcs = try Fixtures.zipBytes([("tokens/Orcs.png", Fixtures.png(width: 256, height: 256, seed: 1))])
        let elves = try Fixtures.zipBytes([("tokens/Elves.png", Fixtures.png(width: 256, height: 256, seed: 2))])
        try Fixtures.zip(at: directory + "/store-bundle.zip", [("Orcs.zip", orcs), ("Elves.zip", elves), ("README.txt", Array("hi".utf8))])
        let outcome = try await test.hoard.importArchive(at: directory + "/store-bundle.zip")
        guard case .bundle(let members) = outcome else {
            Issue.record("not a bundle")
            return
        }
        #expect(members.map(\.archive) == ["Elves.zip", "Orcs.zip"])
        #expect(outcome.reports.map(\.pack) == ["Elves", "Orcs"])
        #expect(outcome.reports.map(\.archive) == ["Elves.zip", "Orcs.zip"])
    }

    @Test func anArchiveInsideAPackWithPicturesIsSkipped() async throws {
        let test = try TestHoard()
        defer { test.remove() }
        let inner = try Fixtures.zipBytes([("tokens/inner.png", Fixtures.png(width: 256, height: 256, seed: 3))])
        let report = try await test.importZip([("tokens/goblin.png", Fixtures.png(width: 256, height: 256)), ("extras/inner.zip", inner)])
        #expect(report.assets == 1)
        #expect(report.warnings.contains { $0.code == .ignoredEntry && $0.entry == "extras/inner.zip" })
    }
}
