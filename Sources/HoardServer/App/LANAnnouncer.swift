import Foundation
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
    /// The registration, and whether the server has stopped (a registration that finishes after it is withdrawn at once).
    private let state = NIOLockedValueBox<(announcement: ServiceAnnouncement?, isStopped: Bool)>((nil, false))

    init(identity: ServerIdentity, logger: Logger) {
        self.identity = identity
        self.logger = logger
    }

    /// Registers the record for the port the server got, off the caller's thread (called once the server listens: talking
    /// to the responder over D-Bus takes some milliseconds the first requests need not wait for).
    func announce() {
        Thread.detachNewThread { self.register() }
    }

    private func register() {
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
            let isStopped = state.withLockedValue { state in
                if !state.isStopped { state.announcement = registered }
                return state.isStopped
            }
            if isStopped { registered.withdraw() }
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
        let registered = state.withLockedValue { state in
            defer { state = (nil, true) }
            return state.announcement
        }
        registered?.withdraw()
    }
}
