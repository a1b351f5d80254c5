import Foundation
import HoardCatalog
import HoardCore
import Logging

// Folding: the log stored as a new base map.
extension SessionHub {
    /// Stores the state as a new base map in the background, then deletes the log up to it.
    func fold(_ id: String) {
        guard let live = sessions[id], !live.isFolding, live.lastSeq > live.baseSeq else { return }
        sessions[id]?.isFolding = true
        let (map, seq, storage, catalog, logger) = (live.table.map, live.lastSeq, storage, catalog, logger)
        Task {
            var folded = false
            do {
                folded = try await storage.fold(session: id, map: map, seq: seq, catalog: catalog)
            } catch {
                logger.error("cannot fold a session's log", metadata: ["session": "\(id)", "error": "\(error)"])
            }
            self.folded(id, seq: folded ? seq : nil)
        }
    }

    func folded(_ id: String, seq: Int64?) {
        sessions[id]?.isFolding = false
        if let seq, let base = sessions[id]?.baseSeq, base < seq { sessions[id]?.baseSeq = seq }
        if let live = sessions[id], live.connections.isEmpty, !live.isFolding, live.lastSeq == live.baseSeq { sessions[id] = nil }
    }
}

/// Where the hub reads base maps and stores folded ones.
protocol TableStorage: Sendable {
    /// A stored map document.
    func map(_ digest: Digest) async throws -> JSONValue
    /// Stores `map` as the session's base as of `seq` and deletes the log up to it; false when a later base exists.
    func fold(session id: String, map: JSONValue, seq: Int64, catalog: Catalog) async throws -> Bool
}
