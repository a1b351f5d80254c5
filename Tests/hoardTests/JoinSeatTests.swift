import Foundation
import HoardTestSupport
import Testing

/// `hoard join` again with the same cache, code and name takes the same seat back.
@Suite(.timeLimit(.minutes(5))) struct JoinSeatTests {
    @Test func joiningAgainFromTheSameCacheTakesTheSameSeatBack() async throws {
        try await ServedData.with { served in
            let (data, token, port, url) = (served.data, served.token, served.port, served.url)
            let map = data + "/room.json"
            try Data(#"{"schema":"hoard.map/v1","grid":{"width":4,"height":3},"tokens":[]}"#.utf8).write(to: URL(fileURLWithPath: map))
            let created = try CLI.run(["session", "create", url, "--map", map, "--token", token])
            let code = try #require(created.stdout.components(separatedBy: "join code: ").last?.prefix(9).description, "\(created.stderr)")
            let cache = data + "/cache"

            func seats(_ name: String) async throws -> [String] {
                let sessions = try JSONSerialization.jsonObject(with: Data(try await CLI.get(port: port, path: "/v1/sessions", token: token).body))
                let id = try #require(((sessions as? [String: Any])?["sessions"] as? [[String: Any]])?.first?["id"] as? String)
                let session = try JSONSerialization.jsonObject(with: Data(try await CLI.get(port: port, path: "/v1/sessions/\(id)", token: token).body))
                let participants = (session as? [String: Any])?["participants"] as? [[String: Any]] ?? []
                return participants.filter { $0["name"] as? String == name }.compactMap { $0["id"] as? String }
            }
            let first = try CLI.run(["join", url, code, "--cache", cache, "--name", "pia"])
            #expect(first.status == 0, "\(first.stderr)")
            let again = try CLI.run(["join", url, code, "--cache", cache, "--name", "pia"])
            #expect(again.status == 0 && again.stderr.contains("Back in your seat"), "\(again.stderr)")
            #expect(try await seats("pia").count == 1, "one seat for pia, not two")
            let attributes = try FileManager.default.attributesOfItem(atPath: cache + "/seats.json")
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "the seat's token is readable by its owner only")
            // Another name from the same cache is another player.
            #expect(try CLI.run(["join", url, code, "--cache", cache, "--name", "bo"]).status == 0)
            let bo = try await seats("bo")
            let pia = try await seats("pia")
            #expect(bo.count == 1 && pia.count == 1)
        }
    }
}
