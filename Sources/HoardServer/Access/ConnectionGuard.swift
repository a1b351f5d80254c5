import Foundation
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The time and connection limits of `hoard serve`: what keeps a client that opens many connections, or sends
/// slowly, from holding the server's descriptors and memory. The defaults suit a server on the Internet.
public struct ConnectionLimits: Sendable {
    /// How long a request's head may take to arrive: from the connection's start for its first request (a TLS
    /// handshake included), from the head's first byte for later ones.
    public var headTimeout: Duration = .seconds(10)
    /// How long a kept-alive connection may wait for its next request.
    public var idleTimeout: Duration = .seconds(60)
    /// Fewest bytes a second a request body must arrive at, over each ``bodyRateWindow`` in which the server waits
    /// for it; 0 for no minimum.
    public var minBodyRate: Int = 1024
    /// The span the body rate is measured over.
    public var bodyRateWindow: Duration = .seconds(10)
    /// How long a WebSocket upgrade may take, from its request's head to the `101` answer.
    public var webSocketHandshakeTimeout: Duration = .seconds(10)
    /// Connections open at once, all addresses together; nil for the descriptor limit less a reserve
    /// (``defaultMaxConnections(descriptorLimit:)``).
    public var maxConnections: Int?
    /// Connections open at once from one IP address.
    public var maxConnectionsPerAddress: Int = 1024

    public init() {}

    /// The cap on connections for a process that may open `descriptorLimit` descriptors: a quarter of them, at most
    /// 1,024, stay for blob files, the catalog and the live channel's work.
    public static func defaultMaxConnections(descriptorLimit: Int) -> Int {
        max(1, descriptorLimit - min(descriptorLimit / 4, 1024))
    }

    /// The process's descriptor limit (`RLIMIT_NOFILE`, soft).
    public static var descriptorLimit: Int {
        var limit = rlimit()
        guard getrlimit(descriptorResource, &limit) == 0 else { return 1024 }
        return Int(min(limit.rlim_cur, rlim_t(Int32.max)))
    }

    #if os(Linux)
    private static let descriptorResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let descriptorResource = RLIMIT_NOFILE
    #endif
}

/// Open connections by address and in all, shared by every connection of a server: refuses what is over
/// ``ConnectionLimits`` (a trusted proxy's connections count in all only), and says so in the log at most once per
/// ``logInterval``, with how many it refused since.
final class ConnectionCount: Sendable {
    let maxTotal: Int
    let maxPerAddress: Int
    let proxies: TrustedProxies
    let logger: Logger
    static let logInterval: Duration = .seconds(10)

    private struct State {
        var total = 0
        var byAddress: [String: Int] = [:]
        var refused = 0
        var lastLog: ContinuousClock.Instant?
    }

    private let state = NIOLockedValueBox(State())

    init(limits: ConnectionLimits, proxies: TrustedProxies = TrustedProxies(), logger: Logger) {
        maxTotal = limits.maxConnections ?? ConnectionLimits.defaultMaxConnections(descriptorLimit: ConnectionLimits.descriptorLimit)
        maxPerAddress = limits.maxConnectionsPerAddress
        self.proxies = proxies
        self.logger = logger
    }

    /// Counts a connection from `address`; false (and nothing counted) when it would pass a cap.
    func admit(_ address: String) -> Bool {
        let maxPerAddress = proxies.contains(address) ? Int.max : maxPerAddress
        let (admitted, message): (Bool, String?) = state.withLockedValue { state in
            let fromAddress = state.byAddress[address, default: 0]
            let reason: String
            if state.total >= maxTotal {
                reason = "\(state.total) connections are open, the most allowed (--max-connections \(maxTotal))"
            } else if fromAddress >= maxPerAddress {
                reason = "\(address) has \(fromAddress) connections open, the most one address may (--max-connections-per-address \(maxPerAddress))"
            } else {
                state.total += 1
                state.byAddress[address] = fromAddress + 1
                return (true, nil)
            }
            state.refused += 1
            let now = ContinuousClock.now
            guard state.lastLog.map({ now - $0 >= Self.logInterval }) ?? true else { return (false, nil) }
            defer {
                state.lastLog = now
                state.refused = 0
            }
            return (false, "refusing new connections: \(reason); \(state.refused) refused since the last such line")
        }
        if let message { logger.warning("\(message)") }
        return admitted
    }

    /// Uncounts a connection ``admit(_:)`` counted.
    func release(_ address: String) {
        state.withLockedValue { state in
            state.total -= 1
            let left = state.byAddress[address, default: 1] - 1
            state.byAddress[address] = left > 0 ? left : nil
        }
    }

    /// Connections open now (for tests).
    var open: Int { state.withLockedValue { $0.total } }
}

/// The first handler of every connection (after TLS): admits it under ``ConnectionCount``'s caps and closes it when
/// it is too slow — a request head not read within ``ConnectionLimits/headTimeout``, a kept-alive connection idle past
/// ``ConnectionLimits/idleTimeout``, a body arriving slower than ``ConnectionLimits/minBodyRate``, a WebSocket
/// upgrade not answered within ``ConnectionLimits/webSocketHandshakeTimeout``. Once upgraded, a WebSocket is left to
/// its own pings.
///
/// It reads no HTTP itself: the handlers that do tell it where each request is with ``Progress`` events, sent
/// outbound (``BlobFastPath`` for what it answers, ``BadRequestAnswerer`` after NIO's decoder, ``ClientFrameGuard``
/// for the upgrade). One timer per connection, at most ``ConnectionLimits``' shortest span ahead, so a state change
/// never has to move it.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Where the connection's requests are, as the handlers behind the guard see them.
    enum Progress: Sendable {
        /// A request's head was read; its body, if any, follows until ``requestRead``.
        case headRead
        /// A request was read to its end.
        case requestRead
        /// A response was written to its end.
        case responseEnded
        /// A request without a body was read and its whole response written (the fast path).
        case served
        /// The request just read asks for a WebSocket.
        case upgradeRequested
        /// The WebSocket upgrade was answered `101`: HTTP is over on this connection.
        case upgraded
    }

    private let limits: ConnectionLimits
    private let count: ConnectionCount
    private let logger: Logger
    /// The shortest span of ``limits``: the timer is never set further ahead.
    private let tick: TimeAmount
    /// The address counted by ``count``, once admitted.
    private var address: String?
    /// Requests whose head was read and whose response has not ended.
    private var inFlight = 0
    private var isReadingBody = false
    /// When the head being read started (nil when none is awaited).
    private var headSince: NIODeadline?
    /// When the connection last became idle between requests.
    private var idleSince: NIODeadline?
    /// The body rate's current window: when it started and the bytes since.
    private var bodyWindow = (start: NIODeadline.uptimeNanoseconds(0), bytes: 0)
    private var handshakeSince: NIODeadline?
    private var isWebSocket = false
    /// A read was asked for and no bytes came yet: the server is waiting for the client.
    private var isReadPending = false
    /// When the last bytes came (the clock read once per read).
    private var lastRead = NIODeadline.now()
    private var timer: Scheduled<Void>?

    init(limits: ConnectionLimits, count: ConnectionCount, logger: Logger) {
        self.limits = limits
        self.count = count
        self.logger = logger
        let spans = [limits.headTimeout, limits.idleTimeout, limits.webSocketHandshakeTimeout]
            + (limits.minBodyRate > 0 ? [limits.bodyRateWindow] : [])
        tick = TimeAmount(spans.min() ?? .seconds(1))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard address == nil else { return }
        let address = context.channel.remoteAddress?.ipAddress ?? "local"
        guard count.admit(address) else {
            context.close(promise: nil)
            return
        }
        self.address = address
        headSince = .now()
        arm(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func stop() {
        timer?.cancel()
        timer = nil
        if let address { count.release(address) }
        address = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        isReadPending = false
        if !isWebSocket {
            lastRead = .now()
            if isReadingBody {
                bodyWindow.bytes += unwrapInboundIn(data).readableBytes
            } else if headSince == nil, inFlight == 0 {
                headSince = lastRead
                idleSince = nil
                arm(context: context)
            }
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        isReadPending = true
        context.read()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let progress = event as? Progress else { return context.triggerUserOutboundEvent(event, promise: promise) }
        promise?.succeed()
        switch progress {
        case .headRead:
            headSince = nil
            idleSince = nil
            inFlight += 1
            isReadingBody = true
            bodyWindow = (lastRead, 0)
        case .requestRead:
            isReadingBody = false
        case .responseEnded:
            inFlight = max(0, inFlight - 1)
            becomeIdleIfDone(at: .now())
        case .served:
            headSince = nil
            becomeIdleIfDone(at: lastRead)
        case .upgradeRequested:
            isReadingBody = false
            handshakeSince = .now()
        case .upgraded:
            isWebSocket = true
            headSince = nil
            idleSince = nil
            handshakeSince = nil
            timer?.cancel()
            timer = nil
        }
        arm(context: context)
    }

    private func becomeIdleIfDone(at now: NIODeadline) {
        if inFlight == 0, !isReadingBody, headSince == nil { idleSince = now }
    }

    /// The earliest moment a limit may be passed; nil when none applies (a request is with the server).
    private var nextDeadline: NIODeadline? {
        guard !isWebSocket else { return nil }
        var next: NIODeadline?
        func consider(_ start: NIODeadline?, _ span: Duration) {
            guard let start else { return }
            let deadline = start + TimeAmount(span)
            if next.map({ deadline < $0 }) ?? true { next = deadline }
        }
        consider(headSince, limits.headTimeout)
        if inFlight == 0, !isReadingBody { consider(idleSince, limits.idleTimeout) }
        consider(handshakeSince, limits.webSocketHandshakeTimeout)
        if isReadingBody, limits.minBodyRate > 0 { consider(bodyWindow.start, limits.bodyRateWindow) }
        return next
    }

    private func arm(context: ChannelHandlerContext) {
        guard timer == nil, address != nil, let next = nextDeadline else { return }
        let at = min(next, .now() + tick)
        timer = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: at) { [self] in
            self.timer = nil
            self.check(context: context)
        }
    }

    private func check(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let now = NIODeadline.now()
        if let since = headSince, now >= since + TimeAmount(limits.headTimeout) {
            return closeSlow(context: context, "its request's head did not arrive within \(limits.headTimeout)")
        }
        if inFlight == 0, !isReadingBody, let since = idleSince, now >= since + TimeAmount(limits.idleTimeout) {
            return closeSlow(context: context, "it was idle for \(limits.idleTimeout)")
        }
        if let since = handshakeSince, now >= since + TimeAmount(limits.webSocketHandshakeTimeout) {
            return closeSlow(context: context, "its WebSocket upgrade was not done within \(limits.webSocketHandshakeTimeout)")
        }
        if isReadingBody, limits.minBodyRate > 0, now >= bodyWindow.start + TimeAmount(limits.bodyRateWindow) {
            let seconds = Double((now - bodyWindow.start).nanoseconds) / 1e9
            if isReadPending, Double(bodyWindow.bytes) < Double(limits.minBodyRate) * seconds {
                return closeSlow(context: context, "its request body came at \(Int(Double(bodyWindow.bytes) / seconds)) bytes/s, under \(limits.minBodyRate)")
            }
            bodyWindow = (now, 0)
        }
        arm(context: context)
    }

    private func closeSlow(context: ChannelHandlerContext, _ reason: String) {
        logger.debug("closing a slow connection", metadata: ["address": "\(address ?? "?")", "reason": "\(reason)"])
        // With no request in flight the handlers behind are told the input ended: Hummingbird's upgrade handler,
        // still waiting for a first request, then gives up quietly instead of logging an error for each.
        if inFlight == 0, !isWebSocket { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        context.close(promise: nil)
    }
}

/// Any child channel with a ``ConnectionGuard`` in front of its handlers and, when serving TLS, NIOSSL's handler in
/// front of that. They go in after the inner channel's setup, whose own handlers (the blob fast path, the frame
/// guard) also take the front, so that they read decrypted bytes.
struct GuardedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let limits: ConnectionLimits
    let count: ConnectionCount
    let certificates: CertificateStore?
    let logger: Logger

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(ConnectionGuard(limits: limits, count: count, logger: self.logger), position: .first)
            if let certificates { try pipeline.addHandler(certificates.serverHandler(), position: .first) }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension ConnectionLimits {
    /// Raises the process's soft descriptor limit to its hard limit (as servers do at start) and returns the soft
    /// limit now in force.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        if getrlimit(descriptorResource, &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(descriptorResource, &limit)
        }
        return descriptorLimit
    }
}
