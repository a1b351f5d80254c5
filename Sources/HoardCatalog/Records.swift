import Foundation
import GRDB
import HoardCore

extension Digest: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { description.databaseValue }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Digest? {
        String.fromDatabaseValue(dbValue).flatMap(Digest.init)
    }
}

/// Dates as the catalog stores them: GRDB's own text format (`yyyy-MM-dd HH:mm:ss.SSS`, UTC, to the nearest millisecond),
/// written without GRDB's `DateFormatter`. That formatter is ICU's: about 10 µs a row, and its first use maps 5 MB of
/// ICU data, a tenth of an import's memory budget. Rows an import writes use it (bulk rows through ``text(_:)``,
/// records through ``strategy``); both formats read back alike.
enum StoredDate {
    /// The stored text of `date`.
    static func text(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
        let fraction = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = ""
        text.reserveCapacity(23)
        func append(_ value: Int, width: Int) {
            let digits = String(value)
            text += String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        append(Int(parts.tm_year) + 1900, width: 4)
        text += "-"
        append(Int(parts.tm_mon) + 1, width: 2)
        text += "-"
        append(Int(parts.tm_mday), width: 2)
        text += " "
        append(Int(parts.tm_hour), width: 2)
        text += ":"
        append(Int(parts.tm_min), width: 2)
        text += ":"
        append(Int(parts.tm_sec), width: 2)
        text += "."
        append(fraction, width: 3)
        return text
    }

    /// The encoding strategy of records an import writes.
    static let strategy = DatabaseDateEncodingStrategy.custom { text($0) }
}

/// A row of `group`: the people of one table.
public struct GroupRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "group"
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { StoredDate.strategy }
    /// Row id.
    public var id: Int64?
    /// Unique name (case-insensitive).
    public var name: String
    /// When it was created.
    public var createdAt: Date
    /// Most bytes its packs and uploads may hold; nil for no quota.
    public var quotaBytes: Int64?

    /// Creates a record (`id` nil until inserted).
    public init(id: Int64?, name: String, createdAt: Date, quotaBytes: Int64?) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.quotaBytes = quotaBytes
    }

    public enum Columns {
        static let id = Column(CodingKeys.id)
        static let name = Column(CodingKeys.name)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A row of `token`: an API token of a group's member; only a hash of the secret is stored.
public struct TokenRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "token"
    /// Row id.
    public var id: Int64?
    /// The group it acts for.
    public var groupId: Int64
    /// A label for people ("alice's tablet").
    public var name: String
    /// SHA-256 (hex) of the secret.
    public var secretHash: String
    /// Whether it may act on every group (kept equal to `role == "operator"` for catalogs read by older servers).
    public var isAdmin: Bool
    /// A ``TokenRole`` raw value (migration `v11-roles`): what the device acts as, always its member's role (the two
    /// change together).
    public var role: String
    /// When it was created.
    public var createdAt: Date
    /// The member whose device it is (migration `v14-members`); never nil once stored.
    public var memberId: Int64?

    /// Creates a record (`id` nil until inserted).
    public init(
        id: Int64?, groupId: Int64, name: String, secretHash: String, isAdmin: Bool, role: String, createdAt: Date, memberId: Int64?
    ) {
        self.id = id
        self.groupId = groupId
        self.name = name
        self.secretHash = secretHash
        self.isAdmin = isAdmin
        self.role = role
        self.createdAt = createdAt
        self.memberId = memberId
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A row of `invite` (migration `v11-roles`): a one-time invitation into a group, redeemed for a token.
public struct InviteRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "invite"
    /// SHA-256 (hex) of the code, the primary key.
    public var codeHash: String
    /// The group it admits to.
    public var groupId: Int64
    /// The ``TokenRole`` raw value of the token it gives (`member` or `owner`).
    public var role: String
    /// Who made it (their member's name when they made it), for people.
    public var createdBy: String
    /// When it stops working.
    public var expiresAt: Date
    /// The member who made it (migration `v14-members`): it stands while they may make it (``MemberRules``).
    public var inviterId: Int64?
    /// For a device invitation, the member it adds a device to (whose role the token gets); nil: it creates a member.
    public var memberId: Int64?
    /// The name of the member it creates, chosen by the inviter; nil: the redeemer's.
    public var memberName: String?

    /// Creates a record.
    public init(
        codeHash: String, groupId: Int64, role: TokenRole, createdBy: String, inviterId: Int64?, expiresAt: Date,
        memberId: Int64? = nil, memberName: String? = nil
    ) {
        self.codeHash = codeHash
        self.groupId = groupId
        self.role = role.rawValue
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.inviterId = inviterId
        self.memberId = memberId
        self.memberName = memberName
    }
}

/// A row of `member` (migration `v14-members`): a person of a group, who owns refs, uploads, shares and sessions by
/// this row's id. Their tokens are their devices; their name is display text, unique in the group under
/// ``NameRule/key(_:)`` for members made since (a catalog migrated from names may hold two of one name, one per role).
public struct MemberRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "member"
    /// Row id: the member's identity.
    public var id: Int64?
    /// The group.
    public var groupId: Int64
    /// What people call them.
    public var name: String
    /// A ``TokenRole`` raw value, which every token of theirs carries too.
    public var role: String
    /// When they joined.
    public var createdAt: Date

    /// Creates a record (`id` nil until inserted).
    public init(id: Int64?, groupId: Int64, name: String, role: String, createdAt: Date) {
        (self.id, self.groupId, self.name, self.role, self.createdAt) = (id, groupId, name, role, createdAt)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A member as `GET /v1/members` lists them: the row and how many tokens (devices) they have.
public typealias MemberListing = (member: MemberRecord, devices: Int)

/// A row of `upload`: a group uploaded (and so may read) a blob.
struct UploadRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "upload"
    var digest: Digest
    var groupId: Int64
    var createdAt: Date
}

/// A row of `blob`: a stored blob the catalog knows.
public struct BlobRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "blob"
    /// Its digest.
    public var digest: Digest
    /// Its size in bytes.
    public var size: Int64
    /// Its media type (`image/png`, `application/vnd.hoard.asset+json`, …).
    public var mediaType: String
    /// When it was first recorded.
    public var createdAt: Date

    /// Creates a record.
    public init(digest: Digest, size: Int64, mediaType: String, createdAt: Date = Date()) {
        self.digest = digest
        self.size = size
        self.mediaType = mediaType
        self.createdAt = createdAt
    }

    public enum Columns {
        static let digest = Column(CodingKeys.digest)
    }
}

/// A row of `pack`: a named pack owned by a group, pointing at its current version.
struct PackRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "pack"
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { StoredDate.strategy }
    var id: Int64?
    var name: String
    var groupId: Int64
    var isPublic: Bool
    var currentVersionId: Int64?
    var createdAt: Date

    public enum Columns {
        static let id = Column(CodingKeys.id)
        static let name = Column(CodingKeys.name)
        static let groupId = Column(CodingKeys.groupId)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A row of `packVersion`: one imported version of a pack, named by its manifest blob.
struct PackVersionRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "packVersion"
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { StoredDate.strategy }
    var id: Int64?
    var packId: Int64
    var version: String
    var manifestDigest: Digest
    var assetCount: Int
    var totalBytes: Int64
    var importedAt: Date
    /// `hex-flat` or `hex-pointy` (``PackGrid``); nil when square (`v17-pack-grid`).
    var grid: String?

    public enum Columns {
        static let packId = Column(CodingKeys.packId)
        static let version = Column(CodingKeys.version)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A row of `asset`: one asset, named by its descriptor blob.
struct AssetRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "asset"
    var digest: Digest
    var kind: String
    var name: String
    var footprintWidth: Int
    var footprintHeight: Int
}

/// A row of `variant`: one resolution of an asset.
struct VariantRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "variant"
    var assetDigest: Digest
    var scale: Int
    var blobDigest: Digest
    var width: Int
    var height: Int
    var isGenerated: Bool
}

/// A row of `rendition`: an asset's generated preview or thumbnail, or a sound's compatible rendition (role `preview`,
/// `thumbnail` or `compatible`; width and height 0 for a sound).
struct RenditionRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "rendition"
    var assetDigest: Digest
    var role: String
    var blobDigest: Digest
    var width: Int
    var height: Int
}

/// A row of `packVersionAsset`: an asset belongs to a pack version.
struct PackVersionAssetRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "packVersionAsset"
    var packVersionId: Int64
    var assetDigest: Digest
}
