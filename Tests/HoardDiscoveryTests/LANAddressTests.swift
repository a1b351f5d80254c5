import Testing

@testable import HoardDiscovery

/// Which addresses are offered to people on the local network, and how URLs and found servers write them.
@Suite struct LANAddressTests {
    @Test func globalAndUniqueLocalAddressesAreOfferedLoopbackLinkLocalAndMulticastAreNot() {
        for address in ["192.168.1.20", "10.0.0.7", "fd00::5", "fc12::1", "2001:db8::7", "2a01:4f8::1"] {
            #expect(LANAddress.isOffered(address), "\(address)")
        }
        for address in ["127.0.0.1", "0.0.0.0", "169.254.3.4", "::1", "::", "fe80::1", "febf::1", "ff02::1", "::ffff:10.0.0.9",
                        "fe80::1%eth0", "nas.local", ""] {
            #expect(!LANAddress.isOffered(address), "\(address)")
        }
    }

    @Test func urlsBracketIPv6Hosts() {
        #expect(LANAddress.url(scheme: "http", host: "fd00::5", port: 8080) == "http://[fd00::5]:8080")
        #expect(LANAddress.url(scheme: "https", host: "[fd00::5]", port: 443) == "https://[fd00::5]:443")
        #expect(LANAddress.url(scheme: "http", host: "10.0.0.7", port: 80) == "http://10.0.0.7:80")
        let found = FoundServer(
            serviceName: "Hoard", host: "nas.local", port: 8080, addresses: ["10.0.0.7", "fd00::5"],
            record: ServerRecord(instance: "0123456789abcdef", isTLS: true, name: "n"))
        #expect(found.urls == ["https://10.0.0.7:8080", "https://[fd00::5]:8080", "https://nas.local:8080"])
    }

    @Test func aRecordReadsFromTheDictionaryNWBrowserGives() {
        #expect(ServerRecord(pairs: ["API": "1", "Id": "abc", "tls": "1", "name": "x"])
            == ServerRecord(apiVersion: 1, instance: "abc", isTLS: true, name: "x"))
        #expect(ServerRecord(pairs: ["api": "one", "id": "abc"]) == nil)
        #expect(ServerRecord(pairs: ["api": "1"]) == nil)
    }

    @Test func aMachineResolvesToItsAddressesIPv4First() {
        let addresses = ServerBrowser.addresses(of: "127.0.0.1")
        #expect(addresses == ["127.0.0.1"])
        #expect(ServerBrowser.addresses(of: "fd00::5") == ["fd00::5"])
        #expect(ServerBrowser.addresses(of: "fe80::1").isEmpty)
    }
}
