import Foundation
import HoardCatalog
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// Fixed-window limits per minute on what callers start, each counted under its own key, so one caller's excess
/// never spends another's: uploads per group for members; for a participant, per participant and per session (one
/// session's players cannot exhaust another's, nor one player their table's); joins per session. A runaway client
/// gets 429, not the disk or the catalog.
final class RateLimiter: Sendable {
    /// Uploads a group's members may start a minute (all of them together).
    private let perMinute: Int
    /// Uploads one participant may start a minute.
    let perParticipant: Int
    /// Joins one session may take a minute (its code may have leaked).
    let joinsPerSession: Int

    private struct Window {
        var minute = 0
        var counts: [String: Int] = [:]
    }

    private let window = NIOLockedValueBox(Window())

    /// The window's length in seconds: a minute, longer only in tests (which must not straddle a window's turn).
    let windowSeconds: Double

    init(perMinute: Int, perParticipant: Int, joinsPerSession: Int, windowSeconds: Double = 60) {
        self.perMinute = perMinute
        self.perParticipant = perParticipant
        self.joinsPerSession = joinsPerSession
        self.windowSeconds = windowSeconds
    }

    /// Counts one upload: a member's under its group, a participant's under them and under their session (a
    /// session's players together get a group's allowance). Throws RATE_LIMITED past a limit.
    func admit(_ principal: Principal) throws {
        if let session = principal.sessionId, let participant = principal.participantId {
            try count("p \(participant)", limit: perParticipant, "you started more than \(perParticipant) uploads this minute; wait and retry")
            try count("s \(session)", limit: perMinute, "this session's players started more than \(perMinute) uploads this minute; wait and retry")
        } else {
            try count("g \(principal.groupId)", limit: perMinute,
                      "group '\(principal.group)' started more than \(perMinute) uploads this minute; wait and retry")
        }
    }

    /// Counts one join of a session. Throws RATE_LIMITED past ``joinsPerSession``.
    func admitJoin(session: String) throws {
        try count("j \(session)", limit: joinsPerSession, "more than \(joinsPerSession) people joined this session this minute; wait and retry")
    }

    private func count(_ key: String, limit: Int, _ refusal: @autoclosure () -> String) throws {
        if tally(key, 1) > limit { throw APIError.rateLimited(refusal(), retryAfter: secondsLeft) }
    }

    /// Adds `amount` to `key`'s count in the current window and returns the count.
    @discardableResult
    func tally(_ key: String, _ amount: Int) -> Int {
        let minute = Int(Date().timeIntervalSince1970 / windowSeconds)
        return window.withLockedValue { state in
            if state.minute != minute { state = Window(minute: minute) }
            state.counts[key, default: 0] += amount
            return state.counts[key] ?? 0
        }
    }

    /// Whole seconds until the current window ends (what `Retry-After` says).
    var secondsLeft: Int {
        let now = Date().timeIntervalSince1970
        return max(1, Int((windowSeconds - now.truncatingRemainder(dividingBy: windowSeconds)).rounded(.up)))
    }
}

/// A limit on wrong join codes per address: `POST /v1/sessions/join` answers 429, with `Retry-After`, to an address
/// that sent ``perMinute`` unknown codes in the current window, before it looks the code up. Join codes have 40
/// bits; without it one client tried about 2,900 a second. Counted in the ``RateLimiter``'s windows, per client:
/// behind a trusted proxy, the address it forwarded for.
struct FailedJoins: RouterMiddleware {
    typealias Context = HoardRequestContext
    let perMinute: Int
    let limiter: RateLimiter
    var proxies = TrustedProxies()
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, request.uri.path == "/v1/sessions/join" else { return try await next(request, context) }
        let peer = context.channel.remoteAddress?.ipAddress ?? "local"
        let key = "a \(proxies.client(peer: peer, forwardedFor: request.headers[values: Self.forwardedFor]))"
        guard limiter.tally(key, 0) < perMinute else {
            throw APIError.rateLimited(
                "this address sent \(perMinute) unknown join codes this minute; check the code with the host and retry later",
                retryAfter: limiter.secondsLeft)
        }
        do {
            return try await next(request, context)
        } catch let error as APIError where error.code == APIError.unknownCode().code {
            limiter.tally(key, 1)
            throw error
        }
    }
}
