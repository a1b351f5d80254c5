import Foundation
import HoardCore
import HoardDiscovery
import HoardRepository
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// Builds the whole Hoard HTTP application for a configuration: what `hoard serve` runs and what the tests drive.
public func buildApplication(_ configuration: ServerConfiguration, logger: Logger? = nil) async throws -> some ApplicationProtocol {
    let logger: Logger = {
        var logger = logger ?? Logger(label: "hoard")
        logger.logLevel = configuration.logLevel
        return logger
    }()
    let hoard = try configuration.hoard ?? Hoard(dataDirectory: configuration.dataDirectory, registry: configuration.registry)
    let access = try AccessIndex(catalog: hoard.catalog, cacheEntries: configuration.accessCacheEntries)
    let metrics = ServerMetrics()
    let cache = BlobCache(
        capacity: configuration.cacheBytes, maxEntry: configuration.cacheMaxBlob,
        minFileSize: configuration.certificates == nil ? configuration.sendFileFrom : nil)
    let reader = BlobReader(hoard: hoard, cache: cache, metrics: metrics)
    let limiter = RateLimiter(
        perMinute: configuration.uploadsPerMinute, perParticipant: configuration.uploadsPerParticipant,
        joinsPerSession: configuration.joinsPerSession, windowSeconds: configuration.limitWindowSeconds)

    let hub = SessionHub(
        catalog: hoard.catalog, storage: StoredTables(hoard: hoard), access: access, logger: logger, grabLease: configuration.grabLease,
        awayGrace: configuration.awayGrace, clock: configuration.clock,
        appendTimed: { [histogram = metrics.eventAppend] in histogram.record($0) })
    // A participant removed, a session ended or a session made through another server sharing the catalog: its sockets
    // close here too, and its table is loaded here so that its players may fetch its art through this server.
    access.onSessionChanges { changes in Task { await hub.follow(changes) } }
    // Every table is loaded before the server answers, so what each participant may fetch is known from the first
    // request on (a participant who reconnects after a restart is not told 404 for their table's art meanwhile).
    await hub.loadAll()
    let identity = ServerIdentity(configuration: configuration)
    // The rendition queue's workers: imports commit at once and leave their generated pictures to them.
    let renditions = RenditionService(hoard: hoard, configuration: configuration, access: access, metrics: metrics, logger: logger)
    let announcer = configuration.isLAN && configuration.announcesByDNSSD ? LANAnnouncer(identity: identity, logger: logger) : nil
    let (router, _) = buildRouter(
        hoard: hoard, access: access, metrics: metrics, reader: reader, limiter: limiter, hub: hub, configuration: configuration,
        identity: identity, renditions: renditions)
    // Replicas sharing the catalog apply each other's session events as they commit.
    let follower = hoard.catalog.sessionEventFeed.map { SessionFollowService(feed: $0, hub: hub) as any Service }
    let leases = LeaseService(catalog: hoard.catalog, hub: hub, logger: logger, interval: configuration.grabRenewal)
    let refresher = AccessRefreshService(
        index: access, logger: logger, feed: hoard.catalog.accessChangeFeed, interval: configuration.refreshInterval,
        checkInterval: configuration.accessCheckInterval)
    let serverName = "Hoard"
    let hasFastPath = configuration.hasBlobFastPath
    let webSocketResponder = router.buildResponder()
    let channel = HTTP1WebSocketUpgradeChannel.Configuration(
        http1: .init(additionalChannelHandlers: hasFastPath ? [ResponseTracker()] : []),
        ws: .init(
            maxFrameSize: LiveRoutes.maxMessage, autoPing: .enabled(timePeriod: configuration.webSocketPingInterval), closeTimeout: LiveRoutes.closeTimeout,
            validateUTF8: true))
    let upgradeCheck = UpgradeAnswerer.liveCheck(access: access, catalog: hoard.catalog)
    let connections = ConnectionCount(limits: configuration.limits, proxies: configuration.trustedProxies, logger: logger)
    let server = HTTPServerBuilder { responder -> any ServerChildChannel in
        let inner = HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: channel)
        func guarded(_ inner: some ServerChildChannel) -> any ServerChildChannel {
            GuardedChildChannel(
                inner: BadRequestAnsweringChildChannel(inner: UpgradeAnsweringChildChannel(inner: inner, check: upgradeCheck)),
                limits: configuration.limits, count: connections, certificates: configuration.certificates, logger: logger)
        }
        guard hasFastPath else { return guarded(inner) }
        return guarded(FastPathChildChannel(inner: inner) {
            BlobFastPath(access: access, cache: cache, metrics: metrics, serverName: serverName)
        })
    }
    let reloader = configuration.certificates.map {
        CertificateReloadService(store: $0, interval: configuration.certificateCheckInterval, logger: logger) as any Service
    }
    let app = Application(
        router: router,
        server: server,
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: serverName, backlog: configuration.backlog),
        services: [refresher, leases, renditions] + (follower.map { [$0] } ?? []) + metricsService(configuration, metrics: metrics, logger: logger)
            + (reloader.map { [$0] } ?? []) + (announcer.map { [$0] } ?? []),
        onServerRunning: { channel in
            identity.port = channel.localAddress?.port ?? configuration.port
            logger.info("Hoard is serving", metadata: [
                "url": "\(LANAddress.url(scheme: configuration.certificates == nil ? "http" : "https", host: configuration.host, port: identity.port))",
                "dataDirectory": "\(configuration.dataDirectory)",
            ])
            announcer?.announce()
            configuration.onServing?(identity)
        },
        eventLoopGroupProvider: configuration.networkThreads.map { .shared(MultiThreadedEventLoopGroup(numberOfThreads: $0)) } ?? .singleton,
        logger: logger
    )
    return app
}

/// The server of `/metrics` alone on ``ServerConfiguration/metricsAddress``, without a token; none when it is nil.
private func metricsService(_ configuration: ServerConfiguration, metrics: ServerMetrics, logger: Logger) -> [any Service] {
    guard let address = configuration.metricsAddress else { return [] }
    let router = Router()
    router.get("/metrics") { _, _ in metrics.response() }
    return [
        Application(
            router: router, configuration: .init(address: .hostname(address.host, port: address.port), serverName: "Hoard"),
            onServerRunning: { channel in
                logger.info("Hoard serves its metrics", metadata: [
                    "url": "\(LANAddress.url(scheme: "http", host: address.host, port: channel.localAddress?.port ?? address.port))/metrics"
                ])
            }, logger: logger)
    ]
}

/// The router with every middleware and route, and the list of operations it serves.
func buildRouter(
    hoard: Hoard, access: AccessIndex, metrics: ServerMetrics, reader: BlobReader, limiter: RateLimiter, hub: SessionHub,
    configuration: ServerConfiguration, identity: ServerIdentity, renditions: RenditionService? = nil
) -> (Router<HoardRequestContext>, [Endpoints.Operation]) {
    let router = Router(context: HoardRequestContext.self)
    let endpoints = Endpoints(router: router)
    router.add(middleware: HoardMiddleware(access: access, metrics: metrics, endpoints: endpoints))
    router.add(middleware: FailedJoins(perMinute: configuration.failedJoinsPerMinute, limiter: limiter, proxies: configuration.trustedProxies))
    endpoints.on(.get, "/healthz") { _, _ in try JSONBody.response(["status": "ok"]) }
    // Who this server is and its LAN URLs: what the page builds invite links from (no token: it names no data).
    endpoints.on(.get, "/v1/server") { _, _ in try JSONBody.response(identity.answer()) }
    let hasMetricsAddress = configuration.metricsAddress != nil
    endpoints.on(.get, "/metrics") { request, context in
        // Request counts and paths tell an outsider how busy the server is and what it serves.
        guard !hasMetricsAddress else { throw APIError.notFound("no such resource: GET \(request.uri.path)") }
        guard try context.requireMember().isAdmin else { throw APIError.forbidden("metrics need an admin token") }
        return metrics.response()
    }
    WebRoutes().register(on: endpoints)
    PackRoutes(
        hoard: hoard, access: access, limits: limiter, metrics: metrics, configuration: configuration, renditions: renditions
    ).register(on: endpoints)
    AssetRoutes(hoard: hoard, access: access, reader: reader).register(on: endpoints)
    BlobRoutes(hoard: hoard, access: access, reader: reader, limits: limiter, configuration: configuration).register(on: endpoints)
    let manifests = BlobCache(capacity: configuration.cacheBytes / 4, maxEntry: configuration.cacheBytes / 16)
    SessionRoutes(
        hoard: hoard, access: access, hub: hub, reader: reader, manifests: manifests, limits: limiter,
        maxParticipants: configuration.maxParticipants).register(on: endpoints)
    var live = LiveRoutes(hoard: hoard, access: access, hub: hub, closeDeadline: configuration.liveCloseDeadline)
    live.opTimed = { [histogram = metrics.liveOp] in histogram.record($0) }
    live.register(on: endpoints)
    UploadRoutes(hoard: hoard, access: access, reader: reader, limits: limiter, configuration: configuration, hub: hub).register(on: endpoints)
    RefRoutes(hoard: hoard, access: access).register(on: endpoints)
    ShareRoutes(hoard: hoard, access: access, reader: reader).register(on: endpoints)
    GroupRoutes(hoard: hoard, access: access).register(on: endpoints)
    MemberRoutes(hoard: hoard, access: access).register(on: endpoints)
    return (router, endpoints.operations)
}

/// Every operation the server serves, in OpenAPI path form (for the test that checks Schemas/openapi.yaml).
public func apiOperations(dataDirectory: String) throws -> [Endpoints.Operation] {
    let hoard = try Hoard(dataDirectory: dataDirectory)
    let access = try AccessIndex(catalog: hoard.catalog)
    let metrics = ServerMetrics()
    let cache = BlobCache(capacity: 0, maxEntry: 0)
    let (_, operations) = buildRouter(
        hoard: hoard, access: access, metrics: metrics,
        reader: BlobReader(hoard: hoard, cache: cache, metrics: metrics), limiter: RateLimiter(perMinute: 1, perParticipant: 1, joinsPerSession: 1),
        hub: SessionHub(catalog: hoard.catalog, storage: StoredTables(hoard: hoard), access: access, logger: Logger(label: "hoard")),
        configuration: ServerConfiguration(dataDirectory: dataDirectory),
        identity: ServerIdentity(configuration: ServerConfiguration(dataDirectory: dataDirectory)))
    return operations
}
