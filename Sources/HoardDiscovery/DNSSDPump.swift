import CDNSSD
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How every dns_sd operation here delivers its replies: wait for its socket, then let dns_sd call back.
enum DNSSDPump {
    /// Avahi's compatibility library prints a warning to stderr on first use unless told not to.
    static func quietAvahi() {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
    }

    /// Delivers the operation's replies until `deadline`, or until `isDone` says so (asked after each reply and at least
    /// every 50 ms); the dns_sd error that stopped it, nil when it stopped for time or `isDone`.
    static func run(_ reference: DNSServiceRef, until deadline: ContinuousClock.Instant, isDone: () -> Bool) -> DNSServiceErrorType? {
        let descriptor = DNSServiceRefSockFD(reference)
        guard descriptor >= 0 else { return DNSServiceErrorType(kDNSServiceErr_Unknown) }
        while !isDone() {
            let left = deadline - .now
            guard left > .zero else { return nil }
            let milliseconds = Int32(min(50, max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready < 0 && errno != EINTR { return DNSServiceErrorType(kDNSServiceErr_Unknown) }
            if ready > 0 {
                let error = DNSServiceProcessResult(reference)
                if error != DNSServiceErrorType(kDNSServiceErr_NoError) { return error }
            }
        }
        return nil
    }
}
