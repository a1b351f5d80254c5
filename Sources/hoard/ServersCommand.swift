import ArgumentParser
import Foundation
import HoardDiscovery

/// `hoard servers`: the Hoard servers DNS-SD finds on the local network.
struct ServersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "servers",
        abstract: "List the Hoard servers announced on the local network (DNS-SD, _hoard._tcp).",
        discussion: "A server is announced while it runs with `hoard serve --lan` on a machine with a DNS-SD responder (Avahi on Linux)."
    )

    @Option(help: "Seconds to listen for announcements.") var wait: Double = 1.5
    @Flag(help: "Print the list as JSON.") var json = false

    /// One line of `--json`.
    struct Output: Encodable {
        var name: String
        var service: String
        var host: String
        var port: Int
        var addresses: [String]
        var urls: [String]
        var instance: String?
        var apiVersion: Int?
        var tls: Bool?
    }

    func validate() throws {
        guard wait > 0, wait <= 60 else { throw ValidationError("--wait takes seconds above 0 and at most 60") }
    }

    func run() async throws {
        let servers = try Discovery.browse(seconds: wait)
        if json {
            Terminal.out(try JSONOutput.encode(servers.map {
                Output(
                    name: $0.record?.name ?? $0.serviceName, service: $0.serviceName, host: $0.host, port: $0.port, addresses: $0.addresses,
                    urls: $0.urls, instance: $0.record?.instance, apiVersion: $0.record?.apiVersion, tls: $0.record?.isTLS)
            }))
            return
        }
        guard !servers.isEmpty else {
            Terminal.err("No Hoard server is announced on this network (a server announces itself with `hoard serve --lan`).")
            return
        }
        var rows = [["NAME", "URL", "TLS", "ID"]]
        for server in servers {
            rows.append([server.record?.name ?? server.serviceName, server.urls.first ?? "", server.record?.isTLS == true ? "yes" : "no",
                         server.record?.instance ?? "?"])
        }
        Terminal.out(Table.render(rows))
    }
}

/// The CLI's DNS-SD browse: what `hoard servers` lists and where `hoard join CODE` looks.
enum Discovery {
    /// The Hoard servers announced now (others on `_hoard._tcp` with a TXT record that is not Hoard's are left out).
    static func browse(seconds: Double) throws -> [FoundServer] {
        do {
            return try ServerBrowser.browse(seconds: seconds).filter { $0.record != nil }
        } catch {
            throw CLIError("cannot look for servers on the local network: \(error)")
        }
    }
}
