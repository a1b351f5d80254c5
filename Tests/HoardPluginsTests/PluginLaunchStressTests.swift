import Dispatch
import Foundation
import HoardPlugins
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Starting plugins, many at once")
struct PluginLaunchStressTests {
    private struct Hello: Decodable {
        var `protocol`: Int
        var id: String
    }

    /// A plugin started 1,000 times from eight threads, each start a handshake and a call over its pipes: every one
    /// answers, and no launch crashes the process (Foundation's `Process.run()` once did, under the tests' launches).
    /// The plugin is a shell script, so the launches, not Python's start-up, are what is measured.
    @Test func aPluginStartsAThousandTimesAcrossThreads() throws {
        let fixtures = try PluginFixtures()
        defer { fixtures.remove() }
        let folder = fixtures.directory + "/plugins/sh-hello"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"id": "sh-hello", "version": "1.0.0", "protocol": 1, "hooks": ["naming"], "command": ["sh", "plugin.sh"]}"#
            .write(toFile: folder + "/plugin.json", atomically: true, encoding: .utf8)
        try #"""
            while IFS= read -r line; do
              rest="${line#*\"id\":}"
              id="${rest%%[,\}]*}"
              printf '{"id":%s,"result":{"protocol":1,"id":"sh-hello","version":"1.0.0"}}\n' "$id"
            done
            """#.write(toFile: folder + "/plugin.sh", atomically: true, encoding: .utf8)
        let failures = try launch(folders: [folder], times: 1_000)
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    /// Both example plugins of `Plugins/` started 40 times from eight threads.
    @Test func theExamplePluginsStartAgainAndAgainAcrossThreads() throws {
        let failures = try launch(folders: ["fa-naming", "png-preview"].map { PluginFixtures.root + "/Plugins/" + $0 }, times: 40)
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    /// Starts the plugins in `folders` in turn, `times` in all from eight threads: a channel each, its handshake, one
    /// `hello` call, then a stop. Returns what went wrong.
    private func launch(folders: [String], times: Int) throws -> [String] {
        let manifests = try folders.map { try PluginManifest.load(from: $0) }
        let threads = 8
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for launch in stride(from: thread, to: times, by: threads) {
                let which = launch % manifests.count
                let channel = PluginChannel(manifest: manifests[which], folder: folders[which])
                do {
                    let reply = try channel.call("hello", ["protocol": PluginManifest.protocolVersion], as: Hello.self)
                    if case .answer(let hello?) = reply, hello.id == manifests[which].id {} else {
                        failures.add("launch \(launch): \(manifests[which].id) answered \(reply)")
                    }
                } catch {
                    failures.add("launch \(launch): \(error)")
                }
                channel.stop()
            }
        }
        return failures.all
    }

    /// Programs started and collected from eight threads at once: each gets its own input back, whole.
    @Test func childProcessesRunInParallelKeepTheirOwnStreams() throws {
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for run in 0..<25 {
                let text = "thread \(thread) run \(run) " + String(repeating: "x", count: 100_000)
                do {
                    let outcome = try ChildProcess.run(["cat"], input: Data(text.utf8))
                    if outcome.status != 0 || outcome.outputText != text { failures.add("\(thread)/\(run): \(outcome.status)") }
                } catch {
                    failures.add("\(thread)/\(run): \(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        let failed = try ChildProcess.run(["sh", "-c", "echo oops >&2; exit 3"])
        #expect(failed.status == 3 && failed.errorText == "oops\n")
        #expect(throws: ChildProcess.LaunchError.self) { try ChildProcess.run(["hoard-no-such-program"]) }
    }
}

/// Failures gathered from several threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []

    func add(_ failure: String) { lock.withLock { list.append(failure) } }
    var all: [String] { lock.withLock { list } }
}
