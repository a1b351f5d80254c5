import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import NIOCore
import Testing

/// Helpers for the tests of uploads, refs and shares.
extension Fixture {
    /// A picture no pack holds: a sample pack's PNG with random bytes after its end (its header is unchanged).
    func freshPicture() async throws -> [UInt8] {
        try await picture(in: Fixture.dungeon).bytes + randomBytes(32)
    }

    /// An asset digest of a pack.
    func assetDigest(_ pack: String) throws -> String {
        try #require(try assets(pack).first?.digest.description)
    }
}

extension TestClientProtocol {
    /// Creates a session as `token` whose map references `asset`; returns its id and join code.
    func makeSession(token: String, asset: String, name: String = "Crypt") async throws -> (id: String, code: String) {
        // A map in the shape of Schemas/map.schema.json.
        let map: [String: Any] = [
            "schema": "hoard.map/v1", "grid": ["width": 8, "height": 6], "background": ["tiles": [] as [Any]],
            "drawing": ["walls": [] as [Any], "strokes": [] as [Any]], "objects": [] as [Any],
            "tokens": [["id": "t1", "asset": asset, "x": 1, "y": 1, "number": 1]],
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
