import Foundation
import HoardCore

/// Who a member is and what their invitations may give: the rules both backends apply when an invitation is made or
/// redeemed, a member's role changes and a token is revoked.
///
/// A member is a `member` row, and what they own (refs, shares, sessions, private uploads) holds its id
/// (``owner(_:)``): a name is display text, so a redeemer who calls their device "gm" gets none of gm's things. A new
/// member's name MUST NOT be one the group already uses for a member, compared under ``NameRule/key(_:)``, so people
/// can tell members apart. An invitation lives only as long as its inviter may make it (``stands(inviter:gives:)``).
public enum MemberRules {
    /// What ownership columns hold for member `id`: its decimal id (migration `v14-members` rewrote names into it).
    public static func owner(_ id: Int64) -> String { String(id) }

    /// The name among `used` that `name` would be taken for; nil when it names no one yet.
    public static func taken(_ name: String, among used: [String]) -> String? {
        let key = NameRule.key(name)
        return used.first { NameRule.key($0) == key }
    }

    /// Why a member may not be called `existing`'s name.
    public static func takenMessage(_ name: String, existing: String) -> String {
        "the group already has a member named '\(existing)'; choose another name for '\(name)' (names that differ only "
            + "in case, accents or invisible characters are one name)"
    }

    /// The member `hoard token create` adds a device to: of the members called `name` (under ``NameRule/key(_:)``),
    /// the one of exactly that name and role, else of that name, else the first; nil when none is (a new member).
    public static func member(named name: String, role: TokenRole, among members: [MemberRecord]) -> MemberRecord? {
        let key = NameRule.key(name)
        let named = members.filter { NameRule.key($0.name) == key }
        return named.first { $0.name == name && $0.role == role.rawValue } ?? named.first { $0.name == name } ?? named.first
    }

    /// How much a role may do: a role may give (invite to, or set) only roles at most its own.
    public static func rank(_ role: String) -> Int {
        switch TokenRole(rawValue: role) {
        case .operator: 2
        case .owner: 1
        default: 0
        }
    }

    /// Whether a member of role `role` may make an invitation (owners and operators invite; invitations give members
    /// and owners, or a device of a member whose role is at most the inviter's).
    public static func mayInvite(_ role: String) -> Bool {
        role == TokenRole.owner.rawValue || role == TokenRole.operator.rawValue
    }

    /// Whether an invitation still stands: its inviter (their role and how many devices they have; nil when the
    /// member is gone) may still invite, holds a device, and may give `gives` (the role the invitation's token would
    /// have; nil when the member a device invitation names is gone).
    public static func stands(inviter: (role: String, devices: Int)?, gives: String?) -> Bool {
        guard let inviter, inviter.devices > 0, mayInvite(inviter.role), let gives else { return false }
        return rank(gives) <= rank(inviter.role)
    }
}
