import Foundation
import HoardCatalog
import NIOConcurrencyHelpers

/// A fixed-window limit on uploads per group and minute: a runaway client gets 429, not the disk.
final class RateLimiter: Sendable {
    private let perMinute: Int
    private struct Window {
        var minute = 0
        var counts: [Int64: Int] = [:]
    }

    private let window = NIOLockedValueBox(Window())

    init(perMinute: Int) { self.perMinute = perMinute }

    /// Counts one upload for the principal's group; throws RATE_LIMITED past the limit.
    func admit(_ principal: Principal) throws {
        let minute = Int(Date().timeIntervalSince1970 / 60)
        let count = window.withLockedValue { state in
            if state.minute != minute { state = Window(minute: minute) }
            state.counts[principal.groupId, default: 0] += 1
            return state.counts[principal.groupId] ?? 0
        }
        if count > perMinute {
            throw APIError.rateLimited("group '\(principal.group)' started more than \(perMinute) uploads this minute; wait and retry")
        }
    }
}
