import Foundation
import HoardStore

/// Where an S3 blob store keeps its blobs and how it talks to the service: what `--blob-store s3://BUCKET[/PREFIX]`,
/// `--s3-endpoint`, `--s3-region` and the `AWS_*` variables become.
public struct S3Configuration: Sendable {
    /// The service's base URL, e.g. `http://127.0.0.1:9000`; requests go to `ENDPOINT/BUCKET/KEY` (path style).
    public var endpoint: URL
    /// The signing region.
    public var region: String
    /// The bucket, made if missing.
    public var bucket: String
    /// A key prefix without leading or trailing slash; empty for the bucket's root.
    public var prefix: String
    /// Who signs.
    public var credentials: S3Credentials
    /// The local folder for staging areas (blobs are staged and hashed locally before they are uploaded).
    public var stagingDirectory: String
    /// Blobs larger than this go up in parts (64 MiB by default).
    public var multipartThreshold: Int64 = 64 << 20
    /// The size of each part but the last (16 MiB by default; S3 wants at least 5 MiB).
    public var partSize: Int = 16 << 20
    /// Keys asked for per listing page (S3's maximum, 1,000, by default).
    public var listPageSize: Int = 1000
    /// A publish of at least this many blobs lists the bucket where their keys fall and uploads those it shows absent
    /// without looking each up first; a listing page that answers for fewer ends the listing (``S3BlobStore``).
    public var listingMinimum: Int = 64
    /// Uploads or lookups run at once during a publish (each upload holds its blob in memory, up to
    /// ``multipartThreshold``).
    public var concurrency: Int = 4
    /// Uploads or lookups run at once during a publish whose blobs are all at most ``smallBlob`` bytes: an import's
    /// pictures, where the wait for each request, not memory, bounds the pace (at most 16 × 4 MiB held).
    public var smallBlobConcurrency: Int = 16
    /// The largest blob a publish counts as small.
    public var smallBlob: Int64 = 4 << 20
    /// A blob modified (published or touched) more recently than this is not refreshed again by a publish or a touch:
    /// each refresh is a server-side copy. Keep it well below garbage collection's grace period (an hour by default).
    public var refreshInterval: TimeInterval = 300

    /// S3's smallest part but the last.
    public static let minimumPartSize = 5 << 20

    /// A configuration from its parts. `endpoint` defaults to AWS's `https://s3.REGION.amazonaws.com`, `region` to
    /// `us-east-1`, `credentials` to `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`. Throws a ``BlobStoreError`` naming
    /// what to fix when `location` is not `s3://BUCKET[/PREFIX]`, the endpoint is not an http(s) URL, or there are no
    /// credentials.
    public init(location: String, endpoint: String? = nil, region: String? = nil, credentials: S3Credentials? = nil,
                stagingDirectory: String) throws {
        guard location.hasPrefix("s3://") else {
            throw BlobStoreError(.misconfigured, "the blob store \(location) is not s3://BUCKET[/PREFIX]")
        }
        let path = location.dropFirst("s3://".count)
        let bucket = String(path.prefix { $0 != "/" })
        guard Self.isValidBucketName(bucket) else {
            throw BlobStoreError(.misconfigured, "\"\(bucket)\" in \(location) is not a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens, "
                + "starting and ending with a letter or digit")
        }
        let prefix = path.dropFirst(bucket.count).split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        let region = region ?? "us-east-1"
        guard !region.isEmpty, region.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw BlobStoreError(.misconfigured, "the S3 region \"\(region)\" is not a region name such as us-east-1")
        }
        let endpointText = endpoint ?? "https://s3.\(region).amazonaws.com"
        guard let url = URL(string: endpointText), url.scheme == "http" || url.scheme == "https", url.host?.isEmpty == false else {
            throw BlobStoreError(.misconfigured, "the S3 endpoint \"\(endpointText)\" is not an http:// or https:// URL")
        }
        guard let credentials = credentials ?? S3Credentials.fromEnvironment() else {
            throw BlobStoreError(.misconfigured, "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        self.endpoint = url
        self.region = region
        self.bucket = bucket
        self.prefix = prefix
        self.credentials = credentials
        self.stagingDirectory = stagingDirectory
    }

    /// `scheme://host[:port]`, what every request's path is appended to.
    var endpointBase: String {
        "\(endpoint.scheme ?? "https")://\(endpoint.host ?? "")" + (endpoint.port.map { ":\($0)" } ?? "")
    }

    /// S3's rules for a bucket name usable in path-style URLs.
    static func isValidBucketName(_ name: String) -> Bool {
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D }
        let endsOK = [name.utf8.first, name.utf8.last].allSatisfy { $0.map { $0 != 0x2E && $0 != 0x2D } ?? false }
        return (3...63).contains(name.utf8.count) && allowed && endsOK && !name.contains("..")
    }

    /// Throws when the sizes cannot work (parts below S3's minimum, a threshold below one part).
    func validateSizes() throws {
        guard partSize >= Self.minimumPartSize else {
            throw BlobStoreError(.misconfigured, "the S3 part size \(partSize) is below S3's minimum of 5 MiB")
        }
        guard multipartThreshold >= Int64(partSize), listPageSize > 0, concurrency > 0 else {
            throw BlobStoreError(.misconfigured, "the S3 multipart threshold must be at least one part, the page size and concurrency at least 1")
        }
    }
}
