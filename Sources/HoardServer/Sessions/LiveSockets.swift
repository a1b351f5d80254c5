import Foundation
import NIOConcurrencyHelpers
import NIOWebSocket

/// The live sockets of member tokens, by the hash of the token that opened each: when a token is revoked (through any
/// server: the access index learns it from the change log), its sockets are marked and closed with
/// ``revokedCode``, and nothing they send after the mark is applied.
final class LiveSockets: Sendable {
    /// The close code of a socket whose token was revoked (in the range kept for applications, as 4403 is).
    static let revokedCode = WebSocketErrorCode.unknown(4401)
    static let revokedReason = "your token was revoked or your role changed"

    private struct Socket {
        var session: String
        var tokenHash: String
    }

    private struct State {
        var sockets: [UUID: Socket] = [:]
        var revoked: Set<UUID> = []
        /// Hashes revoked while one of their sockets was being admitted (its registration comes after).
        var revokedHashes: Set<String> = []
    }

    private let state = NIOLockedValueBox(State())

    /// Registers a member's socket; false when its token was revoked already (the socket must close).
    func add(_ connection: UUID, session: String, tokenHash: String) -> Bool {
        state.withLockedValue { state in
            guard !state.revokedHashes.contains(tokenHash) else { return false }
            state.sockets[connection] = Socket(session: session, tokenHash: tokenHash)
            return true
        }
    }

    /// Forgets a socket that closed.
    func remove(_ connection: UUID) {
        state.withLockedValue { state in
            state.sockets[connection] = nil
            state.revoked.remove(connection)
        }
    }

    /// Whether the socket's token was revoked: what it sends is refused, and it closes with ``revokedCode``.
    func isRevoked(_ connection: UUID) -> Bool {
        state.withLockedValue { $0.revoked.contains(connection) }
    }

    /// Marks the sockets of these token hashes revoked and returns them (session, connection), for the hub to close.
    /// `refusingLater`: a socket those tokens open later is refused too (they were deleted, not given another role).
    func revoke(_ hashes: [String], refusingLater: Bool = true) -> [(session: String, connection: UUID)] {
        guard !hashes.isEmpty else { return [] }
        return state.withLockedValue { state in
            let hashes = Set(hashes)
            if state.revokedHashes.count > 4096 { state.revokedHashes.removeAll() }
            if refusingLater { state.revokedHashes.formUnion(hashes) }
            let hit = state.sockets.filter { hashes.contains($0.value.tokenHash) }
            state.revoked.formUnion(hit.keys)
            return hit.map { (session: $0.value.session, connection: $0.key) }
        }
    }
}
