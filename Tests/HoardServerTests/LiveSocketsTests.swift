import Foundation
import Testing

@testable import HoardServer

/// The register of members' live sockets that revocation closes (issue 43).
@Suite struct LiveSocketsTests {
    @Test func aRevokedTokensSocketsAreMarkedAndItsLateSocketIsRefused() {
        let sockets = LiveSockets()
        let (phone, tablet, other) = (UUID(), UUID(), UUID())
        #expect(sockets.add(phone, session: "s1", tokenHash: "gm"))
        #expect(sockets.add(tablet, session: "s2", tokenHash: "gm"))
        #expect(sockets.add(other, session: "s1", tokenHash: "ann"))
        let hit = sockets.revoke(["gm"])
        #expect(Set(hit.map(\.connection)) == [phone, tablet] && Set(hit.map(\.session)) == ["s1", "s2"])
        #expect(sockets.isRevoked(phone) && sockets.isRevoked(tablet) && !sockets.isRevoked(other))
        // A socket of that token admitted just before the revocation registers after it: it is refused.
        #expect(!sockets.add(UUID(), session: "s1", tokenHash: "gm"))
        sockets.remove(phone)
        #expect(!sockets.isRevoked(phone), "forgotten once closed")
        #expect(sockets.revoke(["nobody"]).isEmpty)
    }
}
