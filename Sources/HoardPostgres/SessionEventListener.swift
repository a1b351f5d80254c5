import HoardCatalog
import Logging
import PostgresNIO

/// A replica's view of the session logs other replicas append to: it LISTENs on its own connection and, on each
/// notice, reads the events after the last sequence number it has of that session, from the table.
///
/// The table is the truth and a notice only a wake-up, so nothing is lost to a missed notice: after (re)connecting
/// and once `LISTEN` is in force, every followed session is read from its last position; from then on every commit
/// sends a notice. A notice for a session not followed, or for a number already delivered, costs no query. When the
/// connection breaks (the server restarts, the backend is terminated), ``run(retryDelay:deliver:)`` connects again and
/// catches up. Each followed session's events are delivered in order, each once.
///
/// The same connection LISTENs for the access change log's notices (``PostgresSchema/accessChangeChannel``): each one,
/// and each (re)connection once both LISTENs are in force, calls the handler given to ``onAccessChange(_:)``.
public actor SessionEventListener {
    /// The database it reads and listens to.
    public let database: PostgresCatalogDatabase
    private var positions: [String: Int64]
    private var wake: AsyncStream<Notice>.Continuation?
    /// How many connections ``run(retryDelay:deliver:)`` has opened (1 while the first one lives).
    public private(set) var connectionCount = 0
    /// Told of access change notices (``onAccessChange(_:)``).
    private var accessChanged: (@Sendable () -> Void)?

    /// A listener that will deliver, for each session in `positions`, the events after its sequence number.
    public init(database: PostgresCatalogDatabase, following positions: [String: Int64] = [:]) {
        self.database = database
        self.positions = positions
    }

    /// Starts delivering a session's events after `seq` (the last one its caller already has).
    public func follow(session: String, after seq: Int64) {
        positions[session] = seq
        wake?.yield(Notice(session: session, seq: nil))
    }

    /// Stops delivering a session's events.
    public func stopFollowing(session: String) {
        positions[session] = nil
    }

    /// The last sequence number handed to `deliver` of a session (or the one it was followed from), nil when not followed.
    public func position(of session: String) -> Int64? {
        positions[session]
    }

    /// Listens and delivers until the calling task is cancelled, connecting again `retryDelay` after a failure.
    /// `deliver` is called for one event at a time. Call it once per listener.
    public func run(
        retryDelay: Duration = .milliseconds(200), deliver: @Sendable (SessionEvent) async -> Void
    ) async {
        while !Task.isCancelled {
            do {
                try await listenOnce(deliver: deliver)
            } catch where !Task.isCancelled {
                database.logger.info("session event listener: \(error); connecting again")
            } catch {
                return
            }
            wake = nil
            try? await Task.sleep(for: retryDelay)
        }
    }

    /// One connection's life: LISTEN, catch up every followed session, then read on each notice until it breaks.
    private func listenOnce(deliver: @Sendable (SessionEvent) async -> Void) async throws {
        let connection = try await database.connect()
        connectionCount += 1
        do {
            try await listen(on: connection, deliver: deliver)
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    private func listen(on connection: PostgresConnection, deliver: @Sendable (SessionEvent) async -> Void) async throws {
        let log = SessionEventLog(connection: connection, logger: database.logger)
        let (notices, wake) = AsyncStream.makeStream(of: Notice.self)
        let displayURL = database.displayURL
        try await connection.listen(on: SessionEventLog.channel) { notifications in
            try await connection.listen(on: PostgresSchema.accessChangeChannel) { accessNotices in
                // LISTEN is in force from here: every commit after this point sends a notice.
                self.wake = wake
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        defer { wake.finish() }
                        do {
                            for try await notification in notifications {
                                if let notice = Notice(payload: notification.payload) { wake.yield(notice) }
                            }
                        } catch {
                            throw PostgresCatalogError(
                                .unreachable, "the connection to \(displayURL) broke",
                                cause: PostgresCatalogDatabase.words(error))
                        }
                        throw PostgresCatalogError(.unreachable, "the connection to \(displayURL) closed")
                    }
                    group.addTask {
                        // Ends with the connection, as the session notices do (their task says why).
                        for try await _ in accessNotices { await self.announceAccessChange() }
                    }
                    announceAccessChange()
                    for session in positions.keys { try await read(session, through: log, deliver: deliver) }
                    for await notice in notices {
                        guard let position = positions[notice.session], (notice.seq ?? .max) > position else { continue }
                        try await read(notice.session, through: log, deliver: deliver)
                    }
                    // The notices ended: the connection broke (the child's error says so) or the task was cancelled.
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    /// Tells the access change handler, if any, that the log may have grown.
    private func announceAccessChange() {
        accessChanged?()
    }

    /// Delivers a followed session's events after its position, and advances it. A gap in the numbers means the
    /// log was folded past the position (DESIGN.md, "Folds"): the events are delivered as the table has them.
    private func read(
        _ session: String, through log: SessionEventLog, deliver: @Sendable (SessionEvent) async -> Void
    ) async throws {
        guard var position = positions[session] else { return }
        for event in try await log.events(session: session, after: position) {
            // A follow() or stopFollowing() while delivering wins.
            guard positions[session] == position else { return }
            position = event.seq
            positions[session] = position
            await deliver(event)
        }
    }

    /// A wake-up: an append's notice (`<seq> <session>`), or a new follow (no seq).
    struct Notice: Sendable {
        var session: String
        var seq: Int64?

        init(session: String, seq: Int64?) {
            self.session = session
            self.seq = seq
        }

        init?(payload: String) {
            guard let space = payload.firstIndex(of: " "), let seq = Int64(payload[..<space]) else { return nil }
            self.init(session: String(payload[payload.index(after: space)...]), seq: seq)
        }
    }
}

extension SessionEventListener: AccessChangeFeed {
    /// Calls `handler` on each access change notice and after each (re)connection, while ``run(retryDelay:deliver:)``
    /// runs.
    public func onAccessChange(_ handler: @escaping @Sendable () -> Void) {
        accessChanged = handler
    }
}

extension SessionEventListener: SessionEventFeed {
    /// Delivers events as the catalog's ``LoggedEvent``s, connecting again 200 ms after a failure.
    public func run(deliver: @escaping @Sendable (_ session: String, _ event: LoggedEvent) async -> Void) async {
        await run(retryDelay: .milliseconds(200)) { event in
            await deliver(event.session, LoggedEvent(seq: event.seq, body: event.body, views: event.views))
        }
    }
}
