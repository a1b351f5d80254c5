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
    @Option(help: "Address to listen on (use 0.0.0.0 to serve the local network).") var host = "127.0.0.1"
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

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("unknown log level '\(logLevel)'") }
        var configuration = ServerConfiguration(dataDirectory: data.dataDirectory)
        let loaded = try data.registry()
        for error in loaded.errors { Terminal.err("warning: plugin not loaded: \(error)") }
        configuration.registry = loaded.registry
        configuration.host = host
        configuration.port = port
        configuration.cacheBytes = cacheMB << 20
        configuration.sendFileFrom = sendfileKB > 0 ? sendfileKB << 10 : nil
        configuration.maxBlobUpload = Int64(maxBlobMB) << 20
        configuration.maxPackUpload = Int64(maxPackMB) << 20
        configuration.logLevel = level
        configuration.networkThreads = threads
        configuration.hasBlobFastPath = blobFastPath
        if let metricsAddress {
            guard let colon = metricsAddress.lastIndex(of: ":"), let port = Int(metricsAddress[metricsAddress.index(after: colon)...]),
                  (0...65535).contains(port), colon > metricsAddress.startIndex
            else { throw ValidationError("--metrics-address takes host:port, e.g. 10.0.0.5:9090; not '\(metricsAddress)'") }
            let host = metricsAddress[..<colon]
            configuration.metricsAddress = (String(host.hasPrefix("[") && host.hasSuffix("]") ? host.dropFirst().dropLast() : host), port)
        }
        let app = try await buildApplication(configuration)
        try await app.runService()
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
            try data.open().catalog.createGroup(named: name, quotaBytes: quotaMB.map { $0 << 20 })
            Terminal.out("Created group \(name). Give its members tokens with: hoard token create --group \(name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List groups.")
        @OptionGroup var data: DataOptions

        func run() async throws {
            var rows = [["GROUP", "QUOTA"]]
            for group in try data.open().catalog.groups() {
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
        @Option(help: "A label, e.g. whose tablet it is.") var name = "member"
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
            Terminal.out(try data.open().createToken(group: group, label: name, role: chosen))
        }
    }
}
