import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HoardTestSupport
import HummingbirdTesting
import NIOCore
import Testing

/// Helpers for the tests of uploads, refs and shares.
extension Fixture {
    /// A picture no one has uploaded yet: a PNG header (IHDR with a good CRC), a private chunk of random bytes
    /// (kept by the metadata stripper), `extra` chunks before IEND, and IEND. Hoard checks pictures by their header,
    /// so this is all an upload needs; no sample pack has to be imported.
    func freshPicture(extra: [(type: String, data: [UInt8])] = []) async throws -> [UInt8] {
        let chunk = PNGBytes.chunk
        let header = bigEndian(64) + bigEndian(64) + [8, 6, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("hoRd", randomBytes(16))
            + extra.flatMap { chunk($0.type, $0.data) } + chunk("IEND", [])
    }

    /// An asset digest of a pack.
    func assetDigest(_ pack: String) throws -> String {
        try #require(try assets(pack).first?.digest.description)
    }
}

extension TestClientProtocol {
    /// Creates a session as `token` whose map references `asset` (or no art); returns its id and join code.
    func makeSession(token: String, asset: String? = nil, name: String = "Crypt") async throws -> (id: String, code: String) {
        // A map in the shape of Schemas/map.schema.json.
        let map: [String: Any] = [
            "schema": "hoard.map/v1", "grid": ["width": 8, "height": 6], "background": ["tiles": [] as [Any]],
            "drawing": ["walls": [] as [Any], "strokes": [] as [Any]], "objects": [] as [Any],
            "tokens": asset.map { [["id": "t1", "asset": $0, "x": 1, "y": 1, "number": 1]] } ?? [],
        ]
        let created = try await json(.post, "/v1/sessions", token: token, body: ["name": name, "map": map])
        #expect(created.status == .created)
        return (try #require(created.json["id"] as? String), try #require(created.json["code"] as? String))
    }

    /// Joins a session by code; returns the participant token.
    func joinSession(code: String, name: String) async throws -> String {
        let joined = try await json(.post, "/v1/sessions/join", body: ["code": code, "name": name])
        return try #require(joined.json["participantToken"] as? String)
    }

    /// POST /v1/uploads with a body; returns the status and the JSON answer.
    func uploadPicture(_ bytes: [UInt8], token: String?, query: String = "") async throws -> (status: HTTPResponse.Status, json: [String: Any]) {
        try await execute(uri: "/v1/uploads" + query, method: .post, headers: auth(token, [.contentType: "image/png"]), body: buffer(bytes)) { response in
            (response.status, (try? JSONSerialization.jsonObject(with: Data(response.bytes))) as? [String: Any] ?? [:])
        }
    }

    /// The status (and bytes) of a GET.
    func fetch(_ uri: String, token: String?, headers: HTTPFields = [:]) async throws -> (status: HTTPResponse.Status, bytes: [UInt8]) {
        try await execute(uri: uri, method: .get, headers: auth(token, headers)) { ($0.status, $0.bytes) }
    }
}

func bigEndian(_ value: UInt32) -> [UInt8] { PNGBytes.bigEndian(value) }

/// CRC-32 (ISO-HDLC, as PNG uses it).
func crc32(_ bytes: [UInt8]) -> UInt32 { PNGBytes.crc32(bytes) }
