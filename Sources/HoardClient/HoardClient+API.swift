import Foundation
import HoardCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The rest of the HTTP API, one method per operation (Schemas/openapi.yaml): the lobby and a session's life (end,
// leave, remove, new code, new map), saved maps, uploads, refs, share links, packs and asset search. Each answer is
// decoded into the small types below; dates are ISO 8601, as the server writes them.

/// A session in the lobby (`GET /v1/sessions`).
public struct LobbyEntry: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var host: String
    public var visibility: String
    /// Display names of who joined.
    public var participants: [String]
    /// Sockets open now.
    public var connected: Int
    public var createdAt: Date
}

/// A saved map's name and digest (`/v1/maps`).
public struct SavedMap: Sendable, Hashable, Codable {
    public var name: String
    public var digest: Digest
    /// Set when listed.
    public var savedAt: Date?
    /// Set when loaded.
    public var map: JSONValue?
}

/// A picture uploaded into the caller's own space or into a session (`/v1/uploads`).
public struct Upload: Sendable, Hashable, Codable {
    public var digest: Digest
    public var size: Int64
    public var mediaType: String
    /// `member` or `session`.
    public var scope: String
    public var session: String?
    public var uploadedAt: Date?
}

/// A page of the caller's uploads, newest first.
public struct UploadPage: Sendable, Hashable, Codable {
    public var uploads: [Upload]
    public var total: Int
    public var nextOffset: Int?
}

/// A member's named pointer at a blob (`/v1/refs`).
public struct Ref: Sendable, Hashable, Codable {
    public var name: String
    public var digest: Digest
    public var updatedAt: Date
}

/// A share link (`/v1/shares`): `url` opens a page with the picture, for anyone holding it.
public struct Share: Sendable, Hashable, Codable {
    public var id: String
    public var url: String
    public var name: String?
    public var kind: String
    public var pictureURL: String
    public var createdAt: Date
}

/// A pack as listed (`GET /v1/packs`).
public struct PackListing: Sendable, Hashable, Codable {
    public var name: String
    /// The owning group: pack names are unique within a group only.
    public var group: String
    public var isPublic: Bool
    public var version: String?
    public var assetCount: Int
    public var totalBytes: Int64
    /// How far the current version's generated pictures (thumbnails, previews, lower LODs) are: the server makes them
    /// after the import, and the pack is usable meanwhile. Nil when it has none to make.
    public var renditions: Renditions?

    /// Counts of the assets whose generated pictures a job makes.
    public struct Renditions: Sendable, Hashable, Codable {
        public var total: Int
        public var done: Int
        public var failed: Int
        public var cancelled: Int
        /// Still being made: their assets show their smallest variant until then.
        public var pending: Int
    }
}

/// What to search for in `GET /v1/assets`: every field narrows the answer; nil leaves it open.
public struct AssetSearch: Sendable, Hashable {
    /// Names and folders containing this text (three characters or more use the index).
    public var text: String?
    public var kind: String?
    public var pack: String?
    /// `WxH`, e.g. `2x2`.
    public var footprint: String?
    /// Only packs made for this grid (`pack.json`'s `grid`).
    public var grid: PackGrid.Kind?
    public var limit: Int?
    /// `nextCursor` of the page before.
    public var cursor: String?

    public init(
        text: String? = nil, kind: String? = nil, pack: String? = nil, footprint: String? = nil, limit: Int? = nil, cursor: String? = nil,
        grid: PackGrid.Kind? = nil
    ) {
        self.grid = grid
        self.text = text
        self.kind = kind
        self.pack = pack
        self.footprint = footprint
        self.limit = limit
        self.cursor = cursor
    }
}

/// A page of assets (`GET /v1/assets`).
public struct AssetPage: Sendable, Hashable, Codable {
    /// One asset of the page, as the server lists it.
    public typealias Asset = AssetListing

    public var assets: [Asset]
    public var total: Int
    /// Pass as ``AssetSearch/cursor`` for the next page; nil on the last.
    public var nextCursor: String?
}

extension HoardClient {
    // MARK: Sessions

    /// The lobby: the group's sessions, and the private ones this member hosts.
    public func lobby() async throws -> [LobbyEntry] {
        struct Lobby: Decodable { var sessions: [LobbyEntry] }
        return try await dated("GET", "/v1/sessions", as: Lobby.self).sessions
    }

    /// Ends a session (its host): participants, code, log and uploads go; its sockets close.
    public func endSession(id: String) async throws {
        _ = try await exchange("DELETE", "/v1/sessions/\(Self.pathSegment(id))")
    }

    /// Leaves a session (a participant's client): this token stops working and its sockets close.
    public func leave(session: JoinedSession) async throws {
        try await removeParticipant(session.participantId, from: session.sessionId)
    }

    /// Removes a participant (the host), or leaves (a participant's own id).
    public func removeParticipant(_ participantId: String, from sessionId: String) async throws {
        _ = try await exchange("DELETE", "/v1/sessions/\(Self.pathSegment(sessionId))/participants/\(Self.pathSegment(participantId))")
    }

    /// Gives a session a new join code (its host); the old one stops working.
    public func rotateJoinCode(session id: String) async throws -> String {
        struct Rotated: Decodable { var code: String }
        return try await dated("POST", "/v1/sessions/\(Self.pathSegment(id))/code", as: Rotated.self).code
    }

    /// Replaces a session's map (its host); connected clients get a `map` event. Returns the new map's digest and the
    /// event's sequence number.
    @discardableResult
    public func replaceMap(session id: String, with map: JSONValue) async throws -> (mapDigest: Digest, seq: Int64) {
        struct Replaced: Decodable {
            var mapDigest: Digest
            var seq: Int64
        }
        let replaced = try await dated("PUT", "/v1/sessions/\(Self.pathSegment(id))/map", json: map, as: Replaced.self)
        return (replaced.mapDigest, replaced.seq)
    }

    // MARK: Saved maps

    /// Saves a map under a name (never overwrites: `MAP_EXISTS`).
    @discardableResult
    public func saveMap(named name: String, map: JSONValue) async throws -> SavedMap {
        try await dated("POST", "/v1/maps", json: JSONValue.object(["name": .string(name), "map": map]), as: SavedMap.self)
    }

    /// Saves a session's table as it is now (its host): the game in progress.
    @discardableResult
    public func saveTable(of sessionId: String, named name: String) async throws -> SavedMap {
        try await dated("POST", "/v1/maps", json: JSONValue.object(["name": .string(name), "session": .string(sessionId)]), as: SavedMap.self)
    }

    /// The group's saved maps.
    public func savedMaps() async throws -> [SavedMap] {
        struct Maps: Decodable { var maps: [SavedMap] }
        return try await dated("GET", "/v1/maps", as: Maps.self).maps
    }

    /// A saved map with its document.
    public func savedMap(named name: String) async throws -> SavedMap {
        try await dated("GET", "/v1/maps/\(Self.pathSegment(name))", as: SavedMap.self)
    }

    /// Deletes a saved map.
    public func deleteSavedMap(named name: String) async throws {
        _ = try await exchange("DELETE", "/v1/maps/\(Self.pathSegment(name))")
    }

    // MARK: Uploads

    /// Uploads a picture (PNG, JPEG, WebP, GIF; its metadata stripped by the server) into the caller's own space, or
    /// into a session (`session`: its host's; a participant's always go to their session).
    @discardableResult
    public func uploadPicture(_ bytes: Data, mediaType: String, session: String? = nil) async throws -> Upload {
        var request = request("POST", "/v1/uploads", query: session.map { "session=\(Self.queryValue($0))" })
        request.setValue(mediaType, forHTTPHeaderField: "Content-Type")
        request.httpBody = bytes
        let (response, data) = try await transport.send(request)
        try Self.check(response, data, request)
        return try Self.reading("POST", "/v1/uploads", response) { try Self.datedDecoder.decode(Upload.self, from: data) }
    }

    /// The caller's uploads, newest first.
    public func uploads(offset: Int = 0, limit: Int = 100) async throws -> UploadPage {
        try await dated("GET", "/v1/uploads?offset=\(offset)&limit=\(limit)", as: UploadPage.self)
    }

    /// Forgets one of the caller's uploads (garbage collection frees its bytes).
    public func deleteUpload(_ digest: Digest) async throws {
        _ = try await exchange("DELETE", "/v1/uploads/\(digest)")
    }

    // MARK: Refs

    /// The member's refs.
    public func refs() async throws -> [Ref] {
        struct Refs: Decodable { var refs: [Ref] }
        return try await dated("GET", "/v1/refs", as: Refs.self).refs
    }

    /// One ref; throws with status 404 when there is none.
    public func ref(named name: String) async throws -> Ref {
        try await dated("GET", "/v1/refs/\(Self.pathSegment(name))", as: Ref.self)
    }

    /// Points a ref at a blob the caller may read.
    @discardableResult
    public func moveRef(_ name: String, to digest: Digest) async throws -> Ref {
        try await dated("PUT", "/v1/refs/\(Self.pathSegment(name))", json: ["digest": digest.description], as: Ref.self)
    }

    /// Deletes a ref.
    public func deleteRef(_ name: String) async throws {
        _ = try await exchange("DELETE", "/v1/refs/\(Self.pathSegment(name))")
    }

    // MARK: Share links

    /// Shares one picture blob through a link with an unguessable id.
    public func share(blob digest: Digest, name: String? = nil) async throws -> Share {
        var body: [String: JSONValue] = ["blob": .string(digest.description)]
        if let name { body["name"] = .string(name) }
        return try await dated("POST", "/v1/shares", json: JSONValue.object(body), as: Share.self)
    }

    /// Shares one asset (its largest variant) through a link.
    public func share(asset digest: Digest, name: String? = nil) async throws -> Share {
        var body: [String: JSONValue] = ["asset": .string(digest.description)]
        if let name { body["name"] = .string(name) }
        return try await dated("POST", "/v1/shares", json: JSONValue.object(body), as: Share.self)
    }

    /// The member's share links, newest first.
    public func shares() async throws -> [Share] {
        struct Shares: Decodable { var shares: [Share] }
        return try await dated("GET", "/v1/shares", as: Shares.self).shares
    }

    /// Revokes a share link: it answers 404 from now on.
    public func revokeShare(id: String) async throws {
        _ = try await exchange("DELETE", "/v1/shares/\(Self.pathSegment(id))")
    }

    // MARK: Packs and assets

    /// The packs the caller may see: their group's and public ones.
    public func packs() async throws -> [PackListing] {
        struct Packs: Decodable { var packs: [PackListing] }
        return try await dated("GET", "/v1/packs", as: Packs.self).packs
    }

    /// A page of assets matching `search`.
    public func assets(_ search: AssetSearch = AssetSearch()) async throws -> AssetPage {
        let fields: [(String, String?)] = [
            ("q", search.text), ("kind", search.kind), ("pack", search.pack), ("footprint", search.footprint),
            ("grid", search.grid?.rawValue), ("limit", search.limit.map(String.init)), ("cursor", search.cursor),
        ]
        let query = fields.compactMap { name, value in value.map { "\(name)=\(Self.queryValue($0))" } }.joined(separator: "&")
        return try await dated("GET", "/v1/assets" + (query.isEmpty ? "" : "?" + query), as: AssetPage.self)
    }

    // MARK: Requests

    /// The decoder for answers that carry dates.
    static let datedDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// Sends a request and decodes its JSON answer with ``datedDecoder``.
    func dated<T: Decodable>(_ method: String, _ path: String, json: (any Encodable & Sendable)? = nil, as type: T.Type) async throws -> T {
        let (response, data) = try await exchange(method, path, json: json)
        return try Self.reading(method, path, response) { try Self.datedDecoder.decode(T.self, from: data) }
    }

    /// Percent-encodes a query value (a space as `%20`: the server does not read `+` as a space).
    static func queryValue(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
