import CDNSSD
import Foundation

/// A registration of `_hoard._tcp` with the system's DNS-SD responder (Avahi's `avahi-daemon` on Linux through its
/// dns_sd compatibility library, mDNSResponder on Apple platforms), kept until ``withdraw()``.
///
/// ``register(name:port:record:onEvent:)`` returns at once: the responder probes the name on the network and may rename
/// it on a conflict; `onEvent` says how that went. Its replies are delivered on a thread of its own.
public final class ServiceAnnouncement: @unchecked Sendable {
    /// What became of a registration: the name it was registered under, or why it failed.
    public enum Event: Sendable {
        case registered(name: String)
        case failed(DiscoveryError)
    }

    private final class Box {
        let onEvent: @Sendable (Event) -> Void
        init(onEvent: @escaping @Sendable (Event) -> Void) { self.onEvent = onEvent }
    }

    private let lock = NSLock()
    private var reference: DNSServiceRef?
    private var isStopping = false
    private let stopped = DispatchSemaphore(value: 0)
    private let box: Unmanaged<Box>

    private init(reference: DNSServiceRef, box: Unmanaged<Box>) {
        self.reference = reference
        self.box = box
    }

    /// Registers the service `name` (nil: the responder picks the machine's name) on `port` with `record` as its TXT
    /// record, on every interface; throws when no responder can be reached.
    public static func register(
        name: String?, port: Int, record: ServerRecord, onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) throws(DiscoveryError) -> ServiceAnnouncement {
        DNSSDPump.quietAvahi()
        let box = Unmanaged.passRetained(Box(onEvent: onEvent))
        let txt = record.txtRecord
        var reference: DNSServiceRef?
        let callback: DNSServiceRegisterReply = { _, _, error, name, _, _, context in
            guard let context else { return }
            let box = Unmanaged<Box>.fromOpaque(context).takeUnretainedValue()
            if error == DNSServiceErrorType(kDNSServiceErr_NoError) {
                box.onEvent(.registered(name: name.map { String(cString: $0) } ?? ""))
            } else {
                box.onEvent(.failed(DiscoveryError(code: error, doing: "registering \(ServerRecord.serviceType)")))
            }
        }
        let error = txt.withUnsafeBytes { bytes in
            DNSServiceRegister(
                &reference, 0, 0, name, ServerRecord.serviceType, nil, nil, UInt16(truncatingIfNeeded: port).bigEndian,
                UInt16(bytes.count), bytes.baseAddress, callback, box.toOpaque())
        }
        guard error == DNSServiceErrorType(kDNSServiceErr_NoError), let reference else {
            box.release()
            throw DiscoveryError(code: error, doing: "registering \(ServerRecord.serviceType)")
        }
        let announcement = ServiceAnnouncement(reference: reference, box: box)
        let thread = Thread { announcement.deliver() }
        thread.name = "hoard-dns-sd"
        thread.start()
        return announcement
    }

    private func deliver() {
        defer { stopped.signal() }
        guard let reference = lock.withLock({ self.reference }) else { return }
        let error = DNSSDPump.run(reference, until: .now + .seconds(100 * 365 * 86_400)) { lock.withLock { isStopping } }
        if let error { box.takeUnretainedValue().onEvent(.failed(DiscoveryError(code: error, doing: "the announcement"))) }
    }

    /// Withdraws the record (the responder sends its goodbye) and stops the thread; later calls do nothing.
    public func withdraw() {
        let wasStopping = lock.withLock {
            let was = isStopping
            isStopping = true
            return was
        }
        guard !wasStopping else { return }
        stopped.wait()
        lock.withLock {
            if let reference { DNSServiceRefDeallocate(reference) }
            reference = nil
        }
        box.release()
    }

    deinit { withdraw() }
}
