import Foundation
import HoardCatalog
import Synchronization
import Testing

/// Imports that reach the catalog at the same moment (several server replicas on one PostgreSQL, or threads of one
/// server): each is one transaction, and none fails for the others.
@Test(arguments: CatalogBackendKind.allCases)
func importsOfOneNewPackAtOnceEachRecordAndTheSameVersionOnlyOnce(_ kind: CatalogBackendKind) throws {
    let catalog = try kind.makeCatalog()
    // Six versions of one pack of a group that does not exist yet: the group and the pack are made once.
    let versions = (1...6).map { n in
        CommitFixture(group: "newcomers", pack: "crypt", version: "\(n)", assets: goblinAssets(labelPrefix: "crypt\(n % 2)")).commit
    }
    #expect(Set(try outcomes(of: versions, on: catalog)) == ["recorded"])
    #expect(try catalog.packState(named: "crypt")?.versions.sorted() == (1...6).map { "\($0)" })
    // One version of a new pack of that group four times at once: one records it, the others find it recorded.
    let same = CommitFixture(group: "newcomers", pack: "tomb", assets: goblinAssets()).commit
    #expect(try outcomes(of: Array(repeating: same, count: 4), on: catalog).sorted()
        == ["alreadyRecorded", "alreadyRecorded", "alreadyRecorded", "recorded"])
}

/// Records each commit on a thread of its own, all let go at once, and gives each outcome (or error) as text.
private func outcomes(of commits: [ImportCommit], on catalog: Catalog) throws -> [String] {
    let outcomes = Mutex<[String]>([])
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for commit in commits {
        done.enter()
        Thread {
            start.wait()
            let outcome: String
            do {
                outcome = "\(try catalog.record(commit))"
            } catch {
                outcome = "\(error)"
            }
            outcomes.withLock { $0.append(outcome) }
            done.leave()
        }.start()
    }
    for _ in commits { start.signal() }
    done.wait()
    return outcomes.withLock { $0 }
}
