import HoardCatalog
import ServiceLifecycle

/// Hands the hub the session events other replicas log (the catalog's ``SessionEventFeed``), until shutdown.
struct SessionFollowService: Service {
    let feed: any SessionEventFeed
    let hub: SessionHub

    func run() async throws {
        let (feed, hub) = (feed, hub)
        await cancelWhenGracefulShutdown {
            await feed.run { session, event in await hub.receive(session: session, event: event) }
        }
    }
}
