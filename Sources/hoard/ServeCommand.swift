import ArgumentParser
import Foundation
import HoardCatalog
import HoardCore
import HoardPlugins
import HoardServer
import Hummingbird
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve packs, assets and blobs over HTTP.",
        discussion: """
            The API is described in Schemas/openapi.yaml. Stop with Ctrl-C or SIGTERM: requests in flight finish first.
            Create a token to act as a group member with `hoard token create --group NAME`.
            """
    )

    @OptionGroup var data: DataOptions
    @Option(help: "Address to listen on (default: 127.0.0.1; with --lan, every IPv4 and IPv6 address).") var host: String?
    @Flag(
        help: ArgumentHelp(
            "Serve the local network: listen on every address, print the URLs players can open and announce the server by DNS-SD.",
            discussion: "Without it the server listens on loopback only. Tokens and join codes guard everything as before."))
    var lan = false
    @Option(help: ArgumentHelp("The server's name on the local network (default: Hoard on HOST).", valueName: "NAME"))
    var name: String?
    @Option(help: "Port to listen on.") var port = 8080
    @Option(help: "Memory for hot blobs, in MiB.") var cacheMB = 256
    @Option(help: "Smallest hot blob sent from its file with sendfile, in KiB (0: send every hot blob from memory).")
    var sendfileKB = 256
    @Option(help: "Largest blob upload, in MiB.") var maxBlobMB = 64
    @Option(help: "Largest pack upload, in MiB.") var maxPackMB = 4096
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"
    @Option(help: "Network threads (default: one per core).") var threads: Int?
    @Flag(inversion: .prefixedNo, help: "Answer hot blobs on the network threads, before the router (default on).")
    var blobFastPath = true
    @Option(
        help: ArgumentHelp(
            "Serve /metrics only on this address, without a token (for a Prometheus scraper on a private interface).",
            discussion: "Without it, /metrics is served on --host/--port to admin tokens only.", valueName: "host:port"))
    var metricsAddress: String?
    @Option(help: "Seconds a request's head may take to arrive, from the connection's start or the head's first byte.")
    var headTimeout: Double = 10
    @Option(help: "Seconds a kept-alive connection may wait for its next request.") var idleTimeout: Double = 60
    @Option(help: "Fewest bytes a second a request body must arrive at, over 10-second spans (0: no minimum).")
    var minBodyRate = 1024
    @Option(help: "Connections open at once (default: the descriptor limit, raised to its hard limit, less a reserve).")
    var maxConnections: Int?
    @Option(help: "Connections open at once from one IP address.") var maxConnectionsPerAddress = 1024
    @Option(help: "Seconds a WebSocket upgrade may take, from its request to the 101 answer.") var websocketHandshakeTimeout: Double = 10
    @Option(help: "Seconds between pings on live sockets; one that has not answered when the next is due is closed.")
    var websocketPingInterval: Double = 10
    @Option(help: "Seconds someone who left a table stays listed there as away before they leave the list.")
    var awaySeconds: Double = 60
    @Option(help: "Wrong join codes one address may send a minute; past that it is answered 429.") var failedJoinsPerMinute = 10
    @Option(help: "People who may join one session a minute; past that a join is answered 429.") var joinsPerSession = 60
    @Option(
        help: ArgumentHelp(
            "A reverse proxy or load balancer whose X-Forwarded-For is believed (repeatable): an address or a block.",
            discussion: """
                Behind it, wrong join codes are counted per client (the address it forwarded for) and its own \
                connections are not held to --max-connections-per-address. Without it, X-Forwarded-For is ignored.
                """, valueName: "address[/bits]"))
    var trustedProxy: [String] = []
    @Option(help: ArgumentHelp("Serve HTTPS with this certificate chain (PEM, leaf first, e.g. an ACME client's fullchain.pem).", valueName: "PEM"))
    var tlsCert: String?
    @Option(help: ArgumentHelp("The certificate's private key (PEM).", valueName: "PEM")) var tlsKey: String?
    @Option(help: "Seconds between checks of --tls-cert and --tls-key for a renewed certificate (0: reload on SIGHUP only).")
    var tlsCheckInterval: Double = 60
    @Option(
        help: ArgumentHelp(
            "Threads that make imports' generated pictures (LODs, previews, thumbnails) in the background (default: one fewer than the cores, at least one; 0: none).",
            discussion: "They run at a lower CPU priority than serving. With 0 another process sharing the catalog makes them (hoard jobs run, another replica)."))
    var renderWorkers: Int?
    @Option(help: "Seconds a picture being made stays leased to this server if it dies: another worker takes it again after that.")
    var renderLease: Double = 60

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("unknown log level '\(logLevel)'") }
        data.sayWhere()
        var configuration = ServerConfiguration(dataDirectory: data.dataDirectory)
        let loaded = try data.registry()
        for error in loaded.errors { Terminal.err("warning: plugin not loaded: \(error)") }
        configuration.registry = loaded.registry
        configuration.hoard = try await data.open(registry: loaded.registry)
        configuration.host = host ?? (lan ? ServerIdentity.lanWildcard() : "127.0.0.1")
        configuration.isLAN = lan
        configuration.serverName = name
        if lan { configuration.onServing = { identity in Self.sayWhere(identity) } }
        configuration.port = port
        configuration.cacheBytes = cacheMB << 20
        configuration.sendFileFrom = sendfileKB > 0 ? sendfileKB << 10 : nil
        configuration.maxBlobUpload = Int64(maxBlobMB) << 20
        configuration.maxPackUpload = Int64(maxPackMB) << 20
        configuration.logLevel = level
        configuration.networkThreads = threads
        guard (renderWorkers ?? 0) >= 0, renderLease >= 1, renderLease <= 86_400 else {
            throw ValidationError("--render-workers takes 0 or more, --render-lease seconds from 1 to 86400")
        }
        configuration.renderWorkers = renderWorkers
        configuration.renderLease = .milliseconds(Int64(renderLease * 1000))
        configuration.hasBlobFastPath = blobFastPath
        if let metricsAddress {
            guard let colon = metricsAddress.lastIndex(of: ":"), let port = Int(metricsAddress[metricsAddress.index(after: colon)...]),
                  (0...65535).contains(port), colon > metricsAddress.startIndex
            else { throw ValidationError("--metrics-address takes host:port, e.g. 10.0.0.5:9090; not '\(metricsAddress)'") }
            let host = metricsAddress[..<colon]
            configuration.metricsAddress = (String(host.hasPrefix("[") && host.hasSuffix("]") ? host.dropFirst().dropLast() : host), port)
        }
        try applyLimits(to: &configuration)
        let app = try await buildApplication(configuration)
        try await app.runService()
    }
}

extension ServeCommand {
    /// Prints where people on the local network reach the server (with --lan).
    static func sayWhere(_ identity: ServerIdentity) {
        let urls = identity.lanURLs()
        guard !identity.isLoopbackOnly else {
            Terminal.err("--lan with a loopback --host serves this machine only: nothing is offered to the local network")
            return
        }
        guard !urls.isEmpty else {
            Terminal.err("Serving the local network on port \(identity.port), but this machine has no LAN address yet")
            return
        }
        Terminal.err("Serving the local network as \"\(identity.name)\"; players can open:\n" + urls.map { "  \($0)" }.joined(separator: "\n"))
    }

    /// The time limits, connection caps and TLS options, checked.
    func applyLimits(to configuration: inout ServerConfiguration) throws {
        func duration(_ seconds: Double, _ option: String) throws -> Duration {
            guard seconds > 0, seconds <= 86_400 else { throw ValidationError("--\(option) takes seconds above 0 and at most 86400, not \(seconds)") }
            return .milliseconds(Int64(seconds * 1000))
        }
        configuration.limits.headTimeout = try duration(headTimeout, "head-timeout")
        configuration.limits.idleTimeout = try duration(idleTimeout, "idle-timeout")
        configuration.limits.webSocketHandshakeTimeout = try duration(websocketHandshakeTimeout, "websocket-handshake-timeout")
        configuration.webSocketPingInterval = try duration(websocketPingInterval, "websocket-ping-interval")
        configuration.awayGrace = try duration(awaySeconds, "away-seconds")
        guard minBodyRate >= 0 else { throw ValidationError("--min-body-rate takes bytes a second, 0 or more") }
        configuration.limits.minBodyRate = minBodyRate
        guard maxConnectionsPerAddress > 0, (maxConnections ?? 1) > 0, failedJoinsPerMinute > 0, joinsPerSession > 0 else {
            throw ValidationError(
                "--max-connections, --max-connections-per-address, --failed-joins-per-minute and --joins-per-session take a number above 0")
        }
        // A server holds a descriptor per connection: take what the system allows, then stay under it.
        let descriptors = ConnectionLimits.raiseDescriptorLimit()
        if let maxConnections, maxConnections > descriptors - 64 {
            throw ValidationError("--max-connections \(maxConnections) is not below the descriptor limit (\(descriptors)); raise it (ulimit -n) or lower the cap")
        }
        configuration.limits.maxConnections = maxConnections
        configuration.limits.maxConnectionsPerAddress = maxConnectionsPerAddress
        configuration.failedJoinsPerMinute = failedJoinsPerMinute
        do {
            configuration.trustedProxies = try TrustedProxies(trustedProxy)
        } catch {
            throw ValidationError("--trusted-proxy \(error)")
        }
        configuration.joinsPerSession = joinsPerSession
        switch (tlsCert, tlsKey) {
        case (nil, nil): break
        case (let certificate?, let key?):
            do {
                configuration.certificates = try CertificateStore(certificatePath: certificate, keyPath: key)
            } catch {
                throw ValidationError("cannot serve TLS: \(error)")
            }
            configuration.certificateCheckInterval = tlsCheckInterval > 0 ? try duration(tlsCheckInterval, "tls-check-interval") : nil
        default: throw ValidationError("--tls-cert and --tls-key go together")
        }
    }
}

struct GroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Create and list groups.", subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a group.")
        @OptionGroup var data: DataOptions
        @Argument(help: "The group's name.") var name: String
        @Option(help: "Most bytes its packs and uploads may hold, in MiB (no quota when absent).") var quotaMB: Int64?

        func run() async throws {
            data.sayWhere()
            try await data.open().catalog.createGroup(named: name, quotaBytes: quotaMB.map { $0 << 20 })
            Terminal.out("Created group \(name). Give its members tokens with: hoard token create --group \(name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List groups.")
        @OptionGroup var data: DataOptions

        func run() async throws {
            var rows = [["GROUP", "QUOTA"]]
            for group in try await data.open().catalog.groups() {
                rows.append([group.name, group.quotaBytes.map { ByteFormat.string($0) } ?? "none"])
            }
            Terminal.out(Table.render(rows))
        }
    }
}

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "token", abstract: "Issue API tokens.", subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new bearer token for a group's member (shown once; only its hash is stored).")
        @OptionGroup var data: DataOptions
        @Option(help: "The group the token acts for.") var group: String
        @Option(help: "The member's name: a new member, or one more device of the member of that name (who then takes --role).")
        var name = "member"
        @Option(help: ArgumentHelp(
            "What it may do: member (read, import, host, upload), owner (also delete and publish the group's packs, invite members, list and revoke its tokens) or operator (the server's: acts on every group).",
            valueName: "member|owner|operator"))
        var role: String = "member"
        @Flag(help: ArgumentHelp("Deprecated: the same as --role operator.", visibility: .hidden)) var admin = false

        func validate() throws {
            guard TokenRole(rawValue: role) != nil else { throw ValidationError("--role must be member, owner or operator") }
        }

        func run() async throws {
            if admin { Terminal.err("note: --admin is deprecated; it means --role operator (a token that acts on every group)") }
            let chosen = admin ? .operator : TokenRole(rawValue: role) ?? .member
            data.sayWhere()
            Terminal.out(try await data.open().createToken(group: group, label: name, role: chosen))
        }
    }
}
