import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The reverse proxies and load balancers (`--trusted-proxy`) whose `X-Forwarded-For` the server believes. Behind
/// them every connection comes from their address; with them named, what is counted per address (wrong join codes)
/// is counted per client, and their own connections are not held to `--max-connections-per-address` (the balancer
/// limits its clients). A header from anyone else is ignored: a client cannot choose the address it is counted as.
public struct TrustedProxies: Sendable, Equatable {
    /// One address or block: its bytes (4 for IPv4, 16 for IPv6) and how many leading bits must match.
    struct Block: Sendable, Equatable {
        var bytes: [UInt8]
        var prefix: Int
    }

    private(set) var blocks: [Block] = []

    /// No proxy is trusted: `X-Forwarded-For` is ignored.
    public init() {}

    /// Proxies given as addresses (`127.0.0.1`, `::1`) or blocks (`10.0.0.0/8`, `fd00::/8`); throws a message naming
    /// the first one that is neither.
    public init(_ specs: [String]) throws(TrustedProxyError) {
        for spec in specs {
            let parts = spec.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = parts.first.flatMap(Self.bytes(of:)) else {
                throw TrustedProxyError("'\(spec)' is not an IP address or a block such as 10.0.0.0/8 or fd00::/8")
            }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...bytes.count * 8).contains(prefix) else {
                throw TrustedProxyError("'\(spec)': the prefix length must be a number from 0 to \(bytes.count * 8)")
            }
            blocks.append(Block(bytes: bytes, prefix: prefix))
        }
    }

    public var isEmpty: Bool { blocks.isEmpty }

    /// Whether `address` is one of the proxies.
    public func contains(_ address: String) -> Bool {
        guard !blocks.isEmpty, let bytes = Self.bytes(of: address) else { return false }
        return blocks.contains { block in
            guard block.bytes.count == bytes.count else { return false }
            let whole = block.prefix / 8
            guard bytes.prefix(whole) == block.bytes.prefix(whole) else { return false }
            let rest = block.prefix % 8
            guard rest > 0 else { return true }
            let mask = UInt8(0xFF) << (8 - rest)
            return bytes[whole] & mask == block.bytes[whole] & mask
        }
    }

    /// The client a request came from: `peer` (the connection's address) unless it is a proxy; then the last address
    /// of `X-Forwarded-For` (`forwardedFor`: its values, in order) that is not a proxy's, since each proxy appends
    /// who it heard from and only what trusted proxies appended is believed.
    public func client(peer: String, forwardedFor: [String]) -> String {
        guard contains(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return hops.last { !contains($0) } ?? hops.first ?? peer
    }

    /// An address's bytes: 4 for IPv4, and for an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`); 16 for IPv6.
    static func bytes(of address: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let mapped = bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        return mapped ? Array(bytes.suffix(4)) : bytes
    }
}

/// A `--trusted-proxy` that is not an address or block.
public struct TrustedProxyError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
