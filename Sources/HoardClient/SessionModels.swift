import Foundation
import HoardCore

/// Every blob a session's map needs: its assets (with their LOD variants) and plain blobs.
public struct SessionManifest: Sendable, Hashable, Codable {
    /// Referenced assets, each with its variants.
    public var assets: [ManifestAsset]
    /// Referenced blobs that are not assets (plain uploaded pictures).
    public var blobs: [ManifestBlob]

    /// A manifest.
    public init(assets: [ManifestAsset] = [], blobs: [ManifestBlob] = []) {
        self.assets = assets
        self.blobs = blobs
    }

    public init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case assets, blobs }
        let container = try decoder.container(keyedBy: Keys.self)
        assets = try container.decodeIfPresent([ManifestAsset].self, forKey: .assets) ?? []
        blobs = try container.decodeIfPresent([ManifestBlob].self, forKey: .blobs) ?? []
    }
}

/// One asset of a manifest: the art a map names by its descriptor's digest, with its variants and preview. The same
/// type the server lists assets with (``AssetListing``, in HoardCore).
public typealias ManifestAsset = AssetListing

/// A game session as `GET /v1/sessions/{id}` shows it.
public struct SessionState: Sendable, Hashable, Decodable {
    /// What the server says of the session besides its map and manifest.
    public var fields: SessionFields
    /// The session's id.
    public var id: String { fields.id }
    /// Its name.
    public var name: String { fields.name }
    /// The host's token label (their participant id is `host:` and it; not for showing: see ``hostSeat``).
    public var host: String { fields.host }
    /// The host as the players see them: their display name, and whether they are connected.
    public var hostSeat: Participant? { fields.hostSeat }
    /// `group` or `private`, when the server says.
    public var visibility: String? { fields.visibility }
    /// The digest of the current map document.
    public var mapDigest: Digest {
        get { fields.mapDigest }
        set { fields.mapDigest = newValue }
    }
    /// The current map document. After a warm join it comes from the cache and is read on first use.
    public var map: JSONValue {
        get { mapSource.value }
        set { mapSource = Deferred(newValue) }
    }
    /// The sequence number of the last event: open the live channel with `since` = this.
    public var seq: Int64 {
        get { fields.seq }
        set { fields.seq = newValue }
    }
    /// Everything the map references. After a warm join it comes from the cache and is read on first use.
    public var manifest: SessionManifest {
        get { manifestSource.value }
        set { manifestSource = Deferred(newValue) }
    }
    /// Who joined, when the server lists them.
    public var participants: [Participant] {
        get { fields.participants }
        set { fields.participants = newValue }
    }
    /// Who you are at the table, when the server says.
    public var you: SessionFields.Seat? { fields.you }
    private var mapSource: Deferred<JSONValue>
    private var manifestSource: Deferred<SessionManifest>

    /// Someone in a session.
    public typealias Participant = SessionFields.Participant

    enum Keys: String, CodingKey { case map, manifest }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        fields = try SessionFields(from: decoder)
        mapSource = Deferred(try container.decode(JSONValue.self, forKey: .map))
        manifestSource = Deferred(try container.decodeIfPresent(SessionManifest.self, forKey: .manifest) ?? SessionManifest())
    }

    /// The fields of an answer to `GET /v1/sessions/{id}?known=…` that left out the map and its manifest, with those
    /// two made on first use from what the client keeps.
    init(fieldsOf value: JSONValue, map: @escaping @Sendable () -> JSONValue, manifest: @escaping @Sendable () -> SessionManifest) throws {
        fields = try JSONValueDecoder.decode(SessionFields.self, from: value)
        mapSource = Deferred(making: map)
        manifestSource = Deferred(making: manifest)
    }
}

/// A value made on first use, then kept: what leaves a warm join's map and manifest unread until the app asks.
final class Deferred<Value: Sendable>: Sendable {
    private enum State {
        case ready(Value)
        case pending(@Sendable () -> Value)
    }
    private let state: Locked<State>

    init(_ value: Value) { state = Locked(.ready(value)) }
    init(making: @escaping @Sendable () -> Value) { state = Locked(.pending(making)) }

    var value: Value {
        state.withLock { state in
            switch state {
            case .ready(let value):
                return value
            case .pending(let make):
                let value = make()
                state = .ready(value)
                return value
            }
        }
    }
}

extension Deferred: Equatable, Hashable where Value: Hashable {
    static func == (lhs: Deferred, rhs: Deferred) -> Bool { lhs.value == rhs.value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

/// What `join(code:name:)` gives: who you are in the session, the session itself, and a client that acts as you.
public struct JoinedSession: Sendable {
    /// The session's id.
    public var sessionId: String
    /// Your participant id (the `from`/`by` of your live events).
    public var participantId: String
    /// Your participant token: it reads exactly this session and the blobs it references.
    public var participantToken: String
    /// The key to join the group's next session with (``HoardClient/join(code:name:playerKey:cache:)``), so that your
    /// dice statistics continue; nil after a rejoin. Keep it like a password: it is your record.
    public var playerKey: String? = nil
    /// The session, its map and manifest, as fetched right after joining.
    public var session: SessionState
    /// A client on the same connections that authenticates with ``participantToken``.
    public var client: HoardClient
    /// What the cache held of the map when the join found it there (a warm join).
    var snapshot: SessionSnapshot?
    /// The map's and manifest's JSON as the server sent them, when it did.
    var received: (map: Data, manifest: Data)?

    /// Fetches the session's blobs into `cache` (see ``HoardClient/sync(_:into:progress:)``). After a warm join,
    /// when the cache still holds every blob, it answers without reading the manifest or making a request; after a
    /// sync that leaves every blob cached, the cache keeps the map and manifest for the next join of this map.
    public func sync(into cache: BlobCacheDirectory, progress: AsyncStream<SyncProgress>.Continuation? = nil) async throws -> SyncSummary {
        let started = ContinuousClock.now
        let pixelsPerTile = client.configuration.pixelsPerTile
        if let snapshot, snapshot.mapDigest == session.mapDigest,
           let summary = snapshot.summaryIfCached(in: cache, pixelsPerTile: pixelsPerTile, started: started) {
            progress?.yield(SyncProgress(
                phase: .done, blobsDone: 0, blobsTotal: 0, bytesDone: 0, bytesTotal: 0, blobsCached: summary.blobs, isFirstRenderReached: true))
            progress?.finish()
            return summary
        }
        let manifest = session.manifest
        let summary = try await client.sync(manifest, into: cache, progress: progress)
        if let received {
            // Best effort: without it the next join is only as fast as this one.
            let blobs = SyncPlan(manifest: manifest, pixelsPerTile: pixelsPerTile, isCached: { _ in true }).wanted.map(\.digest)
            try? cache.save(SessionSnapshot(
                mapDigest: session.mapDigest, map: received.map, pixelsPerTile: pixelsPerTile, assets: manifest.assets.count, blobs: blobs,
                manifest: received.manifest))
        }
        return summary
    }

    /// The picture of `asset` to draw at `pixelsPerTile` device pixels a tile, fetched into `cache` unless it is there
    /// (see ``HoardClient/variant(for:pixelsPerTile:in:)``).
    public func variant(for asset: ManifestAsset, pixelsPerTile: Double, in cache: BlobCacheDirectory) async throws -> AssetPicture {
        try await client.variant(for: asset, pixelsPerTile: pixelsPerTile, in: cache)
    }

    /// The session's live channel from where the fetched state ends, prefetching new art into `cache` if given.
    public func live(prefetchInto cache: BlobCacheDirectory? = nil, options: LiveOptions = LiveOptions()) -> LiveChannel {
        client.liveChannel(sessionId: sessionId, since: session.seq, prefetchInto: cache, options: options)
    }
}

/// Who may see a session in the lobby.
public enum SessionVisibility: String, Sendable, Codable {
    /// Every member of the host's group sees it in the lobby.
    case group
    /// Only people with the join code find it.
    case `private`
}

/// What `createSession` gives back.
public struct CreatedSession: Sendable, Hashable, Codable {
    /// The session's id.
    public var id: String
    /// The code players join with (`XXXX-XXXX`).
    public var code: String
    /// Its name.
    public var name: String
    /// The digest of its map document.
    public var mapDigest: Digest
    /// Blobs uploaded because the server lacked them, in upload order.
    public var uploaded: [Digest]

    enum Keys: String, CodingKey { case id, code, name, mapDigest, uploaded }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(String.self, forKey: .id)
        code = try container.decode(String.self, forKey: .code)
        name = try container.decode(String.self, forKey: .name)
        mapDigest = try container.decode(Digest.self, forKey: .mapDigest)
        uploaded = try container.decodeIfPresent([Digest].self, forKey: .uploaded) ?? []
    }
}
