import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which addresses of a machine people on the local network are offered, and how a URL writes them: the one rule
/// `hoard serve --lan`, `GET /v1/server` and the browsing clients share.
///
/// Offered: IPv4 that is neither loopback, `0/8` nor link-local (169.254/16); IPv6 that is global unicast (2000::/3)
/// or unique local (fc00::/7). Link-local IPv6 (fe80::/10) is never offered: a URL to it needs a zone
/// (`[fe80::1%25eth0]`) naming an interface of the machine that opens it, which the server cannot know, and browsers
/// refuse zones in URLs altogether.
public enum LANAddress {
    /// Whether `address` (IPv4 dotted or IPv6 text, without brackets) may be offered to people on the local network.
    public static func isOffered(_ address: String) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, address, &bytes) == 1 {
            return bytes[0] != 127 && bytes[0] != 0 && !(bytes[0] == 169 && bytes[1] == 254)
        }
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return false }
        return bytes[0] & 0xE0 == 0x20 || bytes[0] & 0xFE == 0xFC
    }

    /// A host as a URL writes it: an IPv6 address in brackets (`[fd00::5]`), anything else as it is.
    public static func urlHost(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// `scheme://host:port` with the host written as ``urlHost(_:)`` does.
    public static func url(scheme: String, host: String, port: Int) -> String {
        "\(scheme)://\(urlHost(host)):\(port)"
    }
}
