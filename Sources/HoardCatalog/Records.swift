import Foundation
import GRDB
import HoardCore

extension Digest: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { description.databaseValue }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Digest? {
        String.fromDatabaseValue(dbValue).flatMap(Digest.init)
    }
}

/// A row of `group`: the people of one table.
public struct GroupRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "group"
    /// Row id.
    public var id: Int64?
    /// Unique name (case-insensitive).
    public var name: String
    /// When it was created.
    public var createdAt: Date
    /// Most bytes its packs and uploads may hold; nil for no quota.
    public var quotaBytes: Int64?

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
    /// Whether it may act on every group.
    public var isAdmin: Bool
    /// When it was created.
    public var createdAt: Date

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

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
    var id: Int64?
    var name: String
    var groupId: Int64
    var isPublic: Bool
    var currentVersionId: Int64?
    var createdAt: Date

    public enum Columns {
        static let id = Column(CodingKeys.id)
        static let name = Column(CodingKeys.name)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A row of `packVersion`: one imported version of a pack, named by its manifest blob.
struct PackVersionRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "packVersion"
    var id: Int64?
    var packId: Int64
    var version: String
    var manifestDigest: Digest
    var assetCount: Int
    var totalBytes: Int64
    var importedAt: Date

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

/// A row of `rendition`: an asset's generated preview or thumbnail (role `preview` or `thumbnail`).
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
