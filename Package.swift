// swift-tools-version:6.1
import PackageDescription

// Targets follow the data: archive → entries → conventions/kinds → hashing → blob store → catalog → import → CLI.
// HoardCore has no I/O and no dependencies; only HoardArchive imports libarchive, only HoardCatalog imports GRDB.
let package = Package(
    name: "Hoard",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "hoard", targets: ["hoard"]),
        .library(name: "HoardCore", targets: ["HoardCore"]),
        .library(name: "HoardImport", targets: ["HoardImport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
        ),
        .target(name: "CSystem"),
        .target(name: "HoardCore"),
        .target(name: "HoardArchive", dependencies: ["HoardCore", "CArchive"]),
        .target(
            name: "HoardStore",
            dependencies: ["HoardCore", "CSystem", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "HoardCatalog", dependencies: ["HoardCore", .product(name: "GRDB", package: "GRDB.swift")]),
        .target(name: "HoardImport", dependencies: ["HoardCore", "HoardArchive", "HoardStore", "HoardCatalog"]),
        .executableTarget(
            name: "hoard",
            dependencies: ["HoardImport", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(name: "HoardCoreTests", dependencies: ["HoardCore"]),
        .testTarget(name: "HoardArchiveTests", dependencies: ["HoardArchive"]),
        .testTarget(name: "HoardStoreTests", dependencies: ["HoardStore"]),
        .testTarget(name: "HoardCatalogTests", dependencies: ["HoardCatalog"]),
        .testTarget(name: "HoardImportTests", dependencies: ["HoardImport"]),
        .testTarget(name: "hoardTests", dependencies: ["hoard"]),
    ]
)
