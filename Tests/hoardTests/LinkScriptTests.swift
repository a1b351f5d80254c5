import Foundation
import HoardPlugins
import Testing

/// `scripts/link-hoard.sh`, which `scripts/run.sh` runs: `hoard` on PATH through a link in ~/.local/bin.
@Suite struct LinkScriptTests {
    static let script = CLI.root.appendingPathComponent("scripts/link-hoard.sh").path

    @Test func theBinaryIsLinkedInLocalBinAndThePathAdviceIsGivenWhenItIsMissing() throws {
        let home = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let linked = try ChildProcess.run(["/bin/bash", Self.script, CLI.binary], environment: ["HOME": home, "PATH": "/usr/bin:/bin"])
        #expect(linked.status == 0, "\(linked.errorText)")
        let link = home + "/.local/bin/hoard"
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == CLI.binary)
        #expect(linked.errorText.contains("hoard is linked at \(home)/.local/bin/hoard"), "\(linked.errorText)")
        #expect(linked.errorText.contains("export PATH=\"\(home)/.local/bin:$PATH\""), "\(linked.errorText)")
        let version = try ChildProcess.run([link, "--version"])
        #expect(version.status == 0 && version.outputText.contains("0."), "the link runs hoard: \(version.outputText)")

        // On PATH already: no advice; run again, the link is replaced, not doubled.
        let again = try ChildProcess.run(
            ["/bin/bash", Self.script, CLI.binary], environment: ["HOME": home, "PATH": "\(home)/.local/bin:/usr/bin:/bin"])
        #expect(again.status == 0 && !again.errorText.contains("export PATH"), "\(again.errorText)")
    }

    @Test func aFileThatIsNotALinkIsLeftAloneAndTheCommandIsPrinted() throws {
        let home = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        try FileManager.default.createDirectory(atPath: home + "/.local/bin", withIntermediateDirectories: true)
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: home + "/.local/bin/hoard"))
        let refused = try ChildProcess.run(["/bin/bash", Self.script, CLI.binary], environment: ["HOME": home, "PATH": "/usr/bin:/bin"])
        #expect(refused.status == 0 && refused.errorText.contains("ln -s \"\(CLI.binary)\""), "\(refused.errorText)")
        #expect(try String(contentsOfFile: home + "/.local/bin/hoard", encoding: .utf8) == "someone else's")
    }
}
