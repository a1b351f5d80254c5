import Hummingbird
import Prometheus

/// The server's Prometheus metrics, in a registry of its own (no process-wide bootstrap, so tests can run many servers).
public struct ServerMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry = PrometheusCollectorRegistry()
    let bytesServed: Counter
    let cacheHits: Counter
    let cacheMisses: Counter
    /// Blob responses ``BlobFastPath`` answered on the network thread.
    let fastPathAnswers: Counter
    let latency: DurationHistogram
    /// How long a session event's catalog write took (the live table's ops wait for it).
    let eventAppend: DurationHistogram
    /// How long an op took from its message to its event queued on every socket.
    let liveOp: DurationHistogram
    /// Counters of the statuses blob reads answer with, by status, made once so the hot path makes nothing.
    private let gets: [Int: Counter]
    private let heads: [Int: Counter]

    /// The registry rendered as Prometheus text.
    func response() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }

    private static func name(_ metric: String, unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "hoard", metricName: metric, unitName: unit, helpText: help)
    }

    init() {
        bytesServed = registry.makeCounter(descriptor: Self.name("blob_served", unit: "bytes_total", "Blob bytes sent in responses."))
        cacheHits = registry.makeCounter(descriptor: Self.name("blob_cache_hits", unit: "total", "Blob reads served from memory."))
        cacheMisses = registry.makeCounter(descriptor: Self.name("blob_cache_misses", unit: "total", "Blob reads that went to disk."))
        fastPathAnswers = registry.makeCounter(
            descriptor: Self.name("blob_fast_path", unit: "total", "Hot-blob responses answered before the router."))
        latency = registry.makeDurationHistogram(
            descriptor: Self.name("http_request_duration", unit: "seconds", "Time to produce a response head."),
            buckets: [.microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100),
                      .milliseconds(500), .seconds(2), .seconds(10)])
        eventAppend = registry.makeDurationHistogram(
            descriptor: Self.name("session_event_append_duration", unit: "seconds", "Time to log one session event in the catalog."),
            buckets: [.microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                      .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                      .seconds(5)])
        liveOp = registry.makeDurationHistogram(
            descriptor: Self.name("live_op_duration", unit: "seconds", "Time from an op's message to its event queued on every socket."),
            buckets: [.microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                      .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                      .seconds(5)])
        let statuses = [200, 206, 304, 404]
        gets = Dictionary(uniqueKeysWithValues: statuses.map { [registry] in ($0, Self.makeRequests(registry, method: "GET", status: $0)) })
        heads = Dictionary(uniqueKeysWithValues: statuses.map { [registry] in ($0, Self.makeRequests(registry, method: "HEAD", status: $0)) })
    }

    func requests(method: String, status: Int) -> Counter {
        if method == "GET", let counter = gets[status] { return counter }
        if method == "HEAD", let counter = heads[status] { return counter }
        return Self.makeRequests(registry, method: method, status: status)
    }

    private static func makeRequests(_ registry: PrometheusCollectorRegistry, method: String, status: Int) -> Counter {
        registry.makeCounter(
            descriptor: Self.name("http_requests", unit: "total", "HTTP requests by method and status."),
            labels: [("method", method), ("status", String(status))])
    }

    /// Counts one request and its latency.
    func record(method: String, status: Int, since start: ContinuousClock.Instant) {
        requests(method: method, status: status).increment()
        latency.record(ContinuousClock.now - start)
    }

    /// Rendition jobs this server finished, by outcome (`done`, `failed`, `retried`).
    func renditionJobs(outcome: String) -> Counter {
        registry.makeCounter(
            descriptor: Self.name("rendition_jobs", unit: "total", "Rendition jobs this server took, by outcome."), labels: [("outcome", outcome)])
    }

    func imports(outcome: String) -> Counter {
        registry.makeCounter(descriptor: Self.name("imports", unit: "total", "Pack imports by outcome."), labels: [("outcome", outcome)])
    }
}
