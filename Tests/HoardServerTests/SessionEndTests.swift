import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import Testing

/// `DELETE /v1/sessions/{id}`: the host ends a session, and everything people put into it goes.
@Suite(.timeLimit(.minutes(2))) struct SessionEndTests {
    @Test func anEndedSessionTakesItsParticipantsCodeEventsAndUploadsWithIt() async throws {
        try await Fixture.with(packs: false) { fixture in
            let (photo, drawing) = (try await fixture.freshPicture(), try await fixture.freshPicture())
            let red = try #require(try fixture.hoard.catalog.group(named: "red")?.id)
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                let other = try await client.makeSession(token: fixture.red, name: "Other room")
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let eve = try await client.joinSession(code: other.code, name: "Eve")
                let before = try fixture.hoard.catalog.usage(groupId: red)
                let photoDigest = try #require(try await client.uploadPicture(photo, token: ann).json["digest"] as? String)
                let drawingDigest = try #require(
                    try await client.uploadPicture(drawing, token: fixture.red, query: "?session=\(room.id)").json["digest"] as? String)
                #expect(try await client.fetch("/v1/blobs/\(photoDigest)", token: ann).status == .ok)

                try await client.execute(uri: "/v1/sessions/\(room.id)", method: .delete, headers: auth(fixture.red)) { response in
                    #expect(response.status == .noContent, "\(response.text)")
                }
                // Its participant's token is unknown at once, everywhere.
                for path in ["/v1/sessions/\(room.id)", "/v1/blobs/\(photoDigest)", "/v1/uploads/\(photoDigest)", "/v1/uploads"] {
                    try await client.execute(uri: path, method: .get, headers: auth(ann)) { $0.expectError(.unauthorized, "UNAUTHORIZED") }
                }
                let joined = try await client.json(.post, "/v1/sessions/join", body: ["code": room.code, "name": "Late"])
                #expect(joined.status == .notFound && (joined.json["error"] as? [String: Any])?["code"] as? String == "UNKNOWN_CODE")
                #expect(try await client.json(.get, "/v1/sessions/\(room.id)", token: fixture.red).status == .notFound)
                let lobby = try await client.json(.get, "/v1/sessions", token: fixture.red)
                #expect((lobby.json["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [other.id])
                for digest in [photoDigest, drawingDigest] {
                    #expect(try await client.fetch("/v1/uploads/\(digest)", token: fixture.red).status == .notFound)
                }
                #expect(try await client.uploadList(token: fixture.red).total == 0)
                #expect(try fixture.hoard.catalog.usage(groupId: red) == before)
                #expect(try fixture.hoard.catalog.events(session: room.id, after: 0).isEmpty)
                #expect(try fixture.hoard.catalog.participants(session: room.id).isEmpty)
                // The other session is untouched.
                #expect(try await client.json(.get, "/v1/sessions/\(other.id)", token: eve).status == .ok)
                // And garbage collection frees the uploads' bytes.
                _ = try await fixture.hoard.collectGarbage()
                for digest in [photoDigest, drawingDigest] {
                    #expect(try await fixture.blobExists(try #require(Digest(digest))) == false)
                }
            }
        }
    }

    @Test func onlyTheHostOrAnAdminEndsASession() async throws {
        try await Fixture.with(packs: false) { fixture in
            let notHost = try fixture.hoard.createToken(group: "red", label: "someone else", isAdmin: false)
            try await fixture.run { client in
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let end = { (token: String?) in
                    try await client.execute(uri: "/v1/sessions/\(room.id)", method: .delete, headers: auth(token)) { $0 }
                }
                try await end(fixture.blue).expectError(.notFound, "NOT_FOUND")
                try await end(notHost).expectError(.forbidden, "FORBIDDEN")
                try await end(ann).expectError(.forbidden, "FORBIDDEN")
                try await end(nil).expectError(.unauthorized, "UNAUTHORIZED")
                #expect(try await client.json(.get, "/v1/sessions/\(room.id)", token: ann).status == .ok, "still running")
                #expect(try await end(fixture.admin).status == .noContent)
                try await end(fixture.red).expectError(.notFound, "NOT_FOUND")
                try await client.execute(uri: "/v1/sessions/no-such-session", method: .delete, headers: auth(fixture.red)) {
                    $0.expectError(.notFound, "NOT_FOUND")
                }
            }
        }
    }

    @Test func endingASessionClosesItsLiveSockets() async throws {
        try await Fixture.with(packs: false) { fixture in
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                let room = try await client.makeSession(token: fixture.red)
                let ann = try await client.joinSession(code: room.code, name: "Ann")
                let timeout = Duration.seconds(60)
                let clock = ContinuousClock()
                let start = clock.now
                async let received = LiveClient.exchange(port: port, session: room.id, token: ann, until: 1000, timeout: timeout)
                let isConnected = try await Fixture.eventually {
                    let shown = try await client.json(.get, "/v1/sessions/\(room.id)", token: fixture.red)
                    return (shown.json["participants"] as? [[String: Any]])?.first?["connected"] as? String == "yes"
                }
                #expect(isConnected)
                #expect(try await client.json(.delete, "/v1/sessions/\(room.id)", token: fixture.red).status == .noContent)
                let events = LiveClient.objects(try await received)
                #expect(clock.now - start < timeout, "the server closed the socket; the client did not wait out its timeout")
                #expect(events.contains { $0["type"] as? String == "presence" }, "it was connected: \(events)")
            }
        }
    }
}
