import Foundation
import HTTPTypes
import HoardServer
import HummingbirdTesting
import NIOCore
import Testing

/// Every JSON body has a limit and a body over it is a 413 with its code, never a 500; a map's limit is its own.
@Suite struct BodyLimitTests {
    /// `{"name":"x","pad":"aaa…"}` of about `size` bytes, with `map` in it when given.
    static func padded(size: Int, map: String? = nil) -> ByteBuffer {
        var buffer = ByteBuffer(string: #"{"name":"x","#)
        if let map { buffer.writeString(#""map":\#(map),"#) }
        buffer.writeString(#""pad":""#)
        buffer.writeRepeatingByte(UInt8(ascii: "a"), count: size)
        buffer.writeString(#""}"#)
        return buffer
    }

    @Test func aJSONBodyOverItsLimitIs413OnEveryRoute() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.router) { client in
            let auth: HTTPFields = [.authorization: "Bearer \(fixture.hostToken)", .contentType: "application/json"]
            let routes: [(HTTPRequest.Method, String)] = [
                (.post, "/v1/blobs/missing"), (.post, "/v1/blobs/batch"), (.patch, "/v1/packs/dungeon-basics"), (.put, "/v1/refs/last"),
                (.post, "/v1/sessions/join"), (.post, "/v1/shares"), (.post, "/v1/sessions"), (.post, "/v1/maps"),
            ]
            for (method, path) in routes {
                let size = path == "/v1/sessions" || path == "/v1/maps" ? 33 << 20 : 5 << 20
                try await client.execute(uri: path, method: method, headers: auth, body: Self.padded(size: size)) { response in
                    _ = response.expectError(.contentTooLarge, "PAYLOAD_TOO_LARGE")
                }
            }
            // A map body of 5 MB, over the 4 MiB of other bodies, is within a map's limit.
            let texture = try #require(try fixture.assets("texture").first)
            let body = Self.padded(size: 5 << 20, map: #"{"schema":"hoard.map/v1","grid":{"width":8,"height":8},"floor":"\#(texture)"}"#)
            try await client.execute(uri: "/v1/sessions", method: .post, headers: auth, body: body) { response in
                #expect(response.status == .created, "\(String(buffer: response.body).prefix(300))")
            }
            try await client.execute(uri: "/v1/sessions", method: .post, headers: auth, body: ByteBuffer(string: "{\"name\":")) {
                response in
                _ = response.expectError(.badRequest, "BAD_REQUEST")
            }
        }
    }
}

/// Large maps: a v1 map is stored and answered in the palette form.
@Suite struct PaletteMapTests {
    @Test func aV1MapIsAnsweredInThePaletteForm() async throws {
        let fixture = try await SessionFixture()
        defer { fixture.remove() }
        let textures = Array(try fixture.assets("texture").prefix(3))
        let app = try await buildApplication(fixture.configuration)
        try await app.test(.router) { client in
            // Three rooms of 20 × 60 tiles: 3,600 tiles of ~90 bytes each in v1.
            let tiles = (0..<3_600).map { ["x": $0 % 60, "y": $0 / 60, "texture": textures[($0 % 60) / 20]] as [String: Any] }
            let map: [String: Any] = ["schema": "hoard.map/v1", "grid": ["width": 60, "height": 60], "background": ["tiles": tiles],
                                      "drawing": ["walls": [], "strokes": []], "objects": [], "tokens": []]
            let created = try await client.json(.post, "/v1/sessions", token: fixture.hostToken, body: ["name": "Big", "map": map])
            #expect(created.status == .created)
            let id = try #require(created.json["id"] as? String)
            let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": try #require(created.json["code"] as? String), "name": "Ana"])
            let shown = try await client.json(.get, "/v1/sessions/\(id)", token: try #require(joined.json["participantToken"] as? String))
            let answered = try #require(shown.json["map"] as? [String: Any])
            #expect(answered["schema"] as? String == "hoard.map/v2")
            let background = try #require(answered["background"] as? [String: Any])
            #expect(background["palette"] as? [String] == textures)
            #expect((background["rects"] as? [[Int]]) == [[0, 0, 20, 60, 0], [20, 0, 20, 60, 1], [40, 0, 20, 60, 2]])
            let listed = ((shown.json["manifest"] as? [String: Any])?["assets"] as? [[String: Any]])?.compactMap { $0["digest"] as? String }
            #expect(Set(listed ?? []) == Set(textures), "the palette's art is in the manifest")
        }
    }
}
