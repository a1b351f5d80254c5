/// A Hoard server found by DNS-SD: its service name, where it listens and its TXT record.
public struct FoundServer: Sendable, Equatable {
    /// The DNS-SD service instance name.
    public var serviceName: String
    /// The host name its record points at, without the final dot (e.g. `nas.local`).
    public var host: String
    /// Its port.
    public var port: Int
    /// Its addresses as the system resolves ``host``, IPv4 first, then the IPv6 ones ``LANAddress/isOffered(_:)``
    /// (never link-local); empty when the name did not resolve.
    public var addresses: [String]
    /// What it says about itself; nil when the TXT record is not a Hoard server's.
    public var record: ServerRecord?

    /// The URLs to try, addresses first (IPv6 ones bracketed), then the host name.
    public var urls: [String] {
        let scheme = record?.isTLS == true ? "https" : "http"
        return (addresses + [host]).map { LANAddress.url(scheme: scheme, host: $0, port: port) }
    }
}
