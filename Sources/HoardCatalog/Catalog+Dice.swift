import GRDB
import HoardCore

// A session's dice: its seal (seed, revealed or not) and its rolls, kept after the session ends.
extension SQLiteCatalog {
    /// The session's seal, written with `proposed` when it has none (the first written wins).
    public func diceSeal(session id: String, groupId: Int64, proposed: DiceSeed) throws(CatalogError) -> DiceSealRecord {
        try write { db in
            try db.execute(
                sql: "INSERT INTO diceSeal (sessionId, groupId, seed) VALUES (?, ?, ?) ON CONFLICT (sessionId) DO NOTHING",
                arguments: [id, groupId, proposed.description])
            guard let seal = try Self.diceSeal(id, db) else { throw CatalogError(.notFound, "no dice seal for session \(id)") }
            return seal
        }
    }

    /// A session's seal, also after the session ended; nil when it never had one.
    public func diceSeal(session id: String) throws(CatalogError) -> DiceSealRecord? {
        try read { db in try Self.diceSeal(id, db) }
    }

    /// Marks a session's seal revealed and returns it; nil when there is none.
    public func revealDice(session id: String) throws(CatalogError) -> DiceSealRecord? {
        try write { db in
            try db.execute(sql: "UPDATE diceSeal SET isRevealed = 1 WHERE sessionId = ?", arguments: [id])
            return try Self.diceSeal(id, db)
        }
    }

    /// A session's `rolled` event bodies in sequence order.
    public func diceRolls(session id: String) throws(CatalogError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT body FROM diceRoll WHERE sessionId = ? ORDER BY seq", arguments: [id]) }
    }

    /// The `rolled` event bodies of a group's revealed sessions, by session and sequence.
    public func diceRolls(group groupId: Int64) throws(CatalogError) -> [String] {
        try read { db in
            try String.fetchAll(db, sql: """
                SELECT r.body FROM diceRoll r JOIN diceSeal s ON s.sessionId = r.sessionId
                WHERE s.groupId = ? AND s.isRevealed ORDER BY r.sessionId, r.seq
                """, arguments: [groupId])
        }
    }

    static func diceSeal(_ id: String, _ db: Database) throws -> DiceSealRecord? {
        guard let row = try Row.fetchOne(db, sql: "SELECT groupId, seed, isRevealed FROM diceSeal WHERE sessionId = ?", arguments: [id]),
            let seed = DiceSeed(row["seed"] as String)
        else { return nil }
        return DiceSealRecord(sessionId: id, groupId: row["groupId"], seed: seed, isRevealed: row["isRevealed"])
    }
}
