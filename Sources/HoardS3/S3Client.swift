import AsyncHTTPClient
import Foundation
import HoardCore
import HoardStore
import NIOCore
import NIOHTTP1

/// A small S3 client for one bucket: path-style URLs (`ENDPOINT/BUCKET/KEY`), every request signed with SigV4 and its
/// payload's SHA-256. Only what the blob store needs: bucket creation, PUT, ranged GET, HEAD, DELETE, copy onto itself,
/// ListObjectsV2 and multipart uploads. Every failure is a ``BlobStoreError`` that says what to check.
public struct S3Client: Sendable {
    /// Where and as whom.
    public let configuration: S3Configuration
    private let signer: SigV4Signer
    private let http: HTTPClient
    /// `host[:port]` as sent and signed.
    private let host: String
    /// How long one request may take, body included.
    private let timeout: TimeAmount = .seconds(120)

    /// One HTTP client for every S3 client of the process (never shut down, like AsyncHTTPClient's own shared one). A
    /// connection that cannot be made fails the request at once instead of being retried until the deadline: a store
    /// that is down is then an immediate `STORAGE_UNAVAILABLE`, not a request hanging for minutes. The connect timeout
    /// also bounds how long a request waits for a free connection of the pool (16 per host): generous, for a busy store.
    public static let sharedHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 16
        configuration.timeout.connect = .seconds(60)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// A client for `configuration`'s bucket over `http` (``sharedHTTPClient`` by default).
    public init(configuration: S3Configuration, http: HTTPClient = S3Client.sharedHTTPClient) {
        self.configuration = configuration
        self.signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        self.http = http
        let endpoint = configuration.endpoint
        self.host = (endpoint.host ?? "") + (endpoint.port.map { ":\($0)" } ?? "")
    }

    /// A stored object's size, last modification and user metadata (`x-amz-meta-*`, names without the prefix).
    public struct ObjectHead: Sendable {
        /// Bytes.
        public var size: Int64
        /// The store's `Last-Modified`.
        public var lastModified: Date
        /// User metadata.
        public var metadata: [String: String]
        /// The `ETag` (for an object uploaded in N parts, S3's is `"…-N"`).
        public var etag: String
    }

    // MARK: Bucket

    /// Makes the bucket unless it exists; fails clearly when the credentials are refused.
    public func createBucketIfMissing() async throws {
        // A listing, not a HEAD: a HEAD's error has no body, so a wrong secret could not be told from a missing bucket.
        let response = try await send("GET", key: nil, query: [("list-type", "2"), ("max-keys", "1")])
        if response.status == .ok { return }
        let error = S3ErrorBody(response.body)
        guard response.status == .notFound, error.code == "NoSuchBucket" || error.code == nil else {
            throw failure(response, doing: "list bucket \(configuration.bucket)")
        }
        let created = try await send("PUT", key: nil)
        if created.status == .ok || S3ErrorBody(created.body).code == "BucketAlreadyOwnedByYou" { return }
        throw failure(created, doing: "create bucket \(configuration.bucket)")
    }

    // MARK: Objects

    /// Stores `body` under `key`; `payloadHash` is its hex SHA-256, which the store may check.
    public func put(_ key: String, body: ByteBuffer, payloadHash: String, metadata: [String: String] = [:]) async throws {
        let headers = metadata.map { ("x-amz-meta-\($0.key)", $0.value) }
        let response = try await send("PUT", key: key, headers: headers, body: body, payloadHash: payloadHash)
        guard response.status == .ok else { throw failure(response, doing: "store \(key)") }
    }

    /// Size, date and metadata of `key`, or nil when absent.
    public func head(_ key: String) async throws -> ObjectHead? {
        let response = try await send("HEAD", key: key)
        if response.status == .notFound { return nil }
        guard response.status == .ok else { throw failure(response, doing: "look up \(key)") }
        let size = response.headers.first(name: "content-length").flatMap { Int64($0) } ?? 0
        let modified = response.headers.first(name: "last-modified").flatMap(Self.parseHTTPDate) ?? Date(timeIntervalSince1970: 0)
        var metadata: [String: String] = [:]
        for header in response.headers where header.name.lowercased().hasPrefix("x-amz-meta-") {
            metadata[String(header.name.lowercased().dropFirst("x-amz-meta-".count))] = header.value
        }
        return ObjectHead(size: size, lastModified: modified, metadata: metadata, etag: response.headers.first(name: "etag") ?? "")
    }

    /// Streams `key`'s bytes (all, or `range`) to `consume` piece by piece. Returns false when the object is absent.
    /// A range starting past the end delivers nothing.
    public func get(_ key: String, range: Range<Int64>? = nil, into consume: (ByteBuffer) async throws -> Void) async throws -> Bool {
        var headers: [(String, String)] = []
        if let range {
            guard !range.isEmpty else { return try await head(key) != nil }
            headers.append(("range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)"))
        }
        let response = try await execute("GET", key: key, query: [], headers: headers, body: nil, payloadHash: SigV4Signer.emptyPayloadHash)
        switch response.status {
        case .ok, .partialContent:
            do {
                for try await piece in response.body { try await consume(piece) }
            } catch let error as BlobStoreError {
                throw error
            } catch {
                throw BlobStoreError(.unavailable, "the S3 store stopped sending \(key) midway; try again", causedBy: error)
            }
            return true
        case .notFound:
            _ = try? await response.body.collect(upTo: 1 << 20)
            return false
        case .rangeNotSatisfiable:
            _ = try? await response.body.collect(upTo: 1 << 20)
            return true
        default:
            let body = (try? await response.body.collect(upTo: 1 << 20)) ?? ByteBuffer()
            throw failure(Response(status: response.status, headers: response.headers, body: body), doing: "read \(key)")
        }
    }

    /// Removes `key`; succeeds when it is absent.
    public func delete(_ key: String) async throws {
        let response = try await send("DELETE", key: key)
        guard response.status == .noContent || response.status == .ok || response.status == .notFound else {
            throw failure(response, doing: "delete \(key)")
        }
    }

    /// Copies `key` onto itself with `metadata` replacing its user metadata: the only way S3 has to change an object's
    /// metadata, and it renews `Last-Modified`. Returns false when the object is absent.
    public func replaceMetadata(_ key: String, with metadata: [String: String]) async throws -> Bool {
        let source = "/\(configuration.bucket)/" + SigV4Signer.uriEncode(key, keepingSlashes: true)
        var headers = [("x-amz-copy-source", source), ("x-amz-metadata-directive", "REPLACE")]
        headers += metadata.map { ("x-amz-meta-\($0.key)", $0.value) }
        let response = try await send("PUT", key: key, headers: headers)
        if response.status == .notFound { return false }
        guard response.status == .ok, S3ErrorBody(response.body).code == nil else { throw failure(response, doing: "refresh \(key)") }
        return true
    }

    /// One page of ListObjectsV2 under `prefix`, of the keys after `startAfter` (ignored with a continuation): the keys
    /// and the token for the next page (nil on the last).
    public func listPage(prefix: String, startAfter: String? = nil, continuation: String?, maxKeys: Int) async throws
        -> (keys: [String], next: String?)
    {
        var query = [("list-type", "2"), ("prefix", prefix), ("max-keys", "\(maxKeys)")]
        if let startAfter { query.append(("start-after", startAfter)) }
        if let continuation { query.append(("continuation-token", continuation)) }
        let response = try await send("GET", key: nil, query: query)
        guard response.status == .ok else { throw failure(response, doing: "list \(configuration.bucket)/\(prefix)") }
        let xml = String(buffer: response.body)
        let truncated = XMLText.values(of: "IsTruncated", in: xml).first == "true"
        let next = truncated ? XMLText.values(of: "NextContinuationToken", in: xml).first : nil
        return (XMLText.values(of: "Key", in: xml), next)
    }

    // MARK: Multipart

    /// Starts a multipart upload of `key`, whose object will carry `metadata`, and returns its upload id.
    public func createMultipartUpload(_ key: String, metadata: [String: String] = [:]) async throws -> String {
        let headers = metadata.map { ("x-amz-meta-\($0.key)", $0.value) }
        let response = try await send("POST", key: key, query: [("uploads", "")], headers: headers)
        guard response.status == .ok, let id = XMLText.values(of: "UploadId", in: String(buffer: response.body)).first else {
            throw failure(response, doing: "start a multipart upload of \(key)")
        }
        return id
    }

    /// Uploads part `number` (from 1) and returns its ETag.
    public func uploadPart(_ key: String, uploadID: String, number: Int, body: ByteBuffer, payloadHash: String) async throws -> String {
        let query = [("partNumber", "\(number)"), ("uploadId", uploadID)]
        let response = try await send("PUT", key: key, query: query, body: body, payloadHash: payloadHash)
        guard response.status == .ok, let etag = response.headers.first(name: "etag") else {
            throw failure(response, doing: "upload part \(number) of \(key)")
        }
        return etag
    }

    /// Joins the uploaded parts into the object.
    public func completeMultipartUpload(_ key: String, uploadID: String, etags: [String]) async throws {
        let parts = etags.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(XMLText.escaped($0.element))</ETag></Part>" }
        let xml = "<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>"
        let body = ByteBuffer(string: xml)
        let hash = BlobHasher.digest(of: Array(xml.utf8)).hex
        let response = try await send("POST", key: key, query: [("uploadId", uploadID)], body: body, payloadHash: hash)
        // S3 may answer 200 and still report an error in the body.
        guard response.status == .ok, S3ErrorBody(response.body).code == nil else {
            throw failure(response, doing: "complete the multipart upload of \(key)")
        }
    }

    /// Abandons a multipart upload and its parts.
    public func abortMultipartUpload(_ key: String, uploadID: String) async throws {
        let response = try await send("DELETE", key: key, query: [("uploadId", uploadID)])
        guard response.status == .noContent || response.status == .ok || response.status == .notFound else {
            throw failure(response, doing: "abort the multipart upload of \(key)")
        }
    }

    // MARK: Requests

    /// A response with its whole body.
    struct Response {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var body: ByteBuffer
    }

    /// Sends a signed request and collects the response body (small: XML or nothing).
    private func send(_ method: String, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
                      body: ByteBuffer? = nil, payloadHash: String = SigV4Signer.emptyPayloadHash) async throws -> Response {
        let response = try await execute(method, key: key, query: query, headers: headers, body: body, payloadHash: payloadHash)
        do {
            let collected = try await response.body.collect(upTo: 16 << 20)
            return Response(status: response.status, headers: response.headers, body: collected)
        } catch {
            throw BlobStoreError(.unavailable, "the S3 store at \(configuration.endpoint) broke off its answer; try again", causedBy: error)
        }
    }

    private func execute(_ method: String, key: String?, query: [(String, String)], headers: [(String, String)],
                         body: ByteBuffer?, payloadHash: String) async throws -> HTTPClientResponse {
        var path = "/" + SigV4Signer.uriEncode(configuration.bucket)
        if let key { path += "/" + SigV4Signer.uriEncode(key, keepingSlashes: true) }
        let signedHeaders = [("host", host)] + headers
        let request = SigV4Signer.Request(method: method, path: path, query: query.map { ($0.0, $0.1) },
                                          headers: signedHeaders.map { ($0.0, $0.1) }, payloadHash: payloadHash)
        var outgoing = HTTPClientRequest(url: configuration.endpointBase + path + queryString(query))
        outgoing.method = HTTPMethod(rawValue: method)
        for (name, value) in signedHeaders + signer.sign(request, at: Date()).map({ ($0.name, $0.value) }) {
            outgoing.headers.add(name: name, value: value)
        }
        if let body {
            outgoing.body = .bytes(body)
        } else if method == "PUT" || method == "POST" {
            outgoing.headers.add(name: "content-length", value: "0")
        }
        do {
            return try await http.execute(outgoing, timeout: timeout)
        } catch {
            throw BlobStoreError(.unavailable, "cannot reach the S3 store at \(configuration.endpoint); is it running, and is --s3-endpoint right?",
                                 causedBy: error)
        }
    }

    private func queryString(_ query: [(String, String)]) -> String {
        query.isEmpty ? "" : "?" + SigV4Signer.canonicalQuery(query.map { ($0.0, $0.1) })
    }

    /// The error for an unexpected answer: refused credentials are named as such, with what to check.
    func failure(_ response: Response, doing action: String) -> BlobStoreError {
        let error = S3ErrorBody(response.body)
        let code = error.code ?? "HTTP \(response.status.code)"
        let cause = [error.code, error.message].compactMap { $0 }.joined(separator: ": ")
        switch error.code {
        case "SignatureDoesNotMatch":
            return BlobStoreError(.misconfigured, "the S3 store refused the credentials (SignatureDoesNotMatch) — check AWS_SECRET_ACCESS_KEY",
                                  cause: cause)
        case "InvalidAccessKeyId":
            return BlobStoreError(.misconfigured, "the S3 store does not know the access key (InvalidAccessKeyId) — check AWS_ACCESS_KEY_ID",
                                  cause: cause)
        case "AccessDenied":
            let message = "the S3 store denied access to bucket \(configuration.bucket) (AccessDenied) — check the key's permissions"
            return BlobStoreError(.misconfigured, message, cause: cause)
        case "AuthorizationHeaderMalformed", "RequestTimeTooSkewed":
            return BlobStoreError(.misconfigured, "the S3 store refused the request (\(code)) — check --s3-region and this machine's clock", cause: cause)
        default:
            if response.status == .serviceUnavailable || response.status == .internalServerError {
                return BlobStoreError(.unavailable, "the S3 store could not \(action) (\(code)); try again", cause: cause)
            }
            return BlobStoreError(.io, "the S3 store would not \(action) (\(code))", cause: cause.isEmpty ? nil : cause)
        }
    }

    /// An RFC 1123 date (`Last-Modified`).
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
