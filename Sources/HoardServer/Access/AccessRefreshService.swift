import HoardCatalog
import Logging
import ServiceLifecycle

/// Applies other processes' catalog changes to the index (``AccessIndex/catchUp()``): on each of the catalog's access
/// change notices when it sends them, and every `interval` in any case; checks the index against the catalog every
/// `checkInterval`, and prunes the change log.
struct AccessRefreshService: Service {
    let index: AccessIndex
    let logger: Logger
    /// The catalog's wake-ups for other processes' changes; nil: polling alone.
    var feed: (any AccessChangeFeed)?
    /// How often the change log is read whatever the notices say; nil: 250 ms, or 1 s when notices come (they are then
    /// only a safety net).
    var interval: Duration?
    var checkInterval: Duration = .seconds(600)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                if let feed { group.addTask { await follow(feed) } }
                await poll()
            }
        }
    }

    /// Catches up on each notice. A catch-up in progress absorbs the notices that come meanwhile but the last, which
    /// makes one more catch-up read what they announced.
    private func follow(_ feed: any AccessChangeFeed) async {
        let (notices, notify) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await feed.onAccessChange { notify.yield() }
        for await _ in notices {
            do {
                if try await index.catchUp() { logger.debug("access index caught up on a notice") }
            } catch is CancellationError {
                return  // shutting down: nothing went wrong
            } catch {
                logger.error("cannot update the access index", metadata: ["error": "\(error)"])
            }
        }
    }

    private func poll() async {
        let interval = interval ?? (feed == nil ? .milliseconds(250) : .seconds(1))
        let clock = ContinuousClock()
        var nextCheck = clock.now.advanced(by: checkInterval)
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled else { return }
            do {
                if try await index.catchUp() { logger.debug("access index caught up with the catalog's change log") }
                if clock.now >= nextCheck {
                    nextCheck = clock.now.advanced(by: checkInterval)
                    let corrected = try await index.selfCheck()
                    if corrected > 0 { logger.warning("access index self-check corrected entries", metadata: ["entries": "\(corrected)"]) }
                    try await index.pruneChanges(olderThan: 3600)
                }
            } catch is CancellationError {
                return  // shutting down: nothing went wrong
            } catch {
                logger.error("cannot update the access index", metadata: ["error": "\(error)"])
            }
        }
    }
}
