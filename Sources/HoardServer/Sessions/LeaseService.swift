import Foundation
import HoardCatalog
import Logging
import ServiceLifecycle

/// Keeps this server's leases alive and ends the leases of servers that stopped renewing theirs (a replica that died,
/// or this process before a restart): every `interval` it extends the grabs and presence its hub holds by the hub's
/// lease, then releases each grab whose lease ended (as its holder) and lets each participant whose presence ended
/// leave, unless they are connected elsewhere. Every replica does this; the session's sequence makes one release win.
struct LeaseService: Service {
    let catalog: Catalog
    let hub: SessionHub
    let logger: Logger
    /// How often leases are renewed and ended ones looked for: well within the hub's lease.
    var interval: Duration = .seconds(5)

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await renewAndEnd()
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One round: this hub's leases renewed, ended ones dealt with (at most 100 of each a round).
    func renewAndEnd() async {
        do {
            try catalog.renewLeases(replica: hub.replica, until: hub.leaseEnd())
            for grab in try catalog.expiredGrabs(before: Date(), limit: 100) {
                do {
                    try await hub.releaseExpired(grab)
                } catch {
                    logger.error("cannot release a grab whose lease ended", metadata: [
                        "session": "\(grab.session)", "entity": "\(grab.entity)", "error": "\(error)",
                    ])
                }
            }
            for presence in try catalog.takeExpiredPresence(before: Date(), limit: 100) {
                do {
                    try await hub.presenceExpired(presence)
                } catch {
                    logger.error("cannot end a presence whose lease ended", metadata: [
                        "session": "\(presence.session)", "participant": "\(presence.participant)", "error": "\(error)",
                    ])
                }
            }
        } catch where Task.isCancelled {
            return  // shutting down: a catalog call cut short is not a failure to report
        } catch {
            logger.error("cannot renew this server's leases", metadata: ["error": "\(error)"])
        }
    }
}
