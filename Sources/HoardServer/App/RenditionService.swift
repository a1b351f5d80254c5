import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Logging
import ServiceLifecycle

/// Runs the server's render workers (``RenditionWorkers``) while it serves: they make the rendition queue's pictures
/// in the background, below serving; a shutdown lets the jobs being made finish (a job cut short by `kill -9` is taken
/// again once its lease runs out, by this server restarted or by another replica). When a job's pictures are recorded,
/// the access index catches up at once, so they are served (and the sessions that show their asset reach them) before
/// anyone is told.
final class RenditionService: Service, Sendable {
    let workers: RenditionWorkers?

    init(hoard: Hoard, configuration: ServerConfiguration, access: AccessIndex, metrics: ServerMetrics, logger: Logger) {
        let count = configuration.renderWorkers ?? RenditionWorkers.defaultWorkers
        guard count > 0 else {
            workers = nil
            return
        }
        var settings = RenditionWorkers.Configuration()
        settings.workers = count
        settings.lease = Double(configuration.renderLease.components.seconds) + Double(configuration.renderLease.components.attoseconds) / 1e18
        settings.niceness = configuration.renderNiceness
        let done = metrics.renditionJobs(outcome: "done")
        let failed = metrics.renditionJobs(outcome: "failed")
        let retried = metrics.renditionJobs(outcome: "retried")
        workers = RenditionWorkers(hoard: hoard, configuration: settings) { outcome in
            if let assets = outcome.assets {
                done.increment()
                // The new pictures are readable (and reached by the sessions that show their assets) from the catch-up on.
                if !assets.isEmpty { Task { try? await access.catchUp() } }
            } else if let problem = outcome.problem {
                (outcome.isFinal ? failed : retried).increment()
                logger.log(
                    level: outcome.isFinal ? .warning : .info, outcome.isFinal ? "a rendition job failed" : "a rendition job will be retried",
                    metadata: ["job": "\(outcome.lease.id)", "attempt": "\(outcome.lease.attempts)", "problem": "\(problem)"])
            }
        }
    }

    /// Tells the workers an import queued jobs.
    func wake() { workers?.wake() }

    func run() async throws {
        // A service that returns ends the server: without workers this one waits for the shutdown.
        guard let workers else { return try await gracefulShutdown() }
        workers.start()
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await workers.finished()
            } onGracefulShutdown: {
                workers.stop()
            }
        } onCancel: {
            workers.stop()
        }
    }
}
