import HoardCatalog

extension AccessIndex {
    /// Who an `Authorization` header speaks for: nil without one (anonymous: public packs only), the principal of
    /// a known bearer token, and 401 for anything else. The router's middleware and ``BlobFastPath`` both ask here.
    func principal(authorization header: String?) throws -> Principal? {
        guard let header else { return nil }
        let scheme = header.utf8.prefix(7)
        guard scheme.count == 7, scheme.elementsEqual("bearer ".utf8, by: { $0 | 0x20 == $1 | 0x20 }) else {
            throw APIError.unauthorized("the Authorization header must be 'Bearer <token>'")
        }
        let token = header.utf8.dropFirst(7).drop(while: { $0 == UInt8(ascii: " ") })
        guard let principal = principal(forToken: String(Substring(token))) else {
            throw APIError.unauthorized("the token is not known; ask an admin for a new one (hoard token create)")
        }
        return principal
    }
}
