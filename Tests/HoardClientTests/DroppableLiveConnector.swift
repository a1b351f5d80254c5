import Foundation
import HoardClientNIO

@testable import HoardClient

/// The command line's live transport (``NIOLiveConnector``) with what tests need besides: every URL connected to,
/// and a way to cut every open connection under the channel's feet, as a lost Wi-Fi would.
final class DroppableLiveConnector: LiveConnector {
    private let inner = NIOLiveConnector()
    private let open = Locked([any LiveConnection]())
    /// Every URL connected to, in order.
    let urls = Locked([URL]())

    func connect(to url: URL, token: String?) async throws -> any LiveConnection {
        urls.withLock { $0.append(url) }
        let connection = try await inner.connect(to: url, token: token)
        open.withLock { $0.append(connection) }
        return connection
    }

    /// Ends every connection opened so far; the channels using them see their connection end and reconnect.
    func dropAll() {
        for connection in open.withLock({ list in defer { list = [] }; return list }) { connection.close() }
    }
}
