import ArgumentParser
import Foundation
import HoardCatalog
import HoardCore
import HoardRepository

/// `hoard jobs`: the rendition queue (the generated LODs, previews and thumbnails imports leave to be made).
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "Show, cancel, retry or run the rendition jobs: the generated pictures (LODs, previews, thumbnails) imports queue.",
        discussion: """
            An import commits its pack at once and queues one job per asset for its generated pictures; `hoard serve` \
            makes them in the background (new uploads before older backlogs), `hoard import` makes its own before it \
            returns unless --later. Without a subcommand: each pack's pictures done, pending and failed, and the queue.
            """,
        subcommands: [List.self, Cancel.self, Retry.self, Run.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Each pack's generated pictures: done, pending, failed; with --pack, what failed and why.")
        @OptionGroup var data: DataOptions
        @Option(help: "Only this pack, with the problems of its failed pictures.") var pack: String?
        @Option(help: "The group that owns it (needed when several groups have a pack of that name).") var group: String?
        @Flag(help: "Print JSON.") var json = false

        struct Listed: Encodable {
            var pack: String
            var group: String
            var version: String?
            var renditions: RenditionProgress
            var problems: [JobProblem]?
        }

        struct Answer: Encodable {
            var queue: JobQueueCounts
            var packs: [Listed]
        }

        func run() async throws {
            let catalog = try await data.open().catalog
            var packs = try catalog.packs().filter { $0.renditions != nil }
            if let pack {
                packs = packs.filter { NameRule.key($0.name) == NameRule.key(pack) }
                if let group { packs = packs.filter { GroupName.key($0.group) == GroupName.key(group) } }
                guard !packs.isEmpty else { throw CLIError("no pack named '\(pack)' with generated pictures" + (group.map { " in group '\($0)'" } ?? "")) }
            }
            var listed: [Listed] = []
            for summary in packs {
                guard let renditions = summary.renditions else { continue }
                let problems = pack != nil && renditions.failed > 0 ? try catalog.jobProblems(pack: summary.name, group: summary.group) : nil
                listed.append(Listed(pack: summary.name, group: summary.group, version: summary.version, renditions: renditions, problems: problems))
            }
            let queue = try catalog.jobCounts(now: Date())
            if json { return Terminal.out(try JSONOutput.encode(Answer(queue: queue, packs: listed))) }
            var rows = [["PACK", "GROUP", "VERSION", "DONE", "PENDING", "FAILED", "CANCELLED"]]
            for item in listed {
                let r = item.renditions
                rows.append([item.pack, item.group, item.version ?? "-", "\(r.done)/\(r.total)", "\(r.pending)", "\(r.failed)", "\(r.cancelled)"])
            }
            if listed.isEmpty { Terminal.out("No pack has generated pictures to make.") } else { Terminal.out(Table.render(rows)) }
            for item in listed {
                for problem in item.problems ?? [] {
                    Terminal.out("  \(problem.kind) \(problem.asset): \(problem.code) \(problem.message)")
                }
            }
            Terminal.out("Queue: \(queue.queued) queued, \(queue.running) being made, \(queue.done) done, \(queue.failed) failed, "
                + "\(queue.cancelled) cancelled.")
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancel a pack's pending pictures (also for packs that share them); the pack stays usable without them.")
        @OptionGroup var data: DataOptions
        @Argument(help: "The pack's name.") var pack: String
        @Option(help: "The group that owns it (needed when several groups have a pack of that name).") var group: String?

        func run() async throws {
            data.sayWhere()
            let count = try await data.open().catalog.cancelJobs(pack: pack, group: group)
            Terminal.out("Cancelled \(count) job\(count == 1 ? "" : "s") of \(pack). `hoard jobs retry \(pack)` queues them again.")
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue a pack's failed and cancelled pictures again (after the jobs of new uploads).")
        @OptionGroup var data: DataOptions
        @Argument(help: "The pack's name.") var pack: String
        @Option(help: "The group that owns it (needed when several groups have a pack of that name).") var group: String?

        func run() async throws {
            data.sayWhere()
            let count = try await data.open().catalog.retryJobs(pack: pack, group: group, now: Date())
            Terminal.out("Queued \(count) job\(count == 1 ? "" : "s") of \(pack) again; `hoard serve` (or `hoard jobs run`) makes them.")
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make every queued picture now, in this process (when no server runs); a running server shares the work.")
        @OptionGroup var data: DataOptions
        @Option(help: "Worker threads (default: one per core).") var workers: Int?

        func run() async throws {
            data.sayWhere()
            let hoard = try await data.open()
            let bar = ProgressBar(label: "pictures")
            let counts = try hoard.catalog.jobCounts(now: Date())
            let started = Date()
            let run = await hoard.makeRenditions(workers: workers ?? ProcessInfo.processInfo.activeProcessorCount) { run in
                bar.update(done: Int64(run.done + run.failed), total: Int64(max(counts.queued, run.done + run.failed)), unit: .count)
            }
            bar.finish()
            Terminal.out("Made \(run.done) job\(run.done == 1 ? "" : "s") in " + String(format: "%.2f s", Date().timeIntervalSince(started))
                + (run.failed > 0 ? "; \(run.failed) failed (`hoard jobs`)" : "") + (run.retried > 0 ? "; \(run.retried) left to retry" : "") + ".")
            if run.failed > 0 { throw ExitCode(1) }
        }
    }
}
