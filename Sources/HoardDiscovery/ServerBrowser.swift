import CDNSSD
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Hoard server found by DNS-SD: its service name, where it listens and its TXT record.
public struct FoundServer: Sendable, Equatable {
    /// The DNS-SD service instance name.
    public var serviceName: String
    /// The host name its record points at, without the final dot (e.g. `nas.local`).
    public var host: String
    /// Its port.
    public var port: Int
    /// Its IPv4 addresses, as the system resolves ``host``; empty when the name did not resolve.
    public var addresses: [String]
    /// What it says about itself; nil when the TXT record is not a Hoard server's.
    public var record: ServerRecord?

    /// The URLs to try, addresses first, then the host name.
    public var urls: [String] {
        let scheme = record?.isTLS == true ? "https" : "http"
        return (addresses + [host]).map { "\(scheme)://\($0):\(port)" }
    }
}

/// Browses the local network for `_hoard._tcp` through the system's DNS-SD responder.
public enum ServerBrowser {
    private final class Found {
        var services: [(name: String, domain: String, interface: UInt32)] = []
        var error: DNSServiceErrorType?
    }

    private final class Resolved {
        var host: String?
        var port = 0
        var txt: [UInt8] = []
        var error: DNSServiceErrorType?
    }

    /// The servers announced now: browses for `seconds`, then resolves each (at most 2 s each). One server seen on
    /// several interfaces is listed once. Throws when no responder can be reached.
    public static func browse(seconds: Double = 1.5) throws(DiscoveryError) -> [FoundServer] {
        DNSSDPump.quietAvahi()
        let found = Found()
        var reference: DNSServiceRef?
        let callback: DNSServiceBrowseReply = { _, flags, interface, error, name, _, domain, context in
            guard let context else { return }
            let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
            guard error == DNSServiceErrorType(kDNSServiceErr_NoError) else {
                found.error = error
                return
            }
            guard let name, let domain else { return }
            let service = (name: String(cString: name), domain: String(cString: domain), interface: interface)
            if flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0 {
                found.services.append(service)
            } else {
                found.services.removeAll { $0 == service }
            }
        }
        let started = withExtendedLifetime(found) {
            DNSServiceBrowse(&reference, 0, 0, ServerRecord.serviceType, nil, callback, Unmanaged.passUnretained(found).toOpaque())
        }
        guard started == DNSServiceErrorType(kDNSServiceErr_NoError), let reference else {
            throw DiscoveryError(code: started, doing: "browsing \(ServerRecord.serviceType)")
        }
        let stopped = withExtendedLifetime(found) {
            DNSSDPump.run(reference, until: .now + .milliseconds(Int64(seconds * 1000))) { found.error != nil }
        }
        DNSServiceRefDeallocate(reference)
        if let error = stopped ?? found.error { throw DiscoveryError(code: error, doing: "browsing \(ServerRecord.serviceType)") }

        var servers: [FoundServer] = []
        for service in found.services {
            guard var server = resolve(service.name, domain: service.domain, interface: service.interface) else { continue }
            if let twin = servers.firstIndex(where: { $0.serviceName == server.serviceName && $0.port == server.port && $0.host == server.host }) {
                servers[twin].addresses += server.addresses.filter { !servers[twin].addresses.contains($0) }
                continue
            }
            server.addresses = server.addresses.reduce(into: []) { kept, address in if !kept.contains(address) { kept.append(address) } }
            servers.append(server)
        }
        return servers
    }

    /// One service's host, port and TXT record, and the host's IPv4 addresses; nil when it did not resolve in 2 s.
    static func resolve(_ name: String, domain: String, interface: UInt32) -> FoundServer? {
        let resolved = Resolved()
        var reference: DNSServiceRef?
        let callback: DNSServiceResolveReply = { _, _, _, error, _, host, port, length, txt, context in
            guard let context else { return }
            let resolved = Unmanaged<Resolved>.fromOpaque(context).takeUnretainedValue()
            guard error == DNSServiceErrorType(kDNSServiceErr_NoError), let host else {
                resolved.error = error
                return
            }
            resolved.host = String(cString: host)
            resolved.port = Int(UInt16(bigEndian: port))
            resolved.txt = txt.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
        }
        let started = withExtendedLifetime(resolved) {
            DNSServiceResolve(
                &reference, 0, interface, name, ServerRecord.serviceType, domain, callback, Unmanaged.passUnretained(resolved).toOpaque())
        }
        guard started == DNSServiceErrorType(kDNSServiceErr_NoError), let reference else { return nil }
        withExtendedLifetime(resolved) {
            _ = DNSSDPump.run(reference, until: .now + .seconds(2)) { resolved.host != nil || resolved.error != nil }
        }
        DNSServiceRefDeallocate(reference)
        guard var host = resolved.host else { return nil }
        if host.hasSuffix(".") { host.removeLast() }
        return FoundServer(
            serviceName: name, host: host, port: resolved.port, addresses: addresses(of: host), record: ServerRecord(txt: resolved.txt))
    }

    /// The host's IPv4 addresses as the system resolves it (for a `.local` name on Linux: nss-mdns through Avahi).
    static func addresses(of host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let address = current.pointee.ai_addr, current.pointee.ai_family == AF_INET {
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                var inet = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                if inet_ntop(AF_INET, &inet, &text, socklen_t(text.count)) != nil {
                    let string = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    if !addresses.contains(string) { addresses.append(string) }
                }
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}
