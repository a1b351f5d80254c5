import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import NIOConcurrencyHelpers

/// The hub's maps as blobs in the Hoard's store: base maps are read from it, folded ones written through its one write
/// path.
struct StoredTables: TableStorage {
    let hoard: Hoard

    func map(_ digest: Digest) async throws -> JSONValue {
        guard let bytes = try await hoard.read(digest) else {
            throw APIError.internalError("the map blob \(digest) is missing")
        }
        return try JSONValue(parsing: Data(bytes))
    }

    func fold(session id: String, map: JSONValue, seq: Int64, catalog: Catalog) async throws -> Bool {
        try await hoard.write(.bytes(try CanonicalJSON.encode(map))) { incoming in
            let blob = BlobRecord(digest: incoming.digest, size: incoming.size, mediaType: SessionRoutes.mapMediaType)
            return try catalog.fold(session: id, mapBlob: blob, baseSeq: seq, keeping: SessionHub.foldEvery)
        }
    }
}


/// Encoded views of tables, kept while their session's sequence number stands: many participants see the same
/// view (all those who own nothing hidden), so a join or a `GET` of a busy session encodes each view once per op.
final class TableViews: Sendable {
    private let documents = NIOLockedValueBox<[String: TableDocument]>([:])
    /// Views kept at most; past it the cache starts again (views are cheap to make once, costly to make per request).
    static let capacity = 512

    /// The view of `table` (the session as of `seq`) for `viewer`, encoded.
    func document(session: String, seq: Int64, table: Table, viewer: Table.Actor) throws -> TableDocument {
        let key = "\(session.utf8.count):\(session) \(seq) " + table.viewKey(for: viewer)
        if let known = documents.withLockedValue({ $0[key] }) { return known }
        let document = try TableDocument(table, viewer: viewer)
        documents.withLockedValue { documents in
            if documents.count >= Self.capacity { documents.removeAll(keepingCapacity: true) }
            documents[key] = document
        }
        return document
    }
}
