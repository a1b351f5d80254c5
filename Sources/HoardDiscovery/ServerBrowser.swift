import CDNSSD
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Browses the local network for `_hoard._tcp` through the system's DNS-SD responder.
public enum ServerBrowser {
    #if !canImport(Network)
    private final class Found {
        var services: [Service] = []
        var error: DNSServiceErrorType?
    }
    #endif

    private final class Resolved {
        var host: String?
        var port = 0
        var txt: [UInt8] = []
        var error: DNSServiceErrorType?
    }

    /// A service instance seen by the browse: where to resolve it, and its TXT record when the browse brought it.
    struct Service: Equatable {
        var name: String
        var domain: String
        var interface: UInt32
        var record: ServerRecord?
    }

    /// The servers announced now: browses for `seconds` (through `NWBrowser` where Network.framework is, else through
    /// dns_sd), then resolves each with dns_sd (at most 2 s each). One server seen on several interfaces is listed once.
    /// Throws when no responder can be reached (or, on Apple platforms, when the app may not browse the local network).
    public static func browse(seconds: Double = 1.5) throws(DiscoveryError) -> [FoundServer] {
        DNSSDPump.quietAvahi()
        #if canImport(Network)
        let services = try services(browsingWithNetwork: seconds)
        #else
        let services = try services(browsingWithDNSSD: seconds)
        #endif
        var servers: [FoundServer] = []
        for service in services {
            guard var server = resolve(service.name, domain: service.domain, interface: service.interface) else { continue }
            if let record = service.record { server.record = record }
            if let twin = servers.firstIndex(where: { $0.serviceName == server.serviceName && $0.port == server.port && $0.host == server.host }) {
                servers[twin].addresses += server.addresses.filter { !servers[twin].addresses.contains($0) }
                continue
            }
            servers.append(server)
        }
        return servers
    }

    #if !canImport(Network)
    /// The `_hoard._tcp` instances dns_sd reports within `seconds` (their TXT records come with the resolution).
    static func services(browsingWithDNSSD seconds: Double) throws(DiscoveryError) -> [Service] {
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
            let service = Service(name: String(cString: name), domain: String(cString: domain), interface: interface)
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
        return found.services
    }
    #endif

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

    /// The host's addresses as the system resolves it (for a `.local` name on Linux: nss-mdns through Avahi), IPv4
    /// first, then the IPv6 ones ``LANAddress/isOffered(_:)``, without repeats.
    static func addresses(of host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { return [] }
        defer { freeaddrinfo(list) }
        var inet: [String] = []
        var inet6: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            guard let address = current.pointee.ai_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let written: UnsafePointer<CChar>?
            switch current.pointee.ai_family {
            case AF_INET:
                var bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                written = inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count))
            case AF_INET6:
                var bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                written = inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count))
            default: written = nil
            }
            guard written != nil else { continue }
            let string = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if current.pointee.ai_family == AF_INET {
                if !inet.contains(string) { inet.append(string) }
            } else if LANAddress.isOffered(string) && !inet6.contains(string) {
                inet6.append(string)
            }
        }
        return inet + inet6
    }
}
