import Logging
import PostgresNIO

/// One event of a session's log, as stored in `sessionEvent`.
public struct SessionEvent: Sendable, Hashable {
    /// The session.
    public var session: String
    /// Its sequence number in the session: 1, 2, 3, … with no gap.
    public var seq: Int64
    /// The event's JSON.
    public var body: String
    /// What participants are sent instead, when not all of them are sent `body` (JSON; DESIGN.md, "Catalog schema").
    public var views: String?

    /// Creates an event.
    public init(session: String, seq: Int64, body: String, views: String? = nil) {
        self.session = session
        self.seq = seq
        self.body = body
        self.views = views
    }
}

/// A session's event log on PostgreSQL, where several replicas append to one session.
///
/// ``append(session:body:views:)`` takes the session's next sequence number (`session.lastSeq + 1`, under the
/// session row's lock), inserts the event and sends `NOTIFY hoard_session_events, '<seq> <session id>'`, all in one
/// statement, hence one transaction: two appenders on one session get consecutive numbers, a failed append leaves no
/// number used, and the notice goes out at commit, in commit order, which for one session is sequence order.
/// The table is the truth; a notice only wakes a ``SessionEventListener``.
///
/// A log speaks through one connection, which runs one statement at a time: calls on one log MUST NOT overlap
/// (give each concurrent writer its own connection).
public struct SessionEventLog: Sendable {
    /// The channel every append notifies.
    public static let channel = "hoard_session_events"

    /// The connection it speaks through.
    public let connection: PostgresConnection
    let logger: Logger

    /// A log speaking through `connection`, whose database is migrated.
    public init(connection: PostgresConnection, logger: Logger = Logger(label: "hoard.postgres")) {
        self.connection = connection
        self.logger = logger
    }

    /// Appends an event to a session's log and returns the sequence number it was given. Throws
    /// ``PostgresCatalogFailure/notFound`` when there is no such session.
    @discardableResult
    public func append(session: String, body: String, views: String? = nil) async throws(PostgresCatalogError) -> Int64 {
        let query: PostgresQuery = """
            WITH next AS (
                UPDATE session SET "lastSeq" = "lastSeq" + 1 WHERE id = \(session) RETURNING "lastSeq" AS seq),
            event AS (
                INSERT INTO "sessionEvent" ("sessionId", seq, body, views)
                SELECT \(session), seq, \(body), \(views) FROM next RETURNING seq)
            SELECT seq, pg_notify(\(Self.channel), seq::text || ' ' || \(session)) FROM event
            """
        var seq: Int64?
        do {
            for try await row in try await connection.query(query, logger: logger) {
                seq = try row.makeRandomAccess()[0].decode(Int64.self)
            }
        } catch {
            throw PostgresCatalogDatabase.statementError("cannot append an event to session \(session)", error)
        }
        guard let seq else {
            throw PostgresCatalogError(.notFound, "there is no session \(session) to append an event to")
        }
        return seq
    }

    /// The session's logged events after `seq`, oldest first.
    public func events(session: String, after seq: Int64) async throws(PostgresCatalogError) -> [SessionEvent] {
        do {
            var events: [SessionEvent] = []
            let rows = try await connection.query("""
                SELECT seq, body, views FROM "sessionEvent" WHERE "sessionId" = \(session) AND seq > \(seq) ORDER BY seq
                """, logger: logger)
            for try await (seq, body, views) in rows.decode((Int64, String, String?).self) {
                events.append(SessionEvent(session: session, seq: seq, body: body, views: views))
            }
            return events
        } catch {
            throw PostgresCatalogDatabase.statementError("cannot read the events of session \(session)", error)
        }
    }
}
