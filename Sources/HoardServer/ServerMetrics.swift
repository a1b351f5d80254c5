import Hummingbird
import Prometheus

/// The server's Prometheus metrics, in a registry of its own (no process-wide bootstrap, so tests can run many servers).
public struct ServerMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry = PrometheusCollectorRegistry()
    let bytesServed: Counter
    let cacheHits: Counter
    let cacheMisses: Counter
    let latency: DurationHistogram

    private static func name(_ metric: String, unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "hoard", metricName: metric, unitName: unit, helpText: help)
    }

    init() {
        bytesServed = registry.makeCounter(descriptor: Self.name("blob_served", unit: "bytes_total", "Blob bytes sent in responses."))
        cacheHits = registry.makeCounter(descriptor: Self.name("blob_cache_hits", unit: "total", "Blob reads served from memory."))
        cacheMisses = registry.makeCounter(descriptor: Self.name("blob_cache_misses", unit: "total", "Blob reads that went to disk."))
        latency = registry.makeDurationHistogram(
            descriptor: Self.name("http_request_duration", unit: "seconds", "Time to produce a response head."),
            buckets: [.microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100),
                      .milliseconds(500), .seconds(2), .seconds(10)])
    }

    func requests(method: String, status: Int) -> Counter {
        registry.makeCounter(
            descriptor: Self.name("http_requests", unit: "total", "HTTP requests by method and status."),
            labels: [("method", method), ("status", String(status))])
    }

    func imports(outcome: String) -> Counter {
        registry.makeCounter(descriptor: Self.name("imports", unit: "total", "Pack imports by outcome."), labels: [("outcome", outcome)])
    }
}

/// Counts every request and its latency.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metrics.requests(method: request.method.rawValue, status: response.status.code).increment()
            metrics.latency.record(ContinuousClock.now - start)
            return response
        } catch let error as HTTPResponseError {
            metrics.requests(method: request.method.rawValue, status: error.status.code).increment()
            metrics.latency.record(ContinuousClock.now - start)
            throw error
        }
    }
}
