import NIOConcurrencyHelpers

/// One socket's transport as the hub sees it: the bytes queued for it and not yet written, and how to cut it off.
final class LiveLink: Sendable {
    private struct State {
        var queued = 0
        var isDropped = false
        var ending: Ending?
    }

    private let state = NIOLockedValueBox(State())
    private let abortTransport: @Sendable () -> Void

    /// `abort` closes the connection at once, without a close handshake.
    init(abort: @escaping @Sendable () -> Void = {}) {
        abortTransport = abort
    }

    /// Counts a message in; false when the socket is dropped or the message would take its queue past `limit` bytes
    /// (a message always fits an empty queue).
    func enqueue(_ count: Int, limit: Int) -> Bool {
        state.withLockedValue { state in
            guard !state.isDropped, state.queued == 0 || state.queued + count <= limit else { return false }
            state.queued += count
            return true
        }
    }

    /// A queued message was written to the connection.
    func written(_ count: Int) {
        state.withLockedValue { $0.queued -= count }
    }

    var queuedBytes: Int { state.withLockedValue { $0.queued } }
    var isDropped: Bool { state.withLockedValue { $0.isDropped } }
    /// Whether nothing it sends may be applied any more: it was dropped, or the server ended it (its participant was
    /// removed, its session ended). A removal is a barrier: an op read after it is not applied.
    var isGone: Bool { state.withLockedValue { $0.isDropped || $0.ending != nil } }
    /// Why the server ended it, when it did (its stream finished for that reason, not for being slow).
    var ending: Ending? { state.withLockedValue { $0.ending } }

    /// Marks the socket dropped and aborts its connection (once).
    func drop() {
        let first = state.withLockedValue { state in
            defer { state.isDropped = true }
            return !state.isDropped
        }
        if first { abortTransport() }
    }

    /// Why a socket's stream was finished by the server, and the close frame that says so.
    enum Ending: Sendable {
        /// The session ended: 1001.
        case sessionEnded
        /// The host removed its participant: 4403.
        case removed
    }

    func end(_ why: Ending) {
        state.withLockedValue { $0.ending = why }
    }

    /// Aborts the connection without marking it dropped (a close handshake that did not finish in time).
    func abort() {
        abortTransport()
    }
}
