import HoardDiscovery
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Announces a `--lan` server by DNS-SD (`_hoard._tcp` with its TXT record) once it listens, and withdraws the record
/// when the server shuts down. Without a responder the server serves all the same, and says once that it is not
/// announced.
final class LANAnnouncer: Service, Sendable {
    private let identity: ServerIdentity
    private let logger: Logger
    private let announcement = NIOLockedValueBox<ServiceAnnouncement?>(nil)

    init(identity: ServerIdentity, logger: Logger) {
        self.identity = identity
        self.logger = logger
    }

    /// Registers the record for the port the server got (called once it listens).
    func announce() {
        let logger = logger
        guard !identity.isLoopbackOnly else {
            logger.notice("not announced on the local network: the server listens on loopback only")
            return
        }
        do {
            let registered = try ServiceAnnouncement.register(name: identity.name, port: identity.port, record: identity.record) { event in
                switch event {
                case .registered(let name): logger.info("announced on the local network by DNS-SD", metadata: ["service": "\(name)"])
                case .failed(let error): logger.notice("not announced on the local network (DNS-SD): \(error)")
                }
            }
            announcement.withLockedValue { $0 = registered }
        } catch {
            logger.notice("not announced on the local network (DNS-SD): \(error); players can still open its address")
        }
    }

    /// Waits for the server's shutdown, then withdraws the record.
    func run() async throws {
        try? await gracefulShutdown()
        withdraw()
    }

    /// Withdraws the record now, if it was registered.
    func withdraw() {
        let registered = announcement.withLockedValue { current in
            defer { current = nil }
            return current
        }
        registered?.withdraw()
    }
}
