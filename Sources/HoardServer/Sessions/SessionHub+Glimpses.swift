import Foundation
import HoardCatalog
import HoardCore
import Logging

// Glimpses: a token shown to some players for a while, ended on the server's clock.
extension SessionHub {
    /// Ends a glimpse on the server's clock: at `until` (and `grace`), the token is hidden again from those it was
    /// shown to, unless a later glimpse showed it to them again or it has ended already. Its art is fetchable by them
    /// until `until` only (``updateVisibleArt(_:)``), should this timer never fire (the session unloaded, a crash).
    func startGlimpse(session id: String, token: String, to: [String], until: Date, grace: Duration = .zero) {
        var numbers: [String: Int] = [:]
        for participant in to {
            let key = GlimpseKey(token: token, participant: participant)
            let number = (sessions[id]?.glimpseNumbers[key] ?? 0) + 1
            sessions[id]?.glimpseNumbers[key] = number
            sessions[id]?.glimpseEnds[key] = until
            numbers[participant] = number
        }
        let wait = max(0, until.timeIntervalSinceNow)
        Task {
            try? await Task.sleep(for: .milliseconds(Int64(wait * 1000)) + grace)
            await self.endGlimpse(session: id, token: token, numbers: numbers)
        }
    }

    /// Ends the glimpses of `token` whose number is still the latest (nil: all of them), as an op of the server's.
    func endGlimpse(session id: String, token: String, numbers: [String: Int]?) async {
        guard let live = sessions[id], let seers = live.table.glimpses[token] else { return }
        let ending = seers.filter { participant in
            numbers.map { $0[participant] != nil && $0[participant] == live.glimpseNumbers[GlimpseKey(token: token, participant: participant)] } ?? true
        }
        guard !ending.isEmpty else { return }
        do {
            _ = try await apply(
                session: id, op: .unglimpse(token: token, from: ending.sorted()), opId: nil, from: "server", as: .host,
                manifest: { _ in [:] })
        } catch {
            logger.error("cannot end a glimpse", metadata: ["session": "\(id)", "token": "\(token)", "error": "\(error)"])
        }
    }

    /// When a logged glimpse ends: its `until` (milliseconds since 1970 on the clock of the server that applied it),
    /// or, for one logged before glimpses carried it, `seconds` from now.
    static func glimpseEnd(_ body: JSONValue, _ seconds: Int) -> Date {
        guard case .number(let milliseconds)? = body["until"], milliseconds.isFinite else { return Date().addingTimeInterval(Double(seconds)) }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }
}
