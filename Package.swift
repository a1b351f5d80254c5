// swift-tools-version:6.1
import PackageDescription

// Targets follow the data: an archive is read, its entries named and checked, its blobs stored and catalogued, then
// served over HTTP to clients that cache them. Each target's place in that flow:
//
//   archive   HoardArchive    reads zip, tar and Godot .pck archives into checked entries (the only libarchive user)
//   store     HoardStore      content-addressed blob files: stage, hash, fsync, publish
//             HoardS3         the same contract over S3-compatible object storage (SigV4 on AsyncHTTPClient)
//   catalog   HoardCatalog    the catalog's contract (CatalogBackend) and its SQLite backend: packs, assets, groups,
//                             tokens, sessions (the only GRDB user)
//             HoardPostgres   the same contract on PostgreSQL, which replicas share: connection from a URL, the schema's
//                             migrations, the sessions' event log with NOTIFY and LISTEN (the only postgres-nio user)
//   hoard     HoardRepository `Hoard`, one data directory's store and catalog behind the one write path (stage, verify,
//                             publish, record); its importer turns an archive into a pack (names, variants, derived
//                             pictures, blobs, rows); its maintenance verifies, collects garbage and backs up.
//                             Nothing above it speaks to a store.
//   server    HoardServer     the HTTP API, the blob fast path, live sessions, the web page (the only Hummingbird user)
//   discovery HoardDiscovery  DNS-SD (mDNS/Bonjour): a server announces `_hoard._tcp`, clients browse for it
//   client    HoardClient     the API for apps: requests, blob cache directory, sync, the live channel;
//             HoardClientNIO  the same requests and the live channel over SwiftNIO (what the command line uses)
//   CLI       hoard           the executable: parses arguments, builds a configuration, calls the libraries
//
// Beside the flow:
//   core      HoardCore       the vocabulary every step shares (digests, kinds, entry paths, JSON, picture headers,
//                             metadata stripping, the live table, the plugin protocols, the digest hasher); no I/O,
//                             one dependency (swift-crypto, for SHA-256)
//   plugins   HoardPlugins    out-of-process plugins (naming conventions, processors) behind HoardCore's protocols;
//                             `ChildProcess`, the one way Hoard and its tests start programs (posix_spawn)
//   imaging   HoardImaging    derived pictures (lower LODs, previews) through libvips (the only libvips user)
//   C shims   CArchive        libarchive, found by pkg-config
//             CVips           libvips, loaded with dlopen on first use
//             CDNSSD          the dns_sd API: Avahi's compatibility library on Linux (pkg-config), the system's on Apple's
//             CHoardSystem    syncfs, writeback and malloc tuning for the store, the plugins and the executable
//   tests     HoardTestSupport  what several test targets share; one test target per source target
let package = Package(
    name: "Hoard",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "hoard", targets: ["hoard"]),
        .library(name: "HoardCore", targets: ["HoardCore"]),
        .library(name: "HoardRepository", targets: ["HoardRepository"]),
        .library(name: "HoardClient", targets: ["HoardClient"]),
        // Apps find servers with it: DNS-SD browse of `_hoard._tcp` (NWBrowser on Apple platforms, Avahi's dns_sd on Linux).
        .library(name: "HoardDiscovery", targets: ["HoardDiscovery"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Already built for Hummingbird; named here because the blob fast path speaks their types.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // TLS for `hoard serve --tls-cert` and `hoard join https://…` (already built for the WebSocket client).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The S3 blob store's HTTP client (SigV4 is written here, on swift-crypto).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The PostgreSQL catalog (issue 19): the wire protocol, LISTEN and NOTIFY.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
        ),
        // DNS-SD: Avahi's dns_sd compatibility library on Linux (Debian's libavahi-compat-libdnssd-dev, pkg-config
        // avahi-compat-libdns_sd), linked by name: its pkg-config flags carry -D_REENTRANT, which SwiftPM refuses with a
        // warning on every build, and only on Linux. On Apple platforms dns_sd is part of the system (libSystem), so an
        // Apple build needs no Avahi; there HoardDiscovery browses through Network.framework's NWBrowser.
        .systemLibrary(name: "CDNSSD"),
        .target(name: "HoardDiscovery", dependencies: ["CDNSSD"], linkerSettings: [.linkedLibrary("dns_sd", .when(platforms: [.linux]))]),
        // libvips is loaded with dlopen on first use, not linked (see Sources/CVips/include/hoard_vips.h).
        .target(name: "CVips", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(name: "CHoardSystem"),
        .target(name: "HoardCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .target(
            name: "HoardArchive", dependencies: ["HoardCore", "CArchive", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "HoardImaging", dependencies: ["HoardCore", "CVips"]),
        .target(name: "HoardPlugins", dependencies: ["HoardCore", "CHoardSystem"]),
        .target(
            name: "HoardStore",
            dependencies: ["HoardCore", "CHoardSystem", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // Blobs in S3-compatible object storage: SigV4, a small S3 client, and the S3 blob store.
        .target(
            name: "HoardS3",
            dependencies: [
                "HoardCore", "HoardStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(name: "HoardCatalog", dependencies: [
            "HoardCore", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
        ]),
        .target(name: "HoardPostgres", dependencies: [
            "HoardCore", "HoardCatalog",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .target(name: "HoardRepository", dependencies: ["HoardCore", "HoardArchive", "HoardStore", "HoardCatalog", "CHoardSystem"]),
        .target(
            name: "HoardServer",
            dependencies: [
                "HoardCore", "HoardCatalog", "HoardRepository", "HoardDiscovery",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            // The web page: plain HTML, CSS and JavaScript modules, served as they are (Web/WebRoutes.swift).
            resources: [.copy("Web/Page")]
        ),
        .target(name: "HoardClient", dependencies: ["HoardCore", .product(name: "Crypto", package: "swift-crypto")]),
        // The client's requests and live channel over SwiftNIO instead of URLSession (what the command line uses).
        .target(
            name: "HoardClientNIO",
            dependencies: [
                "HoardClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ]
        ),
        .executableTarget(
            name: "hoard",
            dependencies: [
                "HoardCatalog", "HoardRepository", "HoardServer", "HoardClient", "HoardImaging", "HoardPlugins",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                "HoardClientNIO", "CHoardSystem", "HoardStore", "HoardS3", "HoardPostgres", "HoardDiscovery",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // What several test targets share: a seeded random generator, map comparison.
        .target(
            name: "HoardTestSupport",
            dependencies: ["HoardCore", "HoardPostgres", .product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Tests/HoardTestSupport"),
        .testTarget(name: "HoardCoreTests", dependencies: ["HoardCore", "HoardTestSupport"]),
        .testTarget(name: "HoardArchiveTests", dependencies: ["HoardArchive", "HoardPlugins"]),
        .testTarget(name: "HoardStoreTests", dependencies: ["HoardStore", "BlobStoreConformance"]),
        // The blob store contract as a list of checks, run against every backend by its own test target.
        .target(name: "BlobStoreConformance", dependencies: ["HoardStore"], path: "Tests/BlobStoreConformance"),
        .testTarget(name: "HoardS3Tests", dependencies: ["HoardS3", "BlobStoreConformance"]),
        .testTarget(name: "HoardCatalogTests", dependencies: ["HoardCatalog", "HoardPostgres", "HoardTestSupport"]),
        // Runs against the PostgreSQL that scripts/test.sh starts (tools/postgres.sh); HOARD_TEST_POSTGRES is its URL.
        .testTarget(name: "HoardPostgresTests", dependencies: [
            "HoardPostgres", "HoardCatalog", "HoardTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .testTarget(name: "HoardRepositoryTests", dependencies: ["HoardRepository", "HoardPlugins", "HoardTestSupport"]),
        .testTarget(name: "HoardImagingTests", dependencies: ["HoardImaging", "HoardPlugins", "HoardRepository", "HoardTestSupport"]),
        .testTarget(name: "HoardDiscoveryTests", dependencies: ["HoardDiscovery"]),
        .testTarget(name: "HoardPluginsTests", dependencies: ["HoardPlugins", "HoardRepository", "HoardCatalog"]),
        .testTarget(
            name: "HoardServerTests",
            dependencies: [
                "HoardServer", "HoardClient", "HoardClientNIO", "HoardPlugins", "HoardTestSupport", "HoardS3", "HoardPostgres",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "hoardTests", dependencies: ["hoard", "HoardCore", "HoardCatalog", "HoardPlugins", "HoardPostgres", "HoardTestSupport"]),
        .testTarget(
            name: "HoardClientTests",
            dependencies: [
                "HoardClient", "HoardClientNIO", "HoardImaging", "HoardServer", "HoardTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ]
)
