import Foundation
import HoardCatalog
import Hummingbird
import NIOConcurrencyHelpers

/// Counts by key in fixed one-minute windows (what the rate limits below share).
final class MinuteCounts<Key: Hashable & Sendable>: Sendable {
    private struct Window {
        var minute = 0
        var counts: [Key: Int] = [:]
    }

    private let window = NIOLockedValueBox(Window())

    /// Adds `amount` to `key`'s count this minute and returns the count.
    @discardableResult
    func add(_ key: Key, _ amount: Int = 1) -> Int {
        let minute = Self.minute
        return window.withLockedValue { state in
            if state.minute != minute { state = Window(minute: minute) }
            state.counts[key, default: 0] += amount
            return state.counts[key] ?? 0
        }
    }

    /// `key`'s count this minute.
    func count(_ key: Key) -> Int { add(key, 0) }

    /// Whole seconds until the next window (1 to 60).
    static var secondsLeft: Int { 60 - Int(Date().timeIntervalSince1970) % 60 }

    private static var minute: Int { Int(Date().timeIntervalSince1970 / 60) }
}

/// A fixed-window limit on uploads per group and minute: a runaway client gets 429, not the disk.
final class RateLimiter: Sendable {
    private let perMinute: Int
    private let counts = MinuteCounts<Int64>()

    init(perMinute: Int) { self.perMinute = perMinute }

    /// Counts one upload for the principal's group; throws RATE_LIMITED past the limit.
    func admit(_ principal: Principal) throws {
        if counts.add(principal.groupId) > perMinute {
            throw APIError.rateLimited(
                "group '\(principal.group)' started more than \(perMinute) uploads this minute; wait and retry",
                retryAfter: MinuteCounts<Int64>.secondsLeft)
        }
    }
}

/// A limit on wrong join codes per address and minute: `POST /v1/sessions/join` answers 429, with `Retry-After`,
/// to an address that sent ``perMinute`` unknown codes this minute, before it looks the code up. Join codes have
/// 40 bits; without it one client tried about 2,900 a second.
struct FailedJoins: RouterMiddleware {
    typealias Context = HoardRequestContext
    let perMinute: Int
    private let counts = MinuteCounts<String>()

    init(perMinute: Int) { self.perMinute = perMinute }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, request.uri.path == "/v1/sessions/join" else { return try await next(request, context) }
        let address = context.channel.remoteAddress?.ipAddress ?? "local"
        guard counts.count(address) < perMinute else {
            throw APIError.rateLimited(
                "this address sent \(perMinute) unknown join codes this minute; check the code with the host and retry later",
                retryAfter: MinuteCounts<String>.secondsLeft)
        }
        do {
            return try await next(request, context)
        } catch let error as APIError where error.code == APIError.unknownCode().code {
            counts.add(address)
            throw error
        }
    }
}
