import Foundation
import HoardCore
import Testing
@testable import HoardArchive

/// Every input the entry-gate fuzzer (Fuzz/Targets/EntryGateTarget.swift) once crashed on, and its seed corpus,
/// replayed the way the target reads them: entry headers between NUL bytes, the last byte of each choosing
/// folder or file and a declared size. Admitted paths must stay safe to use as keys.
@Suite("Entry gate: fuzzer regressions")
struct EntryGateFuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func inputs() throws -> [URL] {
        try ["Fuzz/regressions/entry-gate", "Fuzz/corpus/entry-gate"].flatMap { folder in
            try FileManager.default.contentsOfDirectory(
                at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
        }
    }

    @Test func everyKeptInputIsRefusedOrAdmittedWithASafePath() throws {
        let inputs = try Self.inputs()
        #expect(inputs.count >= 5)
        for url in inputs {
            var limits = ImportLimits()
            limits.maxEntries = 64
            let bytes = try Array(Data(contentsOf: url))
            var gate = EntryGate(limits: limits, archiveSize: Int64(bytes.count) + 1)
            for field in bytes.split(separator: 0, maxSplits: 63, omittingEmptySubsequences: false) {
                let flags = field.last ?? 0
                let declared: Int64? = flags & 1 == 0 ? nil : Int64(flags) << (Int(flags) % 40)
                guard let entry = try? gate.admit(rawName: Array(field.dropLast()), declaredSize: declared, isDirectory: flags & 2 != 0)
                else { break }
                #expect(entry.path.components.allSatisfy { !$0.isEmpty && $0 != ".." && !$0.contains("/") }, "\(url.lastPathComponent)")
                guard (try? gate.count(Int(flags) * 1000)) != nil, (try? gate.finishEntry()) != nil else { break }
            }
        }
    }
}
