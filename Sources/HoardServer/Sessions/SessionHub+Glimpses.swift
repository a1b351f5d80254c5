import Foundation
import HoardCatalog
import HoardCore
import Logging

// Glimpses: a token shown to some players for a while, ended on the server's clock.
extension SessionHub {
    /// Ends a glimpse on the server's clock: after `seconds` (and `grace`), the token is hidden again from those it was
    /// shown to, unless a later glimpse showed it to them again or it has ended already.
    func startGlimpse(session id: String, token: String, to: [String], seconds: Int, grace: Duration = .zero) {
        var numbers: [String: Int] = [:]
        for participant in to {
            let key = token + "\u{0}" + participant
            let number = (sessions[id]?.glimpseNumbers[key] ?? 0) + 1
            sessions[id]?.glimpseNumbers[key] = number
            numbers[participant] = number
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds) + grace)
            await self.endGlimpse(session: id, token: token, numbers: numbers)
        }
    }

    /// Ends the glimpses of `token` whose number is still the latest (nil: all of them), as an op of the server's.
    func endGlimpse(session id: String, token: String, numbers: [String: Int]?) async {
        guard let live = sessions[id], let seers = live.table.glimpses[token] else { return }
        let ending = seers.filter { participant in
            numbers.map { $0[participant] != nil && $0[participant] == live.glimpseNumbers[token + "\u{0}" + participant] } ?? true
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
}
