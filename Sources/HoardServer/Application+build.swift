import Foundation
import HoardCore
import HoardImport
import Hummingbird
import Logging
import NIOCore

/// Builds the whole Hoard HTTP application for a configuration: what `hoard serve` runs and what the tests drive.
public func buildApplication(_ configuration: ServerConfiguration, logger: Logger? = nil) async throws -> some ApplicationProtocol {
    let logger: Logger = {
        var logger = logger ?? Logger(label: "hoard")
        logger.logLevel = configuration.logLevel
        return logger
    }()
    let hoard = try Hoard(dataDirectory: configuration.dataDirectory)
    let access = try AccessIndex(catalog: hoard.catalog)
    let metrics = ServerMetrics()
    let cache = BlobCache(capacity: configuration.cacheBytes, maxEntry: configuration.cacheMaxBlob)
    let reader = BlobReader(store: hoard.store, cache: cache, metrics: metrics)
    let limiter = RateLimiter(perMinute: configuration.uploadsPerMinute)

    let router = Router(context: HoardRequestContext.self)
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: AuthMiddleware(access: access))
    router.get("healthz") { _, _ in try JSONBody.response(["status": "ok"]) }
    router.get("metrics") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer())))
    }
    router.get("/") { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: "Hoard is running. The API is under /v1 (see Schemas/openapi.yaml): /v1/packs, /v1/assets, /v1/blobs.\n")))
    }
    PackRoutes(hoard: hoard, access: access, limits: limiter, metrics: metrics, configuration: configuration).register(on: router)
    AssetRoutes(hoard: hoard, access: access, reader: reader).register(on: router)
    BlobRoutes(hoard: hoard, access: access, reader: reader, limits: limiter, configuration: configuration).register(on: router)

    let refresher = AccessRefreshService(index: access, logger: logger, interval: configuration.refreshInterval)
    let app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Hoard"),
        services: [refresher],
        onServerRunning: { channel in
            logger.info("Hoard is serving", metadata: [
                "url": "http://\(configuration.host):\(channel.localAddress?.port ?? configuration.port)",
                "dataDirectory": "\(configuration.dataDirectory)",
            ])
        },
        logger: logger
    )
    return app
}
