import Foundation
import HoardCore

/// Whether someone arrived or went.
public enum PresenceChange: String, Sendable, Hashable, Codable {
    /// They opened a live channel.
    case joined
    /// Their last live channel closed.
    case left
}

/// What a session's live channel delivers: the server's events, in sequence order, and the channel's own news
/// (connected, disconnected and retrying, art prefetched).
public enum LiveEvent: Sendable {
    /// Someone changed the table: `op` is the change as this client's view shows it (a ``TableOp`` in its wire form,
    /// see `TableOp(json:)`), `from` the participant who sent it.
    case op(seq: Int64, from: String, op: JSONValue)
    /// Someone points at a place (not kept, no sequence number).
    case ping(from: String, x: Double, y: Double)
    /// A participant uploaded a picture into the session (sent to them and the host only).
    case upload(seq: Int64, by: String, digest: Digest, size: Int64, mediaType: String)
    /// Someone joined or left.
    case presence(seq: Int64, change: PresenceChange, participant: SessionState.Participant)
    /// The session now references more art: fetch it (a channel given a cache prefetches it by itself).
    case assets(seq: Int64, manifest: SessionManifest)
    /// Someone took hold of an entity (the first grab wins; everyone sees the same winner).
    case grab(seq: Int64, entity: String, by: String)
    /// An entity was let go.
    case release(seq: Int64, entity: String, by: String)
    /// The host replaced the whole map.
    case map(seq: Int64, mapDigest: Digest, map: JSONValue, manifest: SessionManifest)
    /// The client was too far behind: this is the whole current map; events continue after `seq`.
    case snapshot(seq: Int64, mapDigest: Digest, map: JSONValue)
    /// The server refused a message this client sent (`FORBIDDEN`, `GRAB_DENIED`, `RATE_LIMITED`, …).
    case error(code: String, message: String)
    /// The server rolled dice for `from` (a `roll` op's answer): `event` is the `rolled` event as sent, its `roll` the
    /// typed record's wire form (``DiceRoll``); a blind roll's roller gets it without `roll`. `seq` is the roll's index.
    case rolled(seq: Int64, from: String, event: JSONValue)
    /// The session's dice seed was revealed (its host asked, or it ended): every roll can now be recomputed
    /// (``DiceAudit``); `blind` holds the blind rolls' events whole.
    case revealed(seq: Int64, seed: DiceSeed, blind: [JSONValue])
    /// An event type this client does not know, whole.
    case unknown(type: String, seq: Int64?, body: JSONValue)
    /// The channel is open, continuing after `since` (nil: from the start of the session's log).
    case connected(since: Int64?)
    /// The channel dropped; it reconnects by itself after `retryIn`.
    case disconnected(HoardClientError, retryIn: Duration)
    /// Art that events referenced was fetched into the channel's cache.
    case prefetched(SyncSummary)
    /// Fetching art that events referenced failed; the channel goes on.
    case prefetchFailed(HoardClientError)

    /// The event's sequence number, for events the server numbers.
    public var seq: Int64? {
        switch self {
        case .op(let seq, _, _), .presence(let seq, _, _), .assets(let seq, _), .grab(let seq, _, _), .release(let seq, _, _),
             .map(let seq, _, _, _), .snapshot(let seq, _, _), .upload(let seq, _, _, _, _), .rolled(let seq, _, _),
             .revealed(let seq, _, _):
            seq
        case .unknown(_, let seq, _): seq
        case .error, .ping, .connected, .disconnected, .prefetched, .prefetchFailed: nil
        }
    }

    /// Reads one server message; throws ``HoardClientError/Code-swift.struct/badResponse`` when it is not a JSON
    /// object with a `type`, or a known type with missing fields.
    public static func decode(_ text: String) throws -> LiveEvent {
        try decodeWithOpId(text).event
    }

    /// Reads one server message and the client op id it answers (an `op` event, an `error` or an `ack`), if any.
    static func decodeWithOpId(_ text: String) throws -> (event: LiveEvent, opId: String?) {
        let data = Data(text.utf8)
        let decoder = JSONDecoder()
        do {
            let body = try decoder.decode(JSONValue.self, from: data)
            guard let type = body["type"]?.stringValue else {
                throw HoardClientError(.badResponse, "a live message has no \"type\": \(text.prefix(200))")
            }
            let seq: Int64? = if case .number(let number)? = body["seq"] { Int64(exactly: number) } else { nil }
            func required() throws -> Int64 {
                guard let seq else { throw HoardClientError(.badResponse, "a live '\(type)' event has no \"seq\"") }
                return seq
            }
            let opId = body["opId"]?.stringValue
            switch type {
            case "op":
                let event = try decoder.decode(OpFields.self, from: data)
                return (.op(seq: try required(), from: event.from, op: event.op), opId)
            case "ping":
                let event = try decoder.decode(OpFields.self, from: data)
                guard case .number(let x)? = event.op["x"], case .number(let y)? = event.op["y"] else {
                    throw HoardClientError(.badResponse, "a ping has no place: \(text.prefix(200))")
                }
                return (.ping(from: event.from, x: x, y: y), opId)
            case "upload":
                let event = try decoder.decode(UploadFields.self, from: data)
                return (.upload(seq: try required(), by: event.by, digest: event.digest, size: event.size, mediaType: event.mediaType), nil)
            case "presence":
                let event = try decoder.decode(PresenceFields.self, from: data)
                return (.presence(seq: try required(), change: event.event, participant: event.participant), nil)
            case "assets":
                return (.assets(seq: try required(), manifest: try decoder.decode(SessionManifest.self, from: data)), nil)
            case "grab", "release":
                let event = try decoder.decode(GrabFields.self, from: data)
                return (type == "grab"
                    ? .grab(seq: try required(), entity: event.entity, by: event.by)
                    : .release(seq: try required(), entity: event.entity, by: event.by), nil)
            case "map":
                let event = try decoder.decode(MapFields.self, from: data)
                return (.map(seq: try required(), mapDigest: event.mapDigest, map: event.map,
                             manifest: try decoder.decode(SessionManifest.self, from: data)), nil)
            case "snapshot":
                let event = try decoder.decode(MapFields.self, from: data)
                return (.snapshot(seq: try required(), mapDigest: event.mapDigest, map: event.map), nil)
            case "rolled":
                guard let from = body["from"]?.stringValue else { throw HoardClientError(.badResponse, "a rolled event has no \"from\"") }
                return (.rolled(seq: try required(), from: from, event: body), opId)
            case "revealed":
                guard let seed = body["seed"]?.stringValue.flatMap(DiceSeed.init), case .array(let blind)? = body["blind"] else {
                    throw HoardClientError(.badResponse, "a revealed event needs a \"seed\" and \"blind\"")
                }
                return (.revealed(seq: try required(), seed: seed, blind: blind), nil)
            case "error":
                let event = try decoder.decode(ErrorFields.self, from: data)
                return (.error(code: event.code, message: event.message), opId)
            default:
                return (.unknown(type: type, seq: seq, body: body), opId)
            }
        } catch let error as HoardClientError {
            throw error
        } catch {
            throw HoardClientError(.badResponse, "cannot read a live message: \(text.prefix(200))", cause: SendableError(error))
        }
    }

    private struct OpFields: Decodable {
        var from: String
        var op: JSONValue
    }

    private struct PresenceFields: Decodable {
        var event: PresenceChange
        var participant: SessionState.Participant
    }

    private struct UploadFields: Decodable {
        var by: String
        var digest: Digest
        var size: Int64
        var mediaType: String
    }

    private struct GrabFields: Decodable {
        var entity: String
        var by: String
    }

    private struct MapFields: Decodable {
        var mapDigest: Digest
        var map: JSONValue
    }

    private struct ErrorFields: Decodable {
        var code: String
        var message: String
    }
}
