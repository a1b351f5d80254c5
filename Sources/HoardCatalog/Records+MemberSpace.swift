import Foundation
import GRDB
import HoardCore

/// A row of `ref`: a member's named pointer at a digest (`last-drawing` → the drawing), moved with compare-and-set.
public struct RefRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "ref"
    /// The member's group.
    public var groupId: Int64
    /// The member: their id (``MemberRules/owner(_:)``).
    public var member: String
    /// The ref's name.
    public var name: String
    /// What it points at.
    public var digest: Digest
    /// When it last moved.
    public var updatedAt: Date

    /// Creates a record.
    public init(groupId: Int64, member: String, name: String, digest: Digest, updatedAt: Date = Date()) {
        self.groupId = groupId
        self.member = member
        self.name = name
        self.digest = digest
        self.updatedAt = updatedAt
    }
}

/// A row of `privateUpload`: a picture a participant or member uploaded into a scope that alone may read it.
public struct PrivateUploadRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "privateUpload"
    /// Who may read it: `session:<id>` or `member:<groupId>:<member>` (see ``UploadScope``).
    public var scope: String
    /// The picture.
    public var digest: Digest
    /// The group whose quota it counts against.
    public var groupId: Int64
    /// Who uploaded it: a participant's id, or a member's (``MemberRules/owner(_:)``).
    public var uploader: String
    /// When.
    public var createdAt: Date

    /// Creates a record.
    public init(scope: UploadScope, digest: Digest, groupId: Int64, uploader: String, createdAt: Date = Date()) {
        self.scope = scope.description
        self.digest = digest
        self.groupId = groupId
        self.uploader = uploader
        self.createdAt = createdAt
    }

    /// The session of a session upload; nil for a member's.
    public var sessionId: String? { UploadScope.session(of: scope) }

    /// Whether `principal` made this upload: a participant by its id, which is what `uploader` holds for a
    /// participant's upload (display names repeat); a member by member id, in their own space or in a session of
    /// their group.
    public func isUploaded(by principal: Principal) -> Bool {
        if let participantId = principal.participantId { return uploader == participantId && sessionId == principal.sessionId }
        guard principal.isMember, uploader == principal.owner else { return false }
        return scope == UploadScope.member(groupId: principal.groupId, id: principal.memberId).description
            || (sessionId != nil && groupId == principal.groupId)
    }
}

/// Who may read a private upload: the participants of one game session, or one member.
public enum UploadScope: Sendable, Hashable, CustomStringConvertible {
    /// The participants of a session (and the members who may see it).
    case session(String)
    /// One member of one group, by member id.
    case member(groupId: Int64, id: Int64)

    /// How the scope of a session upload begins; the session id follows.
    public static let sessionPrefix = "session:"

    /// The session of a stored scope (`session:<id>`); nil for a member's.
    public static func session(of scope: String) -> String? {
        scope.hasPrefix(sessionPrefix) ? String(scope.dropFirst(sessionPrefix.count)) : nil
    }

    public var description: String {
        switch self {
        case .session(let id): Self.sessionPrefix + id
        case .member(let groupId, let id): "member:\(groupId):\(MemberRules.owner(id))"
        }
    }
}

/// A row of `share`: an unguessable link to one picture or asset, made by a member; revoking deletes the row.
public struct ShareRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "share"
    /// The link's id: random, never derived from the digest.
    public var id: String
    /// The sharing member's group.
    public var groupId: Int64
    /// The sharing member: their id (``MemberRules/owner(_:)``).
    public var member: String
    /// What was shared: a picture blob or an asset.
    public var digest: Digest
    /// The picture the share page shows (the blob itself, or the asset's largest variant).
    public var pictureDigest: Digest
    /// A title for the page.
    public var name: String?
    /// When.
    public var createdAt: Date

    /// Creates a record.
    public init(id: String, groupId: Int64, member: String, digest: Digest, pictureDigest: Digest, name: String?, createdAt: Date = Date()) {
        self.id = id
        self.groupId = groupId
        self.member = member
        self.digest = digest
        self.pictureDigest = pictureDigest
        self.name = name
        self.createdAt = createdAt
    }
}
