import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HoardServer

/// `GET /v1/server` and the LAN URLs invite links are built from.
@Suite struct ServerIdentityTests {
    struct Answer: Decodable {
        var name: String
        var apiVersion: Int
        var instance: String
        var tls: Bool
        var lan: Bool
        var urls: [String]
    }

    @Test func aLoopbackServerOffersNoURLToOthers() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run { client in
                try await client.execute(uri: "/v1/server", method: .get) { response in
                    #expect(response.status == .ok)
                    let answer = try JSONDecoder().decode(Answer.self, from: Data(buffer: response.body))
                    #expect(answer.lan == false && answer.urls.isEmpty && answer.tls == false && answer.apiVersion == 1)
                    #expect(answer.instance.count == 16 && answer.name.hasPrefix("Hoard on "))
                }
            }
        }
    }

    @Test func aLANServerListsItsAddressesAndNeverLoopback() async throws {
        try await Fixture.with(packs: false, { configuration in
            configuration.isLAN = true
            configuration.host = "0.0.0.0"
            configuration.announcesByDNSSD = false
            configuration.serverName = "Game night"
        }) { fixture in
            // Through the router alone (nothing is bound): the URLs come from this machine's interfaces as they are.
            try await fixture.run { client in
                try await client.execute(uri: "/v1/server", method: .get) { response in
                    let answer = try JSONDecoder().decode(Answer.self, from: Data(buffer: response.body))
                    #expect(answer.lan && answer.name == "Game night")
                    for url in answer.urls {
                        #expect(url.hasPrefix("http://") && url.hasSuffix(":0"), "\(url)")
                        #expect(!url.contains("//127.") && !url.contains("localhost"), "\(url)")
                    }
                }
            }
        }
    }

    @Test func lanURLsAreEachOfferedAddressThenTheLocalName() {
        let urls = ServerIdentity.lanURLs(
            scheme: "http", boundHost: "0.0.0.0", port: 8080,
            addresses: ["127.0.0.1", "192.168.1.20", "fe80::1", "169.254.3.4", "10.0.0.7", "192.168.1.20"], hostName: "nas.example.org")
        #expect(urls == ["http://192.168.1.20:8080", "http://10.0.0.7:8080", "http://nas.local:8080"])
        #expect(ServerIdentity.lanURLs(scheme: "https", boundHost: "10.0.0.7", port: 443, addresses: ["192.168.1.20"], hostName: "nas")
            == ["https://10.0.0.7:443", "https://nas.local:443"])
        #expect(ServerIdentity.lanURLs(scheme: "http", boundHost: "127.0.0.1", port: 80, addresses: ["192.168.1.20"], hostName: "nas").isEmpty)
        #expect(ServerIdentity.lanURLs(scheme: "http", boundHost: "::", port: 80, addresses: ["127.0.0.1"], hostName: "nas").isEmpty)
        #expect(ServerIdentity.lanURLs(scheme: "http", boundHost: "0.0.0.0", port: 80, addresses: ["10.1.1.1"], hostName: "localhost")
            == ["http://10.1.1.1:80"])
    }

    @Test func lanURLsOfferGlobalAndUniqueLocalIPv6BracketedAfterIPv4AndNeverLinkLocal() {
        let machine = [
            "fe80::fc:ff:fe00:1", "fd00::5", "::1", "192.168.1.20", "2001:db8::7", "::ffff:10.0.0.9", "ff02::1", "fd00::5", "::",
        ]
        #expect(ServerIdentity.lanURLs(scheme: "http", boundHost: "::", port: 8080, addresses: machine, hostName: "nas")
            == ["http://192.168.1.20:8080", "http://[fd00::5]:8080", "http://[2001:db8::7]:8080", "http://nas.local:8080"])
        // Bound to IPv4's wildcard it listens on no IPv6 address, so it offers none.
        #expect(ServerIdentity.lanURLs(scheme: "http", boundHost: "0.0.0.0", port: 8080, addresses: machine, hostName: "nas")
            == ["http://192.168.1.20:8080", "http://nas.local:8080"])
        #expect(ServerIdentity.lanURLs(scheme: "https", boundHost: "fd00::5", port: 443, addresses: machine, hostName: nil)
            == ["https://[fd00::5]:443"])
        #expect(ServerIdentity.lanURLs(scheme: "http", boundHost: "[fe80::1]", port: 80, addresses: machine, hostName: "nas").isEmpty)
        #expect(ServerIdentity.lanURLs(scheme: "http", boundHost: "::", port: 80, addresses: ["fe80::1", "::1"], hostName: "nas").isEmpty)
    }

    @Test func theLANWildcardIsOneThatListensOnBothFamiliesOrIPv4s() {
        let wildcard = ServerIdentity.lanWildcard()
        let isDualStack = (try? String(contentsOfFile: "/proc/sys/net/ipv6/bindv6only", encoding: .utf8))
            .map { $0.hasPrefix("0") } ?? true
        let hasIPv6 = FileManager.default.fileExists(atPath: "/proc/net/if_inet6")
        #expect(wildcard == (isDualStack && hasIPv6 ? "::" : "0.0.0.0"))
    }

    @Test func aLANServerBoundToLoopbackIsLoopbackOnly() {
        for (host, isLoopback) in [("127.0.0.1", true), ("127.1.2.3", true), ("localhost", true), ("::1", true), ("0.0.0.0", false),
                                   ("10.0.0.7", false)] {
            var configuration = ServerConfiguration(dataDirectory: NSTemporaryDirectory() + "hoard-identity-" + UUID().uuidString)
            configuration.host = host
            configuration.isLAN = true
            #expect(ServerIdentity(configuration: configuration).isLoopbackOnly == isLoopback, "\(host)")
        }
    }

    @Test func theInstanceIDIsKeptInTheDataDirectory() throws {
        let directory = NSTemporaryDirectory() + "hoard-identity-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = ServerIdentity.instanceID(dataDirectory: directory)
        #expect(first.count == 16 && first.allSatisfy(\.isHexDigit))
        #expect(ServerIdentity.instanceID(dataDirectory: directory) == first)
        #expect(ServerIdentity.instanceID(dataDirectory: directory + "/missing/deeper") != first)
    }
}
