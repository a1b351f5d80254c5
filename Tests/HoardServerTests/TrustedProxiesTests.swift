import HoardServer
import Testing

/// Which addresses are proxies, and whom a request forwarded by one came from.
@Suite struct TrustedProxiesTests {
    @Test func addressesAndBlocksOfBothFamiliesMatchBitByBit() throws {
        let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8", "192.168.4.0/22", "fd00::/8", "::1"])
        for inside in ["127.0.0.1", "10.200.3.4", "192.168.7.255", "fd12:3456::1", "::1", "::ffff:10.1.1.1"] {
            #expect(proxies.contains(inside), "\(inside)")
        }
        for outside in ["127.0.0.2", "11.0.0.1", "192.168.8.0", "fe80::1", "::2", "203.0.113.5", "local", "", "10.0.0.0/8"] {
            #expect(!proxies.contains(outside), "\(outside)")
        }
        #expect(TrustedProxies().isEmpty && !TrustedProxies().contains("127.0.0.1"))
    }

    @Test func aSpecThatIsNotAnAddressOrBlockIsNamedInTheError() {
        for bad in ["nginx", "10.0.0.0/33", "::/129", "10.0.0.0/x", "10.0.0/8"] {
            #expect(throws: TrustedProxyError.self, "\(bad)") { try TrustedProxies([bad]) }
            do {
                _ = try TrustedProxies(["127.0.0.1", bad])
            } catch {
                #expect(error.description.contains("'\(bad)'"))
            }
        }
    }

    @Test func theClientIsTheLastForwardedAddressThatIsNotAProxy() throws {
        let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8"])
        // A client's own header is prepended to, never believed over what the proxies appended.
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["198.51.100.7, 203.0.113.5"]) == "203.0.113.5")
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.5, 10.1.2.3"]) == "203.0.113.5")
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["198.51.100.7", "203.0.113.5 ,10.1.2.3"]) == "203.0.113.5")
        // Only proxies on the way: the first of them; no header: the proxy itself.
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["10.0.0.9, 10.0.0.1"]) == "10.0.0.9")
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
        // From anyone else the header is ignored.
        #expect(proxies.client(peer: "203.0.113.5", forwardedFor: ["198.51.100.7"]) == "203.0.113.5")
        #expect(TrustedProxies().client(peer: "127.0.0.1", forwardedFor: ["198.51.100.7"]) == "127.0.0.1")
    }
}
