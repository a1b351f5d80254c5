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
