import Foundation
import HoardPlugins
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import HoardStore
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A fresh data directory for one test: groups `red`, `blue` and `staff`, the sample pack `dungeon-basics` owned by
/// red and `scifi-outpost` owned by blue (both private until a test publishes one), an owner token for red and
/// blue (owners manage their group's packs), a member token for red, and an operator (admin) token in staff.
struct Fixture: Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let dungeon = "dungeon-basics"
    static let scifi = "scifi-outpost"

    let path: String
    let hoard: Hoard
    /// An owner of red.
    let red: String
    /// An owner of blue.
    let blue: String
    /// A member of red (no owner).
    let redMember: String
    /// An operator, in staff.
    let admin: String
    var configuration: ServerConfiguration

    /// A sample archive shipped in Packs/.
    static func packPath(_ name: String) -> String { root.appendingPathComponent("Packs/\(name).zip").path }

    /// Runs `body` with a fresh fixture and removes its directory afterwards.
    @discardableResult
    static func with<T>(
        packs: Bool = true, _ configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (Fixture) async throws -> T
    ) async throws -> T {
        var fixture = try await Fixture(packs: packs)
        configure(&fixture.configuration)
        defer { try? FileManager.default.removeItem(atPath: fixture.path) }
        return try await body(fixture)
    }

    private init(packs: Bool) async throws {
        path = NSTemporaryDirectory() + "hoard-server-test-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        hoard = try Hoard(dataDirectory: path)
        for group in ["red", "blue", "staff"] { try hoard.catalog.ensureGroup(named: group) }
        if packs {
            try await Self.importPack(Self.dungeon, into: "red", hoard: hoard)
            try await Self.importPack(Self.scifi, into: "blue", hoard: hoard)
        }
        red = try hoard.createToken(group: "red", label: "red member", role: .owner)
        blue = try hoard.createToken(group: "blue", label: "blue member", role: .owner)
        redMember = try hoard.createToken(group: "red", label: "red plain member", role: .member)
        admin = try hoard.createToken(group: "staff", label: "admin", isAdmin: true)
        configuration = ServerConfiguration(dataDirectory: path)
        configuration.port = 0
        configuration.logLevel = .error
        configuration.refreshInterval = .milliseconds(50)
        configuration.limits = .forTests
    }

    @discardableResult
    static func importPack(_ name: String, into group: String, hoard: Hoard) async throws -> ImportReport {
        var options = Importer.Options()
        options.group = group
        return try await hoard.importPack(at: packPath(name), options: options)
    }

    /// Builds the real application for this fixture's configuration and runs `test` against it.
    @discardableResult
    func run<T: Sendable>(_ setup: TestingSetup = .router, _ test: @Sendable (any TestClientProtocol) async throws -> T) async throws -> T {
        let app = try await buildApplication(configuration)
        return try await app.test(setup, test)
    }

    func pack(_ name: String) throws -> PackSummary {
        try #require(try hoard.catalog.packs().first { $0.name == name })
    }

    func assets(_ pack: String) throws -> [AssetListing] { try hoard.catalog.assets(pack: pack) }

    /// The largest picture blob of a pack, with its bytes.
    func picture(in pack: String) async throws -> (digest: Digest, bytes: [UInt8]) {
        let variant = try #require(try assets(pack).flatMap(\.variants).max { $0.size < $1.size })
        return (variant.digest, try #require(try await hoard.store.read(variant.digest, range: nil)))
    }

    func blobExists(_ digest: Digest) async throws -> Bool { try await hoard.store.info(digest) != nil }

    /// Files under the staging folder and the pack upload spool: both must be empty when no upload is running.
    func leftovers() -> [String] {
        ["blobs/v1/staging", "uploads"].flatMap { folder in
            (FileManager.default.subpaths(atPath: path + "/" + folder) ?? []).map { folder + "/" + $0 }
        }
    }

    /// Waits up to `seconds` for `condition`; returns whether it became true.
    static func eventually(seconds: Double = 5, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }
}

/// `Authorization: Bearer <token>` plus any other fields.
func auth(_ token: String?, _ extra: HTTPFields = [:]) -> HTTPFields {
    var fields = extra
    if let token { fields[.authorization] = "Bearer \(token)" }
    return fields
}

func buffer(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: bytes) }
func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }
func digest(of bytes: [UInt8]) -> Digest { BlobHasher.digest(of: bytes) }

/// Random bytes, for blobs no pack holds. One 64-bit draw per 8 bytes: a draw per byte is a system call per byte, and
/// megabyte fixtures then held a Swift-concurrency thread for seconds while every other test's tasks waited.
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count { withUnsafeBytes(of: generator.next()) { bytes += $0 } }
    return Array(bytes.prefix(count))
}

/// The shape every error answers with.
struct ErrorBody: Decodable {
    struct Inner: Decodable {
        var code: String
        var message: String
        var problems: [Problem]?
    }
    var error: Inner
}

extension TestResponse {
    var bytes: [UInt8] { Array(body.readableBytesView) }
    var text: String { String(buffer: body) }

    func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: Data(bytes))
    }

    /// Checks the status and the one JSON error shape (`{"error":{"code","message"}}` and nothing else on top);
    /// returns the decoded error for further checks.
    @discardableResult
    func expectError(
        _ status: HTTPResponse.Status, _ code: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> ErrorBody.Inner? {
        #expect(self.status == status, "expected \(status.code) \(code), got \(self.status.code): \(text)", sourceLocation: sourceLocation)
        #expect(headers[.contentType]?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
        let top = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        #expect(top.map { Array($0.keys) } == ["error"], "body is not {\"error\":…}: \(text)", sourceLocation: sourceLocation)
        guard let error = try? decode(ErrorBody.self).error else {
            Issue.record("undecodable error body: \(text)", sourceLocation: sourceLocation)
            return nil
        }
        #expect(error.code == code, "code \(error.code), expected \(code): \(error.message)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        return error
    }
}

struct PackList: Decodable { var packs: [PackSummary] }
struct AssetPage: Decodable {
    var assets: [AssetListing]
    var total: Int
    var nextOffset: Int?
    var nextCursor: String?
}
struct MissingList: Decodable { var missing: [String] }
struct UploadResult: Decodable {
    var digest: String
    var size: Int64
}

/// A JSON body `{"digests":[…]}`.
func digestList(_ digests: [String]) -> ByteBuffer {
    buffer(String(decoding: try! JSONSerialization.data(withJSONObject: ["digests": digests]), as: UTF8.self))
}

/// One record of a batch response: the bytes, or the marker (`-` not fetchable, `>` too large for a batch).
enum BatchItem: Equatable {
    case bytes([UInt8])
    case marker(String)
}

/// Parses the batch framing strictly: `sha256:<hex> <size>\n` + bytes + `\n`, or `sha256:<hex> -\n` / `>\n`.
func parseBatch(_ data: [UInt8]) throws -> [(String, BatchItem)] {
    struct Malformed: Error, CustomStringConvertible { var description: String }
    var items: [(String, BatchItem)] = []
    var index = 0
    while index < data.count {
        guard let newline = data[index...].firstIndex(of: UInt8(ascii: "\n")) else { throw Malformed(description: "header without newline at \(index)") }
        let header = String(decoding: data[index..<newline], as: UTF8.self).split(separator: " ")
        guard header.count == 2 else { throw Malformed(description: "bad header \(header)") }
        index = newline + 1
        let (name, field) = (String(header[0]), String(header[1]))
        if field == "-" || field == ">" {
            items.append((name, .marker(field)))
            continue
        }
        guard let size = Int(field), index + size < data.count, data[index + size] == UInt8(ascii: "\n") else {
            throw Malformed(description: "bad size or missing trailing newline after \(name)")
        }
        items.append((name, .bytes(Array(data[index..<(index + size)]))))
        index += size + 1
    }
    return items
}

/// Python helpers (python3 is on the test machines).
enum Python {
    /// Runs a script with arguments; throws with its standard error when it fails.
    static func run(_ script: String, _ arguments: [String]) throws { try run(["-c", script] + arguments) }

    /// Runs python3 with these arguments, its output discarded.
    static func run(_ arguments: [String]) throws {
        struct Failed: Error, CustomStringConvertible { var description: String }
        let outcome = try ChildProcess.run(["python3"] + arguments)
        guard outcome.status == 0 else { throw Failed(description: outcome.errorText) }
    }

    /// Writes a stored zip pack `name` 1.0.0 with one 64×64 token PNG padded by `padding` random bytes (a private
    /// ancillary chunk), so its size can be chosen.
    static func makePack(at path: String, name: String, version: String = "1.0.0", padding: Int = 0) throws {
        try run(
            """
            import json, os, struct, sys, zipfile, zlib
            out, name, version, pad = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
            def chunk(k, d): return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
            raw = b"".join(b"\\x00" + bytes([200, 50, 50, 255]) * 64 for _ in range(64))
            png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 6, 0, 0, 0))
                   + chunk(b"IDAT", zlib.compress(raw)) + (chunk(b"hoRd", os.urandom(pad)) if pad else b"") + chunk(b"IEND", b""))
            with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
                z.writestr("pack.json", json.dumps({"name": name, "version": version, "license": "CC0-1.0", "tilePixels": 64}))
                z.writestr("tokens/beacon.png", png)
            """, [path, name, version, String(padding)])
    }

    /// The hostile corpus from tools/make-hostile.py, generated once per test run.
    static let hostile: Result<String, any Error> = Result {
        let directory = NSTemporaryDirectory() + "hoard-server-hostile-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = Fixture.root.appendingPathComponent("tools/make-hostile.py").path
        try run([script, directory])
        return directory
    }
}

/// A temporary file path, removed by the caller.
func temporaryFile(_ suffix: String = ".zip") -> String {
    NSTemporaryDirectory() + "hoard-server-" + UUID().uuidString.lowercased() + suffix
}
