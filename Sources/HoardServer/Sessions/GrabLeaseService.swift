import Foundation
import HoardCatalog
import Logging
import ServiceLifecycle

/// Keeps this server's grabs leased and releases the grabs whose lease ended: every `interval` it extends the leases
/// its hub holds by the hub's lease, then releases, as the server, each grab whose replica stopped renewing (a
/// replica that died, or this process before a restart). Every replica does both; one release wins (the session's
/// sequence decides), so a grab is released once.
struct GrabLeaseService: Service {
    let catalog: Catalog
    let hub: SessionHub
    let logger: Logger
    /// How often leases are renewed and ended ones looked for: well within the hub's lease.
    var interval: Duration = .seconds(5)

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await renewAndRelease()
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One round: this hub's leases renewed, ended ones released (at most 100 a round).
    func renewAndRelease() async {
        do {
            try catalog.renewGrabs(replica: hub.replica, until: hub.leaseEnd())
            for grab in try catalog.expiredGrabs(before: Date(), limit: 100) {
                do {
                    try await hub.releaseExpired(grab)
                } catch {
                    logger.error("cannot release a grab whose lease ended", metadata: [
                        "session": "\(grab.session)", "entity": "\(grab.entity)", "error": "\(error)",
                    ])
                }
            }
        } catch {
            logger.error("cannot renew this server's grab leases", metadata: ["error": "\(error)"])
        }
    }
}
