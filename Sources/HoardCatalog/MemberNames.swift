import Foundation
import HoardCore

/// Who a member is, while members are known by their token's label: the rules both backends apply when an invitation
/// is redeemed and when a token is revoked.
///
/// A redeemer chooses their own name, so the name MUST NOT be one the group already uses for someone (a token's label,
/// a ref's or share's member, a session's host, a member upload's scope), compared under ``NameRule/key(_:)``:
/// otherwise "gm" (or "GM", or "g\u{AD}m") would be handed gm's refs, shares, uploads and sessions. An invitation lives
/// only as long as its inviter may make it: while a token of the group labelled as its `createdBy` is an owner's or
/// an operator's.
public enum MemberNames {
    /// The name among `used` that `label` would be taken for; nil when it names no one yet.
    public static func taken(_ label: String, among used: [String]) -> String? {
        let key = NameRule.key(label)
        return used.first { NameRule.key($0) == key }
    }

    /// Why a redeemer may not take `existing`'s name.
    public static func takenMessage(_ label: String, existing: String) -> String {
        "the group already has a member named '\(existing)'; choose another name for '\(label)' (names that differ only "
            + "in case, accents or invisible characters are one name)"
    }

    /// The member named by a `member:<groupId>:<name>` upload scope.
    public static func member(ofScope scope: String) -> String? {
        let parts = scope.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0] == "member" ? String(parts[2]) : nil
    }

    /// Whether a token of role `role` may make an invitation (owners and operators invite; invitations give members
    /// and owners).
    public static func mayInvite(_ role: String) -> Bool {
        role == TokenRole.owner.rawValue || role == TokenRole.operator.rawValue
    }

    /// Whether an invitation made by `createdBy` still stands, given the group's tokens as (label, role): some token
    /// of that label may still invite.
    public static func stands(createdBy: String, tokens: [(name: String, role: String)]) -> Bool {
        tokens.contains { NameRule.spelledAlike($0.name, createdBy) && mayInvite($0.role) }
    }
}
