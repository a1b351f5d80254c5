/// Why DNS-SD could not announce or browse: most often, no responder runs on this machine (on Linux, the
/// `avahi-daemon` and the system's D-Bus).
public struct DiscoveryError: Error, CustomStringConvertible, Sendable {
    /// The dns_sd error code (`kDNSServiceErr_…`).
    public var code: Int32
    /// What failed and what to do about it.
    public var message: String

    /// An error from a dns_sd call's code.
    public init(code: Int32, doing what: String) {
        self.code = code
        let hint = code == -65537 || code == -65563  // kDNSServiceErr_Unknown, kDNSServiceErr_ServiceNotRunning
            ? " (is a DNS-SD responder running? On Linux: avahi-daemon, with the system's D-Bus)" : ""
        self.message = "\(what) failed with DNS-SD error \(code)\(hint)"
    }

    public var description: String { message }
}
