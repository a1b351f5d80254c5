import Foundation
import HoardPlugins
import HoardCore
import HoardTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--blob-store s3://…` on the real binary against the S3 service `scripts/test.sh` starts (`tools/s3-server.sh`, which
/// checks signatures; its endpoint and keys come in `HOARD_TEST_S3_*`). Without it these tests fail.
@Suite("hoard with blobs in S3", .serialized)
struct S3CommandTests {
    /// The options and environment of a command whose blobs live in `bucket` on the test S3 service.
    static func s3(bucket: String, secret: String? = nil) throws -> (options: [String], environment: [String: String]) {
        let environment = ProcessInfo.processInfo.environment
        let endpoint = try #require(environment["HOARD_TEST_S3_ENDPOINT"], "start the S3 service: tools/s3-server.sh start DIR")
        var child = environment
        child["AWS_ACCESS_KEY_ID"] = environment["HOARD_TEST_S3_ACCESS_KEY"] ?? "test:tester"
        child["AWS_SECRET_ACCESS_KEY"] = secret ?? environment["HOARD_TEST_S3_SECRET"] ?? "testing"
        return (["--blob-store", "s3://\(bucket)/hoard", "--s3-endpoint", endpoint], child)
    }

    static func bucket() -> String { "cli-" + UUID().uuidString.lowercased().prefix(12) }

    @Test func anImportGoesToTheBucketAndIsVerifiedAndServedThroughTheLocalCache() async throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let (options, environment) = try Self.s3(bucket: Self.bucket())
        let imported = try CLI.run(["import", CLI.pack("dungeon-basics.zip"), "--data-dir", data, "--json"] + options, environment: environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let blobFiles = (FileManager.default.subpaths(atPath: data + "/blobs/v1/sha256") ?? []).filter { $0.count > 64 }
        #expect(blobFiles.isEmpty, "no blob is kept in the data directory: \(blobFiles.prefix(3))")
        let verify = try CLI.run(["verify", "--data-dir", data] + options, environment: environment)
        #expect(verify.status == 0 && verify.stdout.contains("OK"), "\(verify.stdout) \(verify.stderr)")
        // Served: a variant read through a running server comes from the bucket, then from the local cache.
        let listed = try CLI.run(["assets", "--data-dir", data, "--pack", "dungeon-basics", "--json"] + options, environment: environment)
        let assets = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        let variant = try #require((assets.first?["variants"] as? [[String: Any]])?.first)
        let digest = try #require(variant["digest"] as? String)
        let token = try CLI.run(["token", "create", "--group", "default", "--data-dir", data]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let port = try await freePort()
        let server = try CLI.start(["serve", "--data-dir", data, "--port", "\(port)", "--log-level", "warning"] + options, environment: environment)
        defer { server.terminate() }
        let answer = try await CLI.get(port: port, path: "/v1/blobs/\(digest)", token: token, from: server)
        #expect(answer.status == 200)
        #expect("sha256:" + CLI.sha256Hex(answer.body) == digest, "the bytes are the digest's")
        #expect(FileManager.default.fileExists(atPath: data + "/blob-cache/v1/sha256/\(digest.dropFirst(7).prefix(2))/\(digest.dropFirst(7))"))
    }

    @Test func garbageCollectionDeletesFromTheBucket() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let (options, environment) = try Self.s3(bucket: Self.bucket())
        let imported = try CLI.run(["import", CLI.pack("scifi-outpost.zip"), "--data-dir", data] + options, environment: environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let deleted = try CLI.run(["delete", "scifi-outpost", "--data-dir", data] + options, environment: environment)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let collected = try CLI.run(["gc", "--grace", "0", "--json", "--data-dir", data] + options, environment: environment)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(collected.stdout.utf8)) as? [String: Any], "\(collected.stderr)")
        #expect((report["deletedBlobs"] as? Int ?? 0) > 0 && report["keptYoung"] as? Int == 0, "\(report)")
        // What verify lists is the bucket's: nothing is left there, named or not.
        let verify = try CLI.run(["verify", "--json", "--data-dir", data] + options, environment: environment)
        let verified = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any], "\(verify.stderr)")
        #expect(verified["blobsChecked"] as? Int == 0 && verified["unreferenced"] as? Int == 0, "\(verified)")
    }

    @Test func aWrongSecretStopsTheCommandAndSaysWhatToCheck() throws {
        let data = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let (options, environment) = try Self.s3(bucket: Self.bucket(), secret: "not-the-secret")
        let result = try CLI.run(["verify", "--data-dir", data] + options, environment: environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains("refused the credentials") && result.stderr.contains("AWS_SECRET_ACCESS_KEY"), "\(result.stderr)")
        let serve = try CLI.run(["serve", "--data-dir", data, "--port", "0"] + options, environment: environment)
        #expect(serve.status != 0 && serve.stderr.contains("AWS_SECRET_ACCESS_KEY"), "the server does not start: \(serve.stderr)")
    }

    @Test func aBlobStoreThatIsNotS3IsRefusedWithTheForm() throws {
        let result = try CLI.run(["verify", "--data-dir", try CLI.temporaryDirectory(), "--blob-store", "ftp://files"])
        #expect(result.status != 0 && result.stderr.contains("s3://BUCKET[/PREFIX]"), "\(result.stderr)")
    }
}

extension CLI {
    /// Starts a long-running command (a server); its output goes to this process's.
    static func start(_ arguments: [String], environment: [String: String]) throws -> ChildProcess {
        try ChildProcess.start([binary] + arguments, environment: environment)
    }

    /// A GET over loopback, retried for up to 5 minutes while nothing answers (a server starting: with blobs in S3 it
    /// first asks the S3 service, which the parallel S3 suites can keep busy for a minute and more on a loaded 2-core
    /// machine, seen once in CI); a server that has ended is an error at once, with its exit status.
    static func get(port: Int, path: String, token: String, from server: ChildProcess? = nil) async throws -> (status: Int, body: [UInt8]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let deadline = Date().addingTimeInterval(300)
        while true {
            do {
                let (data, response) = try await URLSession.shared.data(for: request)
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, Array(data))
            } catch where Date() < deadline {
                if let status = server?.endedStatus() {
                    throw ServerEnded(description: "the server ended (exit status \(status)) before it answered: \(error)")
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    struct ServerEnded: Error, CustomStringConvertible { var description: String }

    static func sha256Hex(_ bytes: [UInt8]) -> String { BlobHasher.digest(of: bytes).hex }
}
