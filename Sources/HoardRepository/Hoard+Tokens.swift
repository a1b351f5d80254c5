import Foundation
import HoardCatalog
import HoardCore
import HoardStore

extension Hoard {
    /// The prefix of every token Hoard issues, so a leaked one is easy to recognise and revoke.
    public static let tokenPrefix = "hoard_"

    /// The hash under which a token's secret is stored: hex SHA-256 of the whole token.
    public static func hashToken(_ token: String) -> String {
        BlobHasher.digest(of: Array(token.utf8)).hex
    }

    /// Issues a new bearer token for a group: 32 random bytes, shown once; only its hash is stored. The label passes
    /// ``NameRule`` (a member's name); the name of a member of the group adds a device to that member (who takes
    /// `role`), and one that only looks like it ("GM" beside "gm") is refused, so the operator says which they mean.
    public func createToken(group: String, label: String, role: TokenRole) throws -> String {
        let label = try NameRule.canonical(label, as: .member)
        if let groupId = try catalog.group(matching: group)?.id,
           let alike = try catalog.members(groupId: groupId).map(\.member).first(where: { NameRule.same($0.name, label) && $0.name != label }) {
            throw CatalogError(.conflict, "group '\(group)' has a member named '\(alike.name)'; give that name exactly to add a device, or choose another")
        }
        let token = Self.tokenPrefix + Self.randomSecret()
        try catalog.addToken(group: group, label: label, secretHash: Self.hashToken(token), role: role)
        return token
    }

    /// Issues a member token, or an operator's when `isAdmin`.
    public func createToken(group: String, label: String, isAdmin: Bool) throws -> String {
        try createToken(group: group, label: label, role: isAdmin ? .operator : .member)
    }
}

extension Hoard {
    /// 43 random letters and digits (256 bits), for tokens.
    public static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<43).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }
}
