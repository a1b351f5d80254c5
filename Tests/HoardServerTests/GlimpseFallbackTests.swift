import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Logging
import Testing

@testable import HoardServer

/// A glimpse is ended by the replica that sent it; every other replica following the session ends it too, a grace
/// after, should its sender have died in between.
@Suite(.timeLimit(.minutes(2)))
struct GlimpseFallbackTests {
    @Test func aGlimpseWhoseSenderDiedIsEndedByAReplicaThatFollowedIt() async throws {
        try await TableSocketTests.with { table in
            let (_, bo) = try await table.join("Bo")
            // A second hub over the same catalog stands for another replica.
            let hoard = try Hoard(dataDirectory: table.fixture.directory)
            let hub = SessionHub(
                catalog: hoard.catalog, storage: StoredTables(hoard: hoard), access: try AccessIndex(catalog: hoard.catalog),
                logger: Logger(label: "test"))
            let seq = try await hub.current(session: table.session).seq + 1
            // The sender logs a 1-second glimpse of the hidden ogre to Bo and dies before it ends.
            let body = #"{"from":"host:gm","op":{"kind":"reveal","seconds":1,"to":["\#(bo)"],"token":"ogre"},"seq":\#(seq),"type":"op"}"#
            try hoard.catalog.appendEvent(session: table.session, seq: seq, body: body)
            await hub.receive(session: table.session, event: LoggedEvent(seq: seq, body: body, views: nil))
            #expect(try await hub.current(session: table.session).table.glimpses["ogre"] == [bo])
            // The follower ends it, as the server, after its second and the grace.
            let ended = try await Fixture.eventually(seconds: 20) {
                try hoard.catalog.events(session: table.session, after: seq).contains { event in
                    event.body.contains(#""from":"server""#) && event.body.contains(#""kind":"hide""#) && event.body.contains(bo)
                }
            }
            let logged = try hoard.catalog.events(session: table.session, after: seq).map(\.body)
            #expect(ended, "the follower logged the glimpse's end: \(logged)")
            #expect(try await hub.current(session: table.session).table.glimpses["ogre"] == nil)
        }
    }
}
