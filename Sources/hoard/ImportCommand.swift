import ArgumentParser
import CHoardSystem
import Foundation
import HoardCatalog
import HoardCore
import HoardRepository

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import art packs (zip, tar, tar.gz, Dungeondraft .dungeondraft_pack, MapTool .rptok) into the data directory.",
        discussion: """
            Each archive is read entry by entry, hashed while written and checked; it is imported whole or not at all. \
            A refused archive changes nothing and its report names every file and rule at fault. \
            A bundle (an archive of zip or Dungeondraft archives, as art stores sell them) imports each inner archive as \
            its own pack, within the bundle's limits, with a report for each; a refused inner archive refuses only itself. \
            A MapTool token file (.rptok), alone or in a pack, is a token named and sized as MapTool shows it.
            A pack is usable (listed, served, in maps) as soon as it is committed; its generated pictures (missing LODs, \
            previews, thumbnails) are rendition jobs, which this command then makes on every core before it returns, \
            unless --later leaves them to `hoard serve` (or `hoard jobs run`). Interrupted, it leaves the rest queued.
            Exit status: 0 when every archive was imported (or was already there), 1 when any was refused.
            """
    )

    @OptionGroup var data: DataOptions

    @Argument(help: ArgumentHelp("Archives to import.", valueName: "ARCHIVE"))
    var archives: [String]

    @Option(help: "The group that owns the packs (created if new).")
    var group: String = "default"

    @Option(help: "Name the pack, instead of pack.json's name or the file name (one archive only).")
    var name: String?

    @Option(
        name: .customLong("limit"),
        help: ArgumentHelp("Change an import limit, e.g. --limit maxEntries=5000 (repeatable; see README for keys).", valueName: "KEY=VALUE"))
    var limits: [String] = []

    @Flag(help: "Print the reports as JSON on standard output.")
    var json = false

    @Flag(help: "Leave the generated pictures (LODs, previews, thumbnails) to `hoard serve` or `hoard jobs run` instead of making them now.")
    var later = false

    func validate() throws {
        if name != nil, archives.count > 1 { throw ValidationError("--name needs exactly one archive") }
    }

    func run() async throws {
        // An import's large arrays (one element per file) are built and dropped phase by phase; with glibc's moving
        // threshold their freed space stayed resident (peak 60 MB on a 2 GB pack, 55 MB with a fixed threshold).
        hoard_fix_mmap_threshold(256 << 10)
        // An import runs up to eight threads of its own (reading, hashing and writing, rewriting, write-out, publishes,
        // the catalog); an arena per thread kept 2 MB more resident on the 300 MB pack than one per core, at the same speed.
        hoard_limit_malloc_arenas(Int32(ProcessInfo.processInfo.activeProcessorCount))
        data.sayWhere()
        let hoard = try await data.open()
        var options = Importer.Options()
        options.group = group
        options.packName = name
        for limit in limits {
            do { try options.limits.set(limit) } catch { throw ValidationError(error.description) }
        }
        var results: [ImportResult] = []
        var failed = false
        for archive in archives {
            let bar = ProgressBar(label: (archive as NSString).lastPathComponent)
            var outcomes: [(inner: String?, Result<ImportReport, ImportError>)]
            do {
                switch try await hoard.importArchive(at: archive, options: options, progress: { bar.update($0) }) {
                case .pack(let report): outcomes = [(nil, .success(report))]
                case .bundle(let members): outcomes = members.map { ($0.archive, $0.outcome) }
                }
            } catch {
                outcomes = [(nil, .failure(error))]
            }
            bar.finish()
            for (inner, outcome) in outcomes {
                results.append(ImportResult(archive: archive, inner: inner, outcome))
                switch outcome {
                case .success(let report):
                    if !json { Terminal.out(ReportText.imported(report)) }
                case .failure(let error):
                    failed = true
                    if !json { Terminal.err(ReportText.refused(error)) }
                }
            }
        }
        let manifests = results.compactMap { $0.report.flatMap { $0.renditionJobs > 0 ? $0.manifestDigest : nil } }
        if !manifests.isEmpty {
            if later {
                if !json { Terminal.out("Generated pictures are queued: `hoard serve` makes them (see `hoard jobs`).") }
            } else {
                try await makeRenditions(hoard, manifests: manifests)
            }
        }
        if json { try Terminal.out(JSONOutput.encode(results)) }
        if failed { throw ExitCode(1) }
    }
}

extension ImportCommand {
    /// Makes the imported packs' queued pictures on every core, with a progress bar; says what failed and what is left.
    func makeRenditions(_ hoard: Hoard, manifests: [Digest]) async throws {
        let total = Int64(try hoard.catalog.packs().filter { pack in pack.manifestDigest.map(manifests.contains) == true }
            .reduce(0) { $0 + ($1.renditions?.pending ?? 0) })
        let bar = ProgressBar(label: "pictures")
        let started = Date()
        let run = await hoard.makeRenditions(scope: .manifests(manifests)) { run in
            bar.update(done: Int64(run.done + run.failed), total: max(total, Int64(run.done + run.failed)), unit: .count)
        }
        bar.finish()
        guard !json else { return }
        Terminal.out("Made the generated pictures of \(run.done) asset\(run.done == 1 ? "" : "s") in "
            + String(format: "%.2f s", Date().timeIntervalSince(started)))
        if run.failed > 0 {
            Terminal.out("  \(run.failed) could not be made (`hoard jobs --pack NAME` lists them):")
            for line in ReportText.grouped(run.problems).prefix(20) { Terminal.out("    \(line)") }
        }
        if run.retried > 0 { Terminal.out("  \(run.retried) left queued after a failure, retried by `hoard serve` or `hoard jobs run`") }
    }
}
