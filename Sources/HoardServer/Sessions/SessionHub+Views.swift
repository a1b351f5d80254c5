import Foundation
import HoardCatalog
import HoardCore
import Logging

// What each viewer is sent: events as they see them, snapshots of their view, the map replaced.
extension SessionHub {
    /// Sends a message to one socket only (errors: not logged, no sequence number).
    func send(session id: String, connection: UUID, _ text: String) {
        guard let target = sessions[id]?.connections[connection], !Self.deliver(text, to: target) else { return }
        drop(session: id, [connection])
    }

    /// What a logged event is for one viewer.
    enum Delivery {
        case text(String)
        case nothing
        case wholeView
    }

    static func text(of event: LoggedEvent, for viewer: Table.Actor) throws -> Delivery {
        guard case .participant(let id) = viewer, let views = event.views else { return .text(event.body) }
        guard case .array(let entries) = try JSONValue(parsing: Data(views.utf8)) else { return .nothing }
        for entry in entries {
            guard let to = entry["to"], let audience = Audience(json: to), audience.contains(id) else { continue }
            guard let body = entry["event"], body != .null else { return .wholeView }
            return .text(String(decoding: try CanonicalJSON.encode(body), as: UTF8.self))
        }
        return .nothing
    }

    /// A map replaced over HTTP: the new table, whose `map` event's sequence number becomes the base. The host is sent
    /// the `map` event; each participant their view of the new map (a `snapshot`).
    func replaceMap(session id: String, map: JSONValue, commit: (Int64) throws -> Void, event: [String: JSONValue]) async throws -> Int64 {
        try await load(id)
        guard let live = sessions[id] else { throw APIError.notFound("no session \(id)") }
        let seq = live.lastSeq + 1
        try commit(seq)
        sessions[id]?.table = try table(map)
        sessions[id]?.baseSeq = seq
        let published = try publish(session: id, event, views: [(.everyone, nil)])
        try updateVisibleArt(id)
        return published
    }

    /// The session's table as it is now, with the sequence number it reflects, for documents made outside the actor.
    func current(session id: String) async throws -> (table: Table, seq: Int64) {
        let live = try await load(id)
        return (live.table, live.lastSeq)
    }

    /// `{"map":…,"mapDigest":…,"seq":…,"type":"snapshot","serverTime":…}` of a viewer's view now; with `audio`, what
    /// they hear and where each channel is now (a late joiner starts there).
    func snapshot(_ id: String, _ live: Live, for viewer: Table.Actor) throws -> String {
        let key = "\(id.utf8.count):\(id) \(live.lastSeq) " + live.table.viewKey(for: viewer)
        let text: String
        if let known = snapshots[key] {
            text = known
        } else {
            let document = try views.document(session: id, seq: live.lastSeq, table: live.table, viewer: viewer)
            text = "{\"map\":" + document.text + ",\"mapDigest\":\"\(document.digest)\",\"seq\":\(live.lastSeq),\"type\":\"snapshot\""
            if snapshots.count >= 64 { snapshots.removeAll(keepingCapacity: true) }
            snapshots[key] = text
        }
        let now = serverTime
        var timed = text + ",\"serverTime\":\(Int64(now))"
        if !live.table.audioChannels.isEmpty {
            timed += ",\"audio\":" + String(decoding: try CanonicalJSON.encode(live.table.audioView(for: viewer, at: now)), as: UTF8.self)
        }
        return timed + "}"
    }
}

/// One viewer's map as canonical JSON, and its digest: what `GET /v1/sessions/{id}` and `snapshot` events carry.
struct TableDocument: Sendable {
    var bytes: [UInt8]
    var digest: Digest
    var text: String { String(decoding: bytes, as: UTF8.self) }

    init(_ table: Table, viewer: Table.Actor) throws {
        bytes = try CanonicalJSON.encode(table.view(for: viewer))
        digest = BlobHasher.digest(of: bytes)
    }
}

extension SessionHub {
    /// A table of `map`; on hexes, with the footprints of the art it places, which decide the hexes each covers.
    func table(_ map: JSONValue) throws -> Table {
        var table = Table(map: map)
        try learnFootprints(map.referencedDigests, into: &table)
        return table
    }

    /// Resolves the footprints of `art` a hex table does not know yet (a square table needs none).
    func learnFootprints(_ art: Set<Digest>, into table: inout Table) throws {
        guard case .hex = table.grid else { return }
        let unknown = art.subtracting(table.footprints.keys)
        guard !unknown.isEmpty else { return }
        for asset in try catalog.resolve(unknown).assets { table.footprints[asset.digest] = asset.footprint }
    }
}
