import Foundation
import HoardCatalog
import HoardCore
import HoardImaging
import HoardRepository
import HoardServer
import HummingbirdTesting
import Testing

@testable import HoardClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real Hoard server on a loopback port for one test: a fresh data directory, the group `table` with a member
/// token, and helpers to upload blobs and build manifests.
struct ServerFixture: Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    let path: String
    let hoard: Hoard
    let token: String
    let baseURL: URL

    /// Runs `body` against a live server; removes the data directory afterwards.
    static func with(
        _ configure: @Sendable (inout ServerConfiguration) -> Void = { _ in }, _ body: @Sendable (ServerFixture) async throws -> Void
    ) async throws {
        let path = NSTemporaryDirectory() + "hoard-client-test-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The standard plugins, as `hoard serve` has them: imports generate previews, which manifests then name.
        let hoard = try Hoard(dataDirectory: path, registry: try .standard())
        _ = try hoard.catalog.createGroup(named: "table")
        let token = try hoard.createToken(group: "table", label: "host", isAdmin: false)
        var configuration = ServerConfiguration(dataDirectory: path)
        configuration.registry = try .standard()
        configuration.port = 0
        configuration.logLevel = .error
        configuration.refreshInterval = .milliseconds(50)
        // The tests make the generated pictures themselves (importPack), when they choose: no worker races them.
        configuration.renderWorkers = 0
        configure(&configuration)
        let app = try await buildApplication(configuration)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let fixture = ServerFixture(path: path, hoard: hoard, token: token, baseURL: URL(string: "http://127.0.0.1:\(port)")!)
            try await body(fixture)
        }
    }

    /// A client acting as the group's member, recording its requests in `log` when given.
    func client(log: RequestLog? = nil, _ tune: (inout HoardClient.Configuration) -> Void = { _ in }) -> HoardClient {
        var configuration = HoardClient.Configuration()
        if let log {
            configuration.onRequest = { @Sendable request in log.record(request) }
        }
        tune(&configuration)
        return HoardClient(baseURL: baseURL, token: token, configuration: configuration)
    }

    /// Uploads random blobs of these sizes; returns their digests and bytes.
    func upload(sizes: [Int]) async throws -> [(digest: Digest, bytes: Data)] {
        let uploader = client()
        var blobs: [(Digest, Data)] = []
        for size in sizes {
            let bytes = randomData(size)
            blobs.append((try await uploader.upload(bytes), bytes))
        }
        return blobs
    }

    /// Imports a sample pack from Packs/ into the group.
    /// Imports a sample pack into the group and, unless `makingPictures` is false, makes its generated pictures as
    /// `hoard import` does (else they stay queued).
    func importPack(_ name: String, makingPictures: Bool = true) async throws {
        var options = Importer.Options()
        options.group = "table"
        _ = try await hoard.importPack(at: Self.root.appendingPathComponent("Packs/\(name).zip").path, options: options)
        if makingPictures { _ = await hoard.makeRenditions() }
    }
}

/// Every request a client sent: method, path, Range header and (for batches) the digests asked for.
final class RequestLog: Sendable {
    struct Entry: Sendable {
        var method: String
        var path: String
        var query: String?
        var range: String?
        var batch: [String]

        /// The digests this request asks for.
        var digests: [String] { path.hasPrefix("/v1/blobs/sha256:") ? [String(path.dropFirst("/v1/blobs/".count))] : batch }
        var isBlobRequest: Bool { path.hasPrefix("/v1/blobs") }
    }

    private let entries = Locked([Entry]())

    func record(_ request: URLRequest) {
        var batch: [String] = []
        if let body = request.httpBody, let list = try? JSONDecoder().decode([String: [String]].self, from: body) {
            batch = list["digests"] ?? []
        }
        let path = request.url?.path.removingPercentEncoding ?? ""
        entries.withLock {
            $0.append(Entry(
                method: request.httpMethod ?? "GET", path: path, query: request.url?.query?.removingPercentEncoding,
                range: request.value(forHTTPHeaderField: "Range"), batch: batch))
        }
    }

    var all: [Entry] { entries.current }
}

/// A fresh cache folder, removed by `body`'s end.
func withCache<T>(_ body: (BlobCacheDirectory) async throws -> T) async throws -> T {
    let cache = try BlobCacheDirectory(path: NSTemporaryDirectory() + "hoard-client-cache-" + UUID().uuidString.lowercased())
    defer { try? FileManager.default.removeItem(at: cache.root) }
    return try await body(cache)
}

func randomData(_ count: Int) -> Data {
    // One 64-bit draw per 8 bytes: a draw per byte is a system call per byte, and megabyte fixtures then held a
    // Swift-concurrency thread for seconds while every other test's tasks waited.
    var generator = SystemRandomNumberGenerator()
    var data = Data(capacity: count + 8)
    while data.count < count { withUnsafeBytes(of: generator.next()) { data.append(contentsOf: $0) } }
    return data.prefix(count)
}

func digest(of data: Data) -> Digest { BlobHasher.digest(of: data) }

/// A made-up 1×1 asset whose variants are these blobs, at scales 1, 2, 4, … in order (64, 128, 256, … pixels a
/// side), with a 32-pixel preview when one is given.
func asset(_ name: String, _ variants: [(digest: Digest, bytes: Data)], preview: (digest: Digest, bytes: Data)? = nil) -> ManifestAsset {
    ManifestAsset(
        digest: digest(of: Data(name.utf8)), kind: .token, name: name, footprint: .single,
        variants: variants.enumerated().map { index, blob in
            AssetDescriptor.Variant(
                scale: 1 << index, digest: blob.digest, width: 64 << index, height: 64 << index, size: Int64(blob.bytes.count), mediaType: .png)
        },
        preview: preview.map { AssetDescriptor.Rendition(digest: $0.digest, width: 32, height: 32, size: Int64($0.bytes.count), mediaType: .webp) })
}

/// Waits up to `seconds` for `condition`.
func eventually(seconds: Double = 5, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
