import Foundation
import HoardCatalog

extension AccessIndex {
    /// Who an `Authorization` header speaks for: nil without one (anonymous: public packs only), the principal of
    /// a known bearer token, and 401 for anything else. The router's middleware and ``BlobFastPath`` both ask here.
    func principal(authorization header: String?) throws -> Principal? {
        guard let header else { return nil }
        guard let principal = principal(forToken: try Self.bearerToken(header)) else {
            throw APIError.unauthorized("the token is not known; ask an admin for a new one (hoard token create)")
        }
        return principal
    }

    /// The token of an `Authorization: Bearer <token>` header (the scheme in any case); 401 for any other header.
    static func bearerToken(_ header: String) throws -> String {
        let scheme = header.utf8.prefix(7)
        guard scheme.count == 7, scheme.elementsEqual("bearer ".utf8, by: { $0 | 0x20 == $1 | 0x20 }) else {
            throw APIError.unauthorized("the Authorization header must be 'Bearer <token>'")
        }
        return String(Substring(header.utf8.dropFirst(7).drop(while: { $0 == UInt8(ascii: " ") })))
    }

    /// The subprotocol a browser's live channel answers to, and the prefix of the one that carries its token.
    static let liveProtocol = "hoard.live"
    static let tokenProtocolPrefix = "hoard.bearer."

    /// The `Authorization` a request speaks with: its header, else (for a browser's WebSocket, which cannot set
    /// headers) `Bearer <token>` from a `Sec-WebSocket-Protocol` entry `hoard.bearer.<token>`. The token never goes
    /// into a URL, so it is not in access logs or the browser's history.
    static func authorization(header: String?, webSocketProtocols: [String]) -> String? {
        if let header { return header }
        for list in webSocketProtocols {
            for entry in list.split(separator: ",") {
                let name = entry.trimmingCharacters(in: .whitespaces)
                if name.hasPrefix(tokenProtocolPrefix) { return "Bearer " + name.dropFirst(tokenProtocolPrefix.count) }
            }
        }
        return nil
    }
}
