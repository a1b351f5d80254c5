import Foundation
import HoardDiscovery
import NIOConcurrencyHelpers
import NIOCore

/// Who this server is and where people on the local network reach it: what `GET /v1/server` answers, what DNS-SD
/// announces and what `hoard serve --lan` prints.
public final class ServerIdentity: Sendable {
    /// What `GET /v1/server` answers.
    public struct Answer: Codable, Sendable, Equatable {
        /// The server's name for people.
        public var name: String
        /// The HTTP API's major version (also in the DNS-SD TXT record).
        public var apiVersion: Int
        /// The server's instance id: the same across restarts of one data directory.
        public var instance: String
        /// Whether it serves HTTPS.
        public var tls: Bool
        /// Whether it serves the local network (`hoard serve --lan`).
        public var lan: Bool
        /// The URLs people on the local network may open: each LAN address, then the `.local` name; empty
        /// without `--lan` (loopback is never offered to others).
        public var urls: [String]
    }

    /// The server's name for people.
    public let name: String
    /// The instance id.
    public let instance: String
    /// Whether it serves HTTPS.
    public let isTLS: Bool
    /// Whether it serves the local network.
    public let isLAN: Bool
    /// The address it binds.
    let boundHost: String
    private let boundPort: NIOLockedValueBox<Int>

    init(configuration: ServerConfiguration) {
        name = configuration.serverName ?? "Hoard on \(Self.shortHostName(Self.machineName()) ?? "this machine")"
        instance = Self.instanceID(dataDirectory: configuration.dataDirectory)
        isTLS = configuration.certificates != nil
        isLAN = configuration.isLAN
        boundHost = configuration.host
        boundPort = NIOLockedValueBox(configuration.port)
    }

    /// Whether it is bound to a loopback address (`--lan --host 127.0.0.1`): nothing to offer others, nothing to announce.
    public var isLoopbackOnly: Bool { boundHost == "localhost" || boundHost == "::1" || boundHost.hasPrefix("127.") }

    /// The port it listens on: the configured one until the server is bound, then the one it got.
    public var port: Int {
        get { boundPort.withLockedValue { $0 } }
        set { boundPort.withLockedValue { $0 = newValue } }
    }

    /// The URLs people on the local network may open now (the machine's addresses are read at each call).
    public func lanURLs() -> [String] {
        guard isLAN else { return [] }
        let addresses = ((try? System.enumerateDevices()) ?? []).compactMap { $0.address?.ipAddress }
        return Self.lanURLs(
            scheme: isTLS ? "https" : "http", boundHost: boundHost, port: port, addresses: addresses,
            hostName: Self.machineName())
    }

    /// What `GET /v1/server` answers.
    public func answer() -> Answer {
        Answer(name: name, apiVersion: ServerRecord.currentAPIVersion, instance: instance, tls: isTLS, lan: isLAN, urls: lanURLs())
    }

    /// The DNS-SD TXT record's fields.
    var record: ServerRecord { ServerRecord(instance: instance, isTLS: isTLS, name: name) }

    /// The URLs on the local network for a server bound to `boundHost`: on a wildcard address, each address
    /// ``LANAddress/isOffered(_:)`` in the order given, IPv4 before IPv6 and without repeats (`0.0.0.0` listens on IPv4
    /// only, so it offers no IPv6); on one address, that address if it is offered. Then `host.local` (the first label of
    /// `hostName`), when any address was listed. IPv6 addresses are bracketed (`http://[fd00::5]:8080`); link-local IPv6
    /// is never offered (see ``LANAddress``).
    static func lanURLs(scheme: String, boundHost: String, port: Int, addresses: [String], hostName: String?) -> [String] {
        let bound = boundHost.hasPrefix("[") && boundHost.hasSuffix("]") ? String(boundHost.dropFirst().dropLast()) : boundHost
        let candidates: [String]
        switch bound {
        case "0.0.0.0": candidates = addresses.filter { !$0.contains(":") }
        case "", "::", "*": candidates = addresses.filter { !$0.contains(":") } + addresses.filter { $0.contains(":") }
        default: candidates = [bound]
        }
        var hosts: [String] = []
        for address in candidates where LANAddress.isOffered(address) && !hosts.contains(address) {
            hosts.append(address)
        }
        if !hosts.isEmpty, let short = shortHostName(hostName) { hosts.append(short + ".local") }
        return hosts.map { LANAddress.url(scheme: scheme, host: $0, port: port) }
    }

    /// The wildcard address `--lan` binds: `::` where an IPv6 socket on it also takes IPv4 (the system's default for
    /// IPv6 sockets is dual-stack, as on Linux unless `net.ipv6.bindv6only` and on macOS), else `0.0.0.0` (no IPv6 here).
    public static func lanWildcard() -> String {
        #if canImport(Glibc)
        let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let probe = socket(AF_INET6, SOCK_STREAM, 0)
        #endif
        guard probe >= 0 else { return "0.0.0.0" }
        defer { close(probe) }
        var isV6Only: Int32 = 1
        var length = socklen_t(MemoryLayout<Int32>.size)
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        guard getsockopt(probe, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &isV6Only, &length) == 0, isV6Only == 0, bound == 0 else {
            return "0.0.0.0"
        }
        return "::"
    }

    /// The machine's host name (`gethostname`, not resolved: Foundation's `hostName` may wait on DNS).
    static func machineName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The first label of a host name (`nas` of `nas.example.org` or `nas.local`); nil for none or `localhost`.
    static func shortHostName(_ hostName: String?) -> String? {
        guard let label = hostName?.split(separator: ".").first.map(String.init), !label.isEmpty, label.lowercased() != "localhost"
        else { return nil }
        return label
    }

    /// The data directory's instance id (`DIR/server-id`, made on first use); a new random one when it cannot be
    /// kept there.
    static func instanceID(dataDirectory: String) -> String {
        let path = (dataDirectory as NSString).appendingPathComponent("server-id")
        if let kept = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
           kept.count == 16, kept.allSatisfy(\.isHexDigit) {
            return kept
        }
        let made = (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try? made.write(toFile: path, atomically: true, encoding: .utf8)
        return made
    }
}
