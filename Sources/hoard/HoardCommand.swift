import ArgumentParser
import Foundation
import HoardCatalog
import HoardCore
import HoardImaging
import HoardPostgres
import HoardRepository
import HoardPlugins
import HoardS3
import HoardStore

/// `hoard`: a self-hosted content and asset server for virtual-tabletop apps.
@main
struct HoardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hoard",
        abstract: "A self-hosted content and asset server for virtual-tabletop apps.",
        discussion: """
            Art packs (zip, tar or tar.gz archives of tokens, objects, textures, walls and backgrounds) are imported \
            into a data directory: every file is hashed, stored once by its SHA-256 digest and catalogued.
            """,
        version: "0.1.0",
        subcommands: [
            ImportCommand.self, PluginsCommand.self, PacksCommand.self, AssetsCommand.self, DeleteCommand.self, VerifyCommand.self, GCCommand.self,
            ServeCommand.self, GroupCommand.self, TokenCommand.self, BackupCommand.self, RestoreCommand.self, JoinCommand.self, SessionCommand.self,
            MigrateCatalogCommand.self, ServersCommand.self, MapCommand.self, RollsCommand.self, JobsCommand.self,
        ]
    )
}

/// The `--data-dir` option every command shares.
struct DataOptions: ParsableArguments {
    @Option(
        name: .customLong("data-dir"),
        help: ArgumentHelp(
            "The data directory: catalog and blobs. Created if missing. Default: $HOARD_DATA_DIR, else ./hoard-data if it exists, "
                + "else ~/.local/share/hoard (~/Library/Application Support/Hoard on macOS).",
            valueName: "DIR"))
    var givenDataDirectory: String?

    /// The data directory in effect and why (``DataLocation``).
    var location: DataLocation { DataLocation.current(given: givenDataDirectory) }

    /// The data directory in effect.
    var dataDirectory: String { location.path }

    /// Says on standard error which data directory a command that writes is about to change.
    func sayWhere() {
        Terminal.err(location.line)
    }

    @Option(
        name: .customLong("plugins-dir"),
        help: ArgumentHelp("Out-of-process plugins, one folder each with a plugin.json (default: DIR/plugins).", valueName: "DIR"))
    var pluginsDirectory: String?

    @Option(
        name: .customLong("plugin"),
        help: ArgumentHelp("Turn a plugin on or off for every pack unless its pack.json says otherwise, e.g. hoard.generate-lods=off (repeatable).",
                           valueName: "ID=on|off"))
    var pluginChoices: [String] = []

    @Option(
        name: .customLong("catalog"),
        help: ArgumentHelp(
            "Where the catalog lives: DIR/catalog.sqlite (the default), another SQLite file, or postgres://USER[:PASSWORD]@HOST:PORT/DB, "
                + "which several replicas may share (or $HOARD_CATALOG).",
            valueName: "URL|PATH"))
    var givenCatalog: String?

    /// --catalog, else $HOARD_CATALOG.
    var catalog: String? { givenCatalog ?? ProcessInfo.processInfo.environment["HOARD_CATALOG"] }

    @Option(
        name: .customLong("blob-store"),
        help: ArgumentHelp(
            "Where blobs live: DIR/blobs (the default), or s3://BUCKET[/PREFIX] in S3-compatible object storage, with "
                + "--s3-endpoint, --s3-region and AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or $HOARD_BLOB_STORE).",
            valueName: "URL"))
    var givenBlobStore: String?

    /// --blob-store, else $HOARD_BLOB_STORE.
    var blobStore: String? { givenBlobStore ?? ProcessInfo.processInfo.environment["HOARD_BLOB_STORE"] }

    @Option(
        name: .customLong("s3-endpoint"),
        help: ArgumentHelp("The S3 service's URL, e.g. http://127.0.0.1:9000 (default: AWS's for the region; or $HOARD_S3_ENDPOINT).", valueName: "URL"))
    var givenS3Endpoint: String?

    /// --s3-endpoint, else $HOARD_S3_ENDPOINT.
    var s3Endpoint: String? { givenS3Endpoint ?? ProcessInfo.processInfo.environment["HOARD_S3_ENDPOINT"] }

    @Option(
        name: .customLong("s3-region"),
        help: ArgumentHelp("The S3 signing region (default: us-east-1; or $HOARD_S3_REGION).", valueName: "REGION"))
    var givenS3Region: String?

    /// --s3-region, else $HOARD_S3_REGION.
    var s3Region: String? { givenS3Region ?? ProcessInfo.processInfo.environment["HOARD_S3_REGION"] }

    @Option(
        name: .customLong("blob-cache"),
        help: ArgumentHelp("With an S3 blob store: MiB of verified blobs kept in DIR/blob-cache, so hot blobs are served from local disk.",
                           valueName: "MIB"))
    var blobCacheMiB: Int64 = 1024

    /// The plugins directory in effect.
    var plugins: String { pluginsDirectory ?? dataDirectory + "/plugins" }

    /// The standard plugins plus those in the plugins directory, and why any plugin folder was not loaded.
    func registry() throws -> (registry: PluginRegistry, plugins: [ExternalPlugin], errors: [PluginError]) {
        var registry = try PluginRegistry.standard()
        for choice in pluginChoices {
            let parts = choice.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, ["on", "off"].contains(parts[1]) else {
                throw ValidationError("--plugin takes ID=on or ID=off, not '\(choice)'")
            }
            registry.serverDefaults[parts[0]] = parts[1] == "on"
        }
        let found = registry.registerPlugins(in: plugins)
        return (registry, found.plugins, found.errors)
    }

    func open() async throws -> Hoard {
        let loaded: (registry: PluginRegistry, plugins: [ExternalPlugin], errors: [PluginError])
        do {
            loaded = try registry()
        } catch {
            throw CLIError("cannot open the data directory '\(dataDirectory)': \(error)")
        }
        for error in loaded.errors { Terminal.err("warning: plugin not loaded: \(error)") }
        return try await open(registry: loaded.registry)
    }

    /// The data directory's catalog over the blob store the options name: its own `blobs/` folder, or an S3 bucket
    /// (checked now: made if missing, the credentials tried) behind a local cache of verified blobs.
    func open(registry: PluginRegistry) async throws -> Hoard {
        do {
            let directory = try DataDirectory(path: dataDirectory)
            let store: any BlobStore
            switch blobStore {
            case nil, "":
                store = try FileBlobStore(root: directory.blobsPath)
            case let location? where location.hasPrefix("s3://"):
                guard blobCacheMiB > 0 else { throw ValidationError("--blob-cache takes a number of MiB above 0, not \(blobCacheMiB)") }
                let s3 = try S3BlobStore(location: location, endpoint: s3Endpoint, region: s3Region, stagingDirectory: directory.path + "/staging")
                try await s3.validate()
                store = try CachedBlobStore(backing: s3, cacheRoot: directory.path + "/blob-cache", budget: blobCacheMiB << 20)
            case let location?:
                throw ValidationError("--blob-store takes s3://BUCKET[/PREFIX], or nothing for DIR/blobs; not '\(location)'")
            }
            return Hoard(directory: directory, store: store, catalog: try openCatalog(directory), registry: registry)
        } catch let error as ValidationError {
            throw error
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("cannot open the data directory '\(dataDirectory)'\(blobStore.map { " with the blob store \($0)" } ?? ""): \(error)")
        }
    }

    /// The catalog `--catalog` names: the data directory's SQLite file by default, another SQLite file, or a
    /// PostgreSQL database (migrated now when it lacks migrations).
    func openCatalog(_ directory: DataDirectory) throws -> Catalog {
        switch catalog {
        case nil, "":
            return try SQLiteCatalog(path: directory.catalogPath)
        case let url? where url.hasPrefix("postgres://") || url.hasPrefix("postgresql://"):
            do {
                return try PostgresCatalog(url: url)
            } catch {
                throw CLIError("cannot open the catalog: \(error)")
            }
        case let url? where url.contains("://"):
            throw ValidationError("--catalog takes postgres://USER@HOST:PORT/DB or a SQLite file's path, not '\(url)'")
        case let path?:
            return try SQLiteCatalog(path: path)
        }
    }
}

/// A failure the CLI reports in one line and exits 1 on.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
