import HoardCatalog
import HoardCore
import HoardRepository

/// The dice a session's table may choose from: the `dice` assets of its group's packs and of public packs. Listing
/// them makes them reachable in the session (recorded, then known to the access index), so that every participant
/// can see their pictures before choosing; a `dice` op is admitted only with one of them.
struct DiceChoices: Sendable {
    let hoard: Hoard
    let access: AccessIndex

    /// Most dice assets offered to one table.
    static let limit = 1000

    /// The session's choices, reachable in it from now on.
    func choices(for session: SessionRecord) throws -> [AssetListing] {
        let assets = try hoard.catalog.assetPage(
            AssetQuery(kind: .dice, visibility: .publicAnd(groupId: session.groupId), limit: Self.limit)).assets
        try reach(Set(assets.map(\.digest)), session: session.id)
        return assets
    }

    /// Why `digest` may not be someone's dice in `session` (nil: it may, and is reachable there now).
    func refusal(of digest: Digest, in session: SessionRecord) throws -> String? {
        let offered = try access.isReachable(digest, session: session.id) || choices(for: session).contains { $0.digest == digest }
        guard offered else {
            return "\(digest) is none of the dice of this group's packs or of public packs; choose one that "
                + "GET /v1/sessions/\(session.id)/dice/choices lists"
        }
        let kind = try hoard.catalog.resolve([digest]).assets.first?.kind
        return kind == .dice ? nil : "\(digest) is a \(kind?.rawValue ?? "blob"), not dice"
    }

    private func reach(_ digests: Set<Digest>, session: String) throws {
        let fresh = digests.filter { !access.isReachable($0, session: session) }
        guard !fresh.isEmpty else { return }
        let resolved = try hoard.catalog.resolve(fresh)
        try hoard.catalog.addReachable(session: session, resolved.reachable)
        access.addReachable(session: session, resolved.reachable)
    }
}
