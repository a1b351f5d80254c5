import HoardCatalog
import HoardCore
import PostgresNIO

// A session's dice, as SQLiteCatalog keeps them.
extension PostgresCatalog {
    /// The session's seal, written with `proposed` when it has none (the first written wins).
    public func diceSeal(session id: String, groupId: Int64, proposed: DiceSeed) throws(CatalogError) -> DiceSealRecord {
        try write("cannot seal the dice of session \(id)") { tx in
            try tx.execute(#"""
                INSERT INTO "diceSeal" ("sessionId", "groupId", seed) VALUES (\#(id), \#(groupId), \#(proposed.description))
                ON CONFLICT ("sessionId") DO NOTHING
                """#)
            guard let seal = try Self.diceSeal(id, tx) else { throw CatalogError(.notFound, "no dice seal for session \(id)") }
            return seal
        }
    }

    /// A session's seal, also after the session ended; nil when it never had one.
    public func diceSeal(session id: String) throws(CatalogError) -> DiceSealRecord? {
        try read("cannot read the dice seal of session \(id)") { tx in try Self.diceSeal(id, tx) }
    }

    /// Marks a session's seal revealed and returns it; nil when there is none.
    public func revealDice(session id: String) throws(CatalogError) -> DiceSealRecord? {
        try write("cannot reveal the dice of session \(id)") { tx in
            try tx.execute(#"UPDATE "diceSeal" SET "isRevealed" = true WHERE "sessionId" = \#(id)"#)
            return try Self.diceSeal(id, tx)
        }
    }

    /// A session's `rolled` event bodies in sequence order.
    public func diceRolls(session id: String) throws(CatalogError) -> [String] {
        try read("cannot read the rolls of session \(id)") { tx in
            try tx.values(#"SELECT body FROM "diceRoll" WHERE "sessionId" = \#(id) ORDER BY seq"#, as: String.self)
        }
    }

    /// The `rolled` event bodies of a group's revealed sessions, by session and sequence.
    public func diceRolls(group groupId: Int64) throws(CatalogError) -> [String] {
        try read("cannot read the rolls of group \(groupId)") { tx in
            try tx.values(#"""
                SELECT r.body FROM "diceRoll" r JOIN "diceSeal" s ON s."sessionId" = r."sessionId"
                WHERE s."groupId" = \#(groupId) AND s."isRevealed" ORDER BY r."sessionId", r.seq
                """#, as: String.self)
        }
    }

    static func diceSeal(_ id: String, _ tx: PostgresTransaction) throws -> DiceSealRecord? {
        let rows = try tx.rows(
            #"SELECT "groupId", seed, "isRevealed" FROM "diceSeal" WHERE "sessionId" = \#(id)"#, as: (Int64, String, Bool).self)
        guard let row = rows.first, let seed = DiceSeed(row.1) else { return nil }
        return DiceSealRecord(sessionId: id, groupId: row.0, seed: seed, isRevealed: row.2)
    }
}
