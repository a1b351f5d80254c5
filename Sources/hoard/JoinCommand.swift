import ArgumentParser
import Foundation
import HoardClient
import HoardClientNIO
import HoardCore

/// `hoard join URL CODE --cache DIR`: what a player's app does on join, from the command line.
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join a game session by its code and fetch its art into a cache folder.",
        discussion: """
            Fetches what the cache lacks — every asset's preview first (about 32 pixels a tile; its smallest variant \
            when it has none), so the map could be drawn at once, then every asset at the resolution asked for (by \
            default its @1x variant: playable) — verifies every blob against its digest, and prints how long each \
            took. A second join with the same cache fetches nothing. With --follow, prints the session's live events until Ctrl-C, fetching new \
            art as events reference it.
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The server, e.g. http://nas.local:8080, then the join code, e.g. ABCD-EFGH. Without the server, the servers announced on "
                + "the local network (DNS-SD) are asked for the code in turn.",
            valueName: "URL|CODE"))
    var serverOrCode: String

    @Argument(help: ArgumentHelp("The join code, e.g. ABCD-EFGH.", valueName: "CODE"))
    var givenCode: String?

    /// The join code.
    var code: String { givenCode ?? serverOrCode }
    /// The server's URL; nil to look on the local network.
    var url: String? { givenCode == nil ? nil : serverOrCode }

    @Option(help: ArgumentHelp("The cache folder (created if missing).", valueName: "DIR"))
    var cache: String

    @Option(help: "The name others see.")
    var name: String = ProcessInfo.processInfo.environment["USER"] ?? "player"

    @Option(help: ArgumentHelp("Trust only the certificates in this PEM file for an https:// server (e.g. a self-signed one).", valueName: "PEM"))
    var cacert: String?

    @Option(help: ArgumentHelp(
        "Fetch every asset sharp enough for tiles this many device pixels wide (default: its @1x variant).", valueName: "N"))
    var pixelsPerTile: Double?

    @Option(help: ArgumentHelp(
        "Keep at most this many MiB in the cache, forgetting the blobs used least recently (never this map's).", valueName: "MIB"))
    var cacheBudget: Int64?

    @Flag(help: "Print live events after the sync, until interrupted.")
    var follow = false

    @Flag(help: "Print the summary as JSON (requests counts every request, the join's own included).")
    var json = false

    /// The summary `--json` prints.
    struct Output: Encodable {
        var session: String
        var assets: Int
        var blobs: Int
        var blobsFetched: Int
        var bytesFetched: Int64
        var firstRenderSeconds: Double?
        var firstRenderBytes: Int64?
        var totalSeconds: Double
        var requests: Int
    }

    func validate() throws {
        if givenCode == nil && serverOrCode.contains("://") {
            throw ValidationError("give the join code after the server's URL, e.g. hoard join \(serverOrCode) ABCD-EFGH")
        }
        if let pixelsPerTile, !(pixelsPerTile > 0 && pixelsPerTile.isFinite) {
            throw ValidationError("--pixels-per-tile must be a positive number, e.g. 64")
        }
        if let cacheBudget, cacheBudget < 1 { throw ValidationError("--cache-budget must be at least 1 (MiB)") }
    }

    func run() async throws {
        var configuration = try HoardClient.Configuration.commandLine(caCertificates: cacert)
        configuration.pixelsPerTile = pixelsPerTile
        let cache: BlobCacheDirectory
        do { cache = try BlobCacheDirectory(path: self.cache, budget: cacheBudget.map { $0 << 20 }) } catch { throw CLIError("\(error)") }
        let (client, joined) = try await join(configuration: configuration, cache: cache)
        let session = joined.session
        Terminal.err("Joined '\(session.name)' hosted by \(session.hostSeat?.name ?? "the host") as \(name)")

        let (progress, continuation) = AsyncStream.makeStream(of: SyncProgress.self, bufferingPolicy: .bufferingNewest(1))
        let bar = ProgressBar(label: "Syncing")
        let drawing = Task {
            for await step in progress {
                let note = "\(step.blobsDone)/\(step.blobsTotal) blobs" + (step.isFirstRenderReached ? ", map ready" : "")
                bar.update(done: step.bytesDone, total: step.bytesTotal, unit: .bytes, note: note)
            }
        }
        let summary: SyncSummary
        do {
            summary = try await joined.sync(into: cache, progress: continuation)
        } catch {
            await drawing.value
            bar.finish()
            throw CLIError("the sync did not finish: \(error)")
        }
        await drawing.value
        bar.finish()
        if json {
            Terminal.out(try JSONOutput.encode(Output(
                session: session.id, assets: summary.assets, blobs: summary.blobs, blobsFetched: summary.blobsFetched,
                bytesFetched: summary.bytesFetched, firstRenderSeconds: summary.firstRenderSeconds,
                firstRenderBytes: summary.firstRenderBytes, totalSeconds: summary.totalSeconds,
                requests: client.requestCount)).replacingOccurrences(of: "\n", with: ""))
        } else {
            Terminal.out(SyncText.summary(summary, cache: cache))
        }
        guard follow else { return }
        try await Self.follow(joined, cache: cache, caCertificates: cacert)
    }

    /// Takes back the seat an earlier join with this cache, code and name took, else joins as someone new and keeps
    /// the seat in the cache (``KeptSeats``).
    func join(configuration: HoardClient.Configuration, cache: BlobCacheDirectory) async throws -> (HoardClient, JoinedSession) {
        let seats = KeptSeats(directory: cache.root)
        if let seat = seats.seat(code: code, name: name), url.map({ (try? ServerURL.parse($0)) == seat.server }) ?? true {
            let client = HoardClient(baseURL: seat.server, configuration: configuration)
            if let joined = try? await client.rejoin(seat, cache: cache) {
                Terminal.err("Back in your seat (kept in \(seats.path.path))")
                return (client, joined)
            }
        }
        let (client, joined) = try await joinAnew(configuration: configuration, cache: cache)
        do {
            try seats.keep(
                KeptSeats.Seat(
                    server: client.baseURL, sessionId: joined.sessionId, participantId: joined.participantId,
                    participantToken: joined.participantToken),
                code: code, name: name)
        } catch {
            Terminal.err("warning: cannot keep the seat in \(seats.path.path) (\(error)); joining again takes a new seat")
        }
        return (client, joined)
    }

    /// Joins through the server given, else through the first server announced on the local network that knows the code.
    func joinAnew(configuration: HoardClient.Configuration, cache: BlobCacheDirectory) async throws -> (HoardClient, JoinedSession) {
        if let url {
            let client = HoardClient(baseURL: try ServerURL.parse(url), configuration: configuration)
            do { return (client, try await client.join(code: code, name: name, cache: cache)) } catch { throw CLIError("cannot join: \(error)") }
        }
        let servers = try Discovery.browse(seconds: 1.5)
        guard !servers.isEmpty else {
            throw CLIError("no Hoard server is announced on this network; give its address: hoard join URL \(code)")
        }
        var tried: [String] = []
        for server in servers {
            for address in server.urls {
                guard let base = URL(string: address) else { continue }
                let client = HoardClient(baseURL: base, configuration: configuration)
                do {
                    let joined = try await client.join(code: code, name: name, cache: cache)
                    Terminal.err("Found the game on \(server.record?.name ?? server.serviceName) at \(address)")
                    return (client, joined)
                } catch let error as HoardClientError where error.code == .server {
                    tried.append("\(address): \(error.message)")
                    break  // it answered: its other addresses would answer the same
                } catch {
                    tried.append("\(address): \(error)")
                }
            }
        }
        throw CLIError("no server on this network took the code \(code):\n" + tried.map { "  \($0)" }.joined(separator: "\n"))
    }

    /// Prints live events, one line each, until interrupted or the channel gives up.
    static func follow(_ joined: JoinedSession, cache: BlobCacheDirectory, caCertificates: String?) async throws {
        var options = LiveOptions()
        #if os(Linux)
        options.connector = NIOLiveConnector(caCertificates: caCertificates)
        #endif
        let channel = joined.live(prefetchInto: cache, options: options)
        do {
            for try await event in channel.events { Terminal.out(SyncText.line(event)) }
        } catch let error as HoardClientError where error.code == .webSocketUnsupported {
            throw CLIError("cannot follow live events here: this system's URLSession has no WebSocket support (on Linux it needs "
                + "libcurl 8.11 or later, built with WebSockets); the art above is synced all the same")
        } catch {
            throw CLIError("the live channel stopped: \(error)")
        }
    }
}

/// `hoard session create URL --map FILE --token T`: host a game session from a map document.
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Host game sessions on a Hoard server.",
        subcommands: [CreateSessionCommand.self]
    )
}

struct CreateSessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a game session from a map document and print its join code.",
        discussion: """
            Every "sha256:<hex>" string in the map is a reference. Blobs the server lacks are uploaded from --blobs \
            (files named by their hex digest, or a cache folder from 'hoard join'), verified against their digest, and \
            the session is created.
            """
    )

    @OptionGroup var server: MemberConnection

    @Option(help: ArgumentHelp("The map document (JSON).", valueName: "FILE"))
    var map: String

    @Option(help: ArgumentHelp("The session's name (default: the map file's name).", valueName: "N"))
    var name: String?

    @Option(help: ArgumentHelp("Where to find blobs the server lacks.", valueName: "DIR"))
    var blobs: String?

    @Flag(name: .customLong("private"), help: "Keep the session out of the group's lobby; only the code finds it.")
    var isPrivate = false

    func run() async throws {
        let client = try server.client()
        let document = try MapCommand.document(at: map)
        let sessionName = name ?? MapCommand.stem(of: map)
        let source = blobs.map { BlobFolder(directory: URL(fileURLWithPath: $0, isDirectory: true)) }
        let created: CreatedSession
        do {
            created = try await client.createSession(
                name: sessionName, visibility: isPrivate ? .private : .group, map: document, localBlobs: source)
        } catch let error as HoardClientError where error.code == .missingBlobs {
            let list = error.digests.prefix(20).map { "  \($0)" }.joined(separator: "\n")
            throw CLIError("\(error.message):\n\(list)\(error.digests.count > 20 ? "\n  …" : "")")
        } catch {
            throw CLIError("cannot create the session: \(error)")
        }
        if !created.uploaded.isEmpty { Terminal.err("Uploaded \(created.uploaded.count) blob(s) the server lacked") }
        Terminal.out("Created session '\(created.name)'\n  id:        \(created.id)\n  join code: \(created.code)\n  map:       \(created.mapDigest)")
    }
}

/// `--token` and `--cacert`: how a command speaks to a server as a member.
struct ServerAccess: ParsableArguments {
    @Option(help: ArgumentHelp("A member's token (default: $HOARD_TOKEN).", valueName: "T"))
    var token: String?

    @Option(help: ArgumentHelp("Trust only the certificates in this PEM file for an https:// server.", valueName: "PEM"))
    var cacert: String?

    /// A client of the server at `url` with the token.
    func client(_ url: String) throws -> HoardClient {
        guard let token = token ?? ProcessInfo.processInfo.environment["HOARD_TOKEN"] else {
            throw ValidationError("give a member's token with --token or HOARD_TOKEN")
        }
        return HoardClient(baseURL: try ServerURL.parse(url), token: token, configuration: try .commandLine(caCertificates: cacert))
    }
}

enum ServerURL {
    static func parse(_ text: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("'\(text)' is not a server URL; write e.g. http://nas.local:8080")
        }
        return url
    }
}

/// The words `hoard join` prints.
enum SyncText {
    static func summary(_ summary: SyncSummary, cache: BlobCacheDirectory) -> String {
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.2f s", $0) } ?? "never" }
        return [
            "Synced \(summary.assets) assets (\(summary.blobs) blobs) into \(cache.root.path)",
            "  \(summary.blobsCached) already cached, \(summary.blobsFetched) fetched (\(ByteFormat.string(summary.bytesFetched))) "
                + "in \(summary.requests) request\(summary.requests == 1 ? "" : "s")",
            "  first render after \(seconds(summary.firstRenderSeconds)), playable after \(seconds(summary.totalSeconds))",
        ].joined(separator: "\n")
    }

    static func line(_ event: LiveEvent) -> String {
        func json(_ value: JSONValue) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "?"
        }
        switch event {
        case .op(let seq, let from, let op): return "#\(seq) op from \(from): \(json(op))"
        case .presence(let seq, let change, let who): return "#\(seq) \(who.name) (\(who.id)) \(change.rawValue)"
        case .assets(let seq, let manifest): return "#\(seq) new art: \(manifest.assets.count) assets, \(manifest.blobs.count) blobs"
        case .grab(let seq, let entity, let by): return "#\(seq) \(by) grabbed \(entity)"
        case .release(let seq, let entity, let by): return "#\(seq) \(by) released \(entity)"
        case .map(let seq, let digest, _, let manifest): return "#\(seq) new map \(digest) (\(manifest.assets.count) assets)"
        case .snapshot(let seq, let digest, _): return "#\(seq) snapshot of map \(digest)"
        case .ping(let from, let x, let y): return "\(from) points at (\(x), \(y))"
        case .upload(let seq, let by, let digest, let size, _): return "#\(seq) \(by) uploaded \(digest) (\(ByteFormat.string(size)))"
        case .error(let code, let message): return "error \(code): \(message)"
        case .rolled(let seq, let from, let event):
            guard case .number(let total)? = event["roll"]?["total"], let formula = event["roll"]?["formula"]?.stringValue else {
                return "#\(seq) \(from) rolled blind for the host"
            }
            return "#\(seq) \(from) rolled \(formula) = \(Int(total))"
        case .revealed(let seq, let seed, let blind): return "#\(seq) dice seed revealed: \(seed) (\(blind.count) blind rolls)"
        case .unknown(let type, let seq, let body): return "#\(seq.map(String.init) ?? "-") \(type): \(json(body))"
        case .connected(let since): return "connected" + (since.map { " (after #\($0))" } ?? "")
        case .disconnected(let error, let delay): return "disconnected (\(error.message)); retrying in \(delay)"
        case .prefetched(let summary):
            return "fetched new art: \(summary.blobsFetched) blobs (\(ByteFormat.string(summary.bytesFetched)))"
        case .prefetchFailed(let error): return "could not fetch new art: \(error)"
        }
    }
}

extension HoardClient.Configuration {
    /// The command line's client: its requests go over SwiftNIO (``NIOHTTPExchange``) rather than URLSession.
    static func commandLine(caCertificates: String? = nil) throws -> Self {
        var configuration = Self()
        guard let caCertificates else {
            configuration.exchange = NIOHTTPExchange(maxConnections: configuration.maxParallelFetches, timeout: configuration.timeout)
            return configuration
        }
        do {
            configuration.exchange = try NIOHTTPExchange(
                maxConnections: configuration.maxParallelFetches, timeout: configuration.timeout, caCertificates: caCertificates)
        } catch {
            throw CLIError("cannot use the certificates in \(caCertificates): \(error)")
        }
        return configuration
    }
}
