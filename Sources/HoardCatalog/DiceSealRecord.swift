import HoardCore

/// A session's dice seal as stored (`diceSeal`): the secret seed its rolls are drawn with, and whether it has been
/// revealed. Until then the seed MUST NOT leave the server; its commitment may.
public struct DiceSealRecord: Sendable, Hashable {
    /// The session (which may have ended).
    public var sessionId: String
    /// The session's group.
    public var groupId: Int64
    /// The seed.
    public var seed: DiceSeed
    /// Whether the seed was revealed (the session ended, or its host asked).
    public var isRevealed: Bool

    /// Creates a record.
    public init(sessionId: String, groupId: Int64, seed: DiceSeed, isRevealed: Bool) {
        self.sessionId = sessionId
        self.groupId = groupId
        self.seed = seed
        self.isRevealed = isRevealed
    }
}
