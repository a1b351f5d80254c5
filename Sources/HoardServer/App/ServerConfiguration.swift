import Foundation
import HoardCore
import HoardRepository
import Logging

/// Everything `hoard serve` can be told, with the defaults a home server wants.
public struct ServerConfiguration: Sendable {
    /// The data directory.
    public var dataDirectory: String
    /// Kinds, conventions, rewriters, generators and processors imports use (`hoard serve` adds generated LODs).
    public var registry: PluginRegistry = .builtIn()
    /// The Hoard to serve when it is not the data directory's own files (a blob store in S3, opened by the command
    /// line); nil opens ``dataDirectory`` with ``registry``.
    public var hoard: Hoard?
    /// Address to bind.
    public var host: String = "127.0.0.1"
    /// Whether the server is offered to the local network (`hoard serve --lan`, which also binds every address): its
    /// LAN URLs are listed by `GET /v1/server`, and it is announced by DNS-SD as `_hoard._tcp`.
    public var isLAN = false
    /// Whether a LAN server registers its DNS-SD record (tests that need no responder turn it off).
    public var announcesByDNSSD = true
    /// The server's name for people (`GET /v1/server`, DNS-SD); nil: "Hoard on" and the machine's host name.
    public var serverName: String?
    /// Called once the server listens, with who it is and where (what `hoard serve` prints).
    public var onServing: (@Sendable (ServerIdentity) -> Void)?
    /// Port to bind (0 picks a free one).
    public var port: Int = 8080
    /// Connections the system queues before the server accepts them (capped by `net.core.somaxconn`). Hummingbird's
    /// 256 was too few for 200 players joining at once, each on several connections: the system dropped the
    /// overflow, and those clients waited out SYN retries (over a minute) and gave up.
    public var backlog: Int = 4096
    /// Bytes of hot blobs kept in memory.
    public var cacheBytes: Int = 256 << 20
    /// Largest blob kept in memory.
    public var cacheMaxBlob: Int = 4 << 20
    /// Smallest hot blob sent with `sendfile` from its open, verified file rather than copied from memory; nil
    /// sends every hot blob from memory. Below about 256 KiB the copy is cheaper than the extra system calls.
    public var sendFileFrom: Int? = 256 << 10
    /// Largest blob accepted by PUT.
    public var maxBlobUpload: Int64 = 64 << 20
    /// Largest archive accepted by POST /v1/packs.
    public var maxPackUpload: Int64 = 4 << 30
    /// Most digests in one batch or missing request.
    public var maxBatchCount: Int = 1000
    /// Most digests in one missing-blobs request.
    public var maxMissingCount: Int = 10_000
    /// Uploads (blobs and packs) one group may start per minute; also what one session's participants may start
    /// together.
    public var uploadsPerMinute: Int = 600
    /// Uploads one participant may start per minute.
    public var uploadsPerParticipant: Int = 60
    /// Joins one session may take per minute.
    public var joinsPerSession: Int = 60
    /// Most participants one session holds.
    public var maxParticipants: Int = 500
    /// The length of the windows those per-minute limits count in, in seconds (tests lengthen it).
    public var limitWindowSeconds: Double = 60
    /// How often the access index reads the catalog's change log for other processes' changes (one indexed query);
    /// nil: every 250 ms, or every second when the catalog also sends notices of them (PostgreSQL).
    public var refreshInterval: Duration?
    /// How long a grab stays leased to the server that granted it without being renewed: a grab held through a
    /// server that died is released this long after, at most (plus ``grabRenewal``).
    public var grabLease: Duration = .seconds(15)
    /// How long someone who left a table stays listed there as away before they leave the list (and the page's "send
    /// to" menu): a dropped phone that comes back within it finds the table as it left it.
    public var awayGrace: Duration = .seconds(60)
    /// The server's clock, which stamps the jukebox's ops and answers the live channel's `time` messages; tests move it.
    public var clock: @Sendable () -> Date = { Date() }
    /// How often a server renews its grab leases and releases the grabs whose lease ended.
    public var grabRenewal: Duration = .seconds(5)
    /// How often the access index compares itself with the catalog in the background.
    public var accessCheckInterval: Duration = .seconds(600)
    /// Most blobs whose owners the access index keeps in memory (234 bytes each, measured); others are looked up.
    public var accessCacheEntries: Int = 262_144
    /// On shutdown, how long live sockets have to answer their close frame before their connections are aborted.
    public var liveCloseDeadline: Duration = .seconds(5)
    /// Where `/metrics` is served alone, without a token (a Prometheus scraper on a private interface); on the API
    /// address it then answers 404. Nil serves `/metrics` on the API address, to admin tokens only.
    public var metricsAddress: (host: String, port: Int)?
    /// Log level.
    public var logLevel: Logger.Level = .info
    /// Network threads (NIO event loops); nil for one per core.
    public var networkThreads: Int?
    /// Whether hot blobs are answered on the network thread, before the router (``BlobFastPath``). Off only to
    /// compare the two paths.
    public var hasBlobFastPath = true
    /// Largest picture accepted by POST /v1/uploads (held in memory while it is checked and cleaned).
    public var maxPictureUpload: Int = 16 << 20
    /// Time limits on reading requests and caps on connections (``ConnectionLimits``).
    public var limits = ConnectionLimits()
    /// Wrong join codes one address may send a minute before it is answered 429 (a code has 40 bits: at this rate
    /// one address guesses one in 2^40 in a hundred thousand years).
    public var failedJoinsPerMinute: Int = 10
    /// The reverse proxies whose `X-Forwarded-For` is believed (``TrustedProxies``); none by default.
    public var trustedProxies = TrustedProxies()
    /// How often live sockets are pinged; one that has not answered a ping when the next is due is closed.
    public var webSocketPingInterval: Duration = .seconds(10)
    /// The TLS certificate and key served; nil serves plain HTTP. Under TLS hot blobs are sent from memory
    /// (``sendFileFrom`` does not apply: `sendfile` would bypass the encryption).
    public var certificates: CertificateStore?
    /// How often the TLS files are checked for a renewed certificate; nil reloads on SIGHUP only.
    public var certificateCheckInterval: Duration? = .seconds(60)
    /// What cleans uploaded pictures before they are stored (the metadata-stripping hook).
    public var uploadSanitizer: any UploadSanitizer = RewrittenUpload()
    /// Threads that make the rendition queue's pictures (generated LODs, previews, thumbnails), at a lower CPU priority:
    /// nil for one fewer than the cores (at least one), 0 for none (another process sharing the catalog makes them).
    public var renderWorkers: Int?
    /// How long a rendition job stays leased to a worker that stopped renewing it (one that died): it is taken again
    /// after that. Renewed every third of it.
    public var renderLease: Duration = .seconds(60)
    /// The render workers' nice value (0 to 19): generation yields the CPU to serving.
    public var renderNiceness: Int32 = 10
    /// The nice value of a pack upload's import threads (reading, hashing, checking): an import yields the CPU to the
    /// live tables and blob reads; nil runs it at the server's own priority.
    public var importNiceness: Int32? = 5

    /// A configuration for a data directory, every other value at its default.
    public init(dataDirectory: String) {
        self.dataDirectory = dataDirectory
    }
}
