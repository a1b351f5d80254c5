import Foundation

/// The seats a player took at tables, kept in their cache folder (`seats.json`) so that joining again with the same
/// code and name takes the same seat back (``HoardClient/rejoin(_:cache:)``) instead of a new one: the others see
/// the player return, not a stranger of the same name.
///
/// A seat is the participant token the server gave: whoever reads this file may act as that player at that table, so
/// it is written readable by its owner only. A seat the server no longer knows (the game ended, the host removed the
/// player) is simply replaced by the next join's.
public struct KeptSeats: Sendable {
    /// One seat: the server it was taken on, the session, the participant id it holds, and the participant token.
    public struct Seat: Codable, Sendable, Hashable {
        public var server: URL, sessionId: String, participantId: String, participantToken: String

        /// A seat.
        public init(server: URL, sessionId: String, participantId: String, participantToken: String) {
            (self.server, self.sessionId, self.participantId, self.participantToken) = (server, sessionId, participantId, participantToken)
        }
    }

    /// The file the seats are kept in.
    public let path: URL

    /// The seats kept in `directory` (a cache folder's root).
    public init(directory: URL) {
        path = directory.appendingPathComponent("seats.json")
    }

    /// The key of a join: its code (as typed: case and dashes do not matter) and the name the player gave.
    static func key(code: String, name: String) -> String {
        code.uppercased().filter { $0.isLetter || $0.isNumber } + "\u{1F}" + name
    }

    private func all() -> [String: Seat] {
        guard let data = try? Data(contentsOf: path) else { return [:] }
        return (try? JSONDecoder().decode([String: Seat].self, from: data)) ?? [:]
    }

    /// The seat an earlier join with this code and name took, if one was kept.
    public func seat(code: String, name: String) -> Seat? {
        all()[Self.key(code: code, name: name)]
    }

    /// Keeps the seat a join took, replacing any kept for the same code and name.
    public func keep(_ seat: Seat, code: String, name: String) throws {
        var seats = all()
        seats[Self.key(code: code, name: name)] = seat
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(seats).write(to: path, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path.path)
    }
}
