import Foundation
import HTTPTypes
import HoardCore
import HoardServer
import HummingbirdTesting
import NIOCore
import Testing

/// Found by Harness/crash.py: an acknowledged upload was not yet readable when a join, applied while the upload's
/// access rebuild read the catalog, made that rebuild stale and it was dropped (the blob showed up only at the next
/// one-second poll, so a host that uploaded its missing art and retried got MISSING_BLOBS again).
@Suite struct AccessIndexRaceTests {
    @Test func anUploadIsReadableAsSoonAsItIsAcknowledgedEvenDuringAJoinStorm() async throws {
        try await Fixture.with { fixture in
            try await fixture.run { client in
                let created = try await client.json(.post, "/v1/sessions", token: fixture.red, body: ["name": "storm", "map": ["a": 1]])
                let code = try #require(created.json["code"] as? String)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for n in 0..<150 { _ = try await client.json(.post, "/v1/sessions/join", body: ["code": code, "name": "p\(n)"]) }
                    }
                    group.addTask {
                        for _ in 0..<40 {
                            let bytes = randomBytes(2048)
                            let digest = digest(of: bytes)
                            try await client.execute(uri: "/v1/blobs/\(digest)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) { response in
                                #expect(response.status == .created)
                            }
                            try await client.execute(
                                uri: "/v1/blobs/missing", method: .post, headers: auth(fixture.red, [.contentType: "application/json"]),
                                body: digestList([digest.description])
                            ) { response in
                                let missing = try response.decode(MissingList.self).missing
                                #expect(missing.isEmpty, "an acknowledged upload is not readable yet")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }
}
