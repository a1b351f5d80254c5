import Foundation
import GRDB
import HoardCore

/// Everything one import adds to the catalog, committed in one transaction after its blobs are durable.
public struct ImportCommit: Sendable {
    /// The owning group (created if new).
    public var group: String
    /// The pack.
    public var pack: String
    /// The version.
    public var version: String
    /// The manifest blob.
    public var manifestDigest: Digest
    /// Every blob the version references: pictures, descriptors and the manifest.
    public var blobs: [BlobRecord]
    /// Every asset with its variants.
    public var assets: [(descriptor: AssetDescriptor, digest: Digest)]
    /// Bytes of the pictures of this version.
    public var totalBytes: Int64
    /// The pack's licence, readme and credits files (their blobs are among `blobs`).
    public var documents: [PackDocument]
    /// The grid its art was made for (`packVersion.grid`, null when square).
    public var grid: PackGrid
    /// The pictures left to make (generated LODs, previews, thumbnails), queued in the same transaction.
    public var jobs: [JobSpec]

    /// Creates a commit.
    public init(group: String, pack: String, version: String, manifestDigest: Digest, blobs: [BlobRecord],
                assets: [(descriptor: AssetDescriptor, digest: Digest)], totalBytes: Int64, documents: [PackDocument] = [],
                grid: PackGrid = .square, jobs: [JobSpec] = []) {
        self.group = group
        self.pack = pack
        self.version = version
        self.manifestDigest = manifestDigest
        self.blobs = blobs
        self.assets = assets
        self.totalBytes = totalBytes
        self.documents = documents
        self.grid = grid
        self.jobs = jobs
    }
}

/// What recording an import did.
public enum RecordOutcome: Sendable, Hashable {
    /// A new version was recorded and made current.
    case recorded
    /// The same version with the same manifest was already there: nothing changed.
    case alreadyRecorded
}

extension SQLiteCatalog {
    /// Records an import in one transaction. Throws `conflict` when this version was imported with other content, and
    /// when a new pack's name is the same as one of the group's packs under ``NameRule/key(_:)`` ("émoi" beside
    /// "Émoi"). Pack names are the group's own: another group's pack of the same name is another pack.
    ///
    /// `barrier` runs inside the transaction once every row is written, just before the commit; when it throws, nothing
    /// is recorded. The importer waits there for its blobs' publish, which runs meanwhile on another thread (the
    /// transaction holds the catalog's writer until then, so `barrier` must not need it).
    public func record(_ commit: ImportCommit, committingAfter barrier: () throws -> Void) throws(CatalogError) -> RecordOutcome {
        try write { db in
            let now = Date()
            let group = try Self.ensureGroup(named: commit.group, db)
            var pack: PackRecord
            if let existing = try PackRecord.filter(PackRecord.Columns.name == commit.pack && PackRecord.Columns.groupId == group.id).fetchOne(db) {
                pack = existing
                if let old = try PackVersionRecord
                    .filter(PackVersionRecord.Columns.packId == pack.id && PackVersionRecord.Columns.version == commit.version)
                    .fetchOne(db) {
                    if old.manifestDigest == commit.manifestDigest {
                        let version = old.id ?? 0
                        let linked = Set(try Row.fetchAll(db, sql: """
                            SELECT j.sourceDigest, j.recipe FROM jobAsset ja JOIN job j ON j.id = ja.jobId WHERE ja.packVersionId = ?
                            """, arguments: [version]).map { JobKey(source: $0["sourceDigest"], recipe: $0["recipe"]) })
                        try Self.queue(JobKey.missing(from: commit.jobs, linked: linked), version: version, now: now, db)
                        return .alreadyRecorded
                    }
                    throw CatalogError(
                        .conflict, "version \(commit.version) of '\(commit.pack)' was already imported with other content; "
                            + "raise the version in pack.json")
                }
            } else {
                let key = NameRule.key(commit.pack)
                if let alike = try PackRecord.filter(PackRecord.Columns.groupId == group.id).fetchAll(db).first(where: { NameRule.key($0.name) == key }) {
                    throw CatalogError(.conflict, Self.alikePack(alike.name, commit.pack, group: group.name))
                }
                pack = PackRecord(id: nil, name: commit.pack, groupId: group.id ?? 0, isPublic: false, currentVersionId: nil, createdAt: now)
                try pack.insert(db)
            }
            // The bulk rows are bound straight into SQLite (``RowInserter``): GRDB's arguments cost more than SQLite.
            let insertBlob = try RowInserter(db, "INSERT OR IGNORE INTO blob (digest, size, mediaType, createdAt) VALUES (?, ?, ?, ?)")
            for blob in commit.blobs {
                try insertBlob.insert { row in
                    row.digest(blob.digest)
                    row.int(blob.size)
                    row.text(blob.mediaType)
                    row.text(StoredDate.text(blob.createdAt))
                }
            }
            let insertAsset = try RowInserter(
                db, "INSERT OR IGNORE INTO asset (digest, kind, name, footprintWidth, footprintHeight) VALUES (?, ?, ?, ?, ?)")
            let insertVariant = try RowInserter(
                db, "INSERT OR IGNORE INTO variant (assetDigest, scale, blobDigest, width, height, isGenerated) VALUES (?, ?, ?, ?, ?, ?)")
            let insertRendition = try RowInserter(
                db, "INSERT OR IGNORE INTO rendition (assetDigest, role, blobDigest, width, height) VALUES (?, ?, ?, ?, ?)")
            for (descriptor, digest) in commit.assets {
                let footprint = descriptor.footprint
                try insertAsset.insert { row in
                    row.digest(digest)
                    row.text(descriptor.kind.rawValue)
                    row.text(descriptor.name)
                    row.int(footprint.width)
                    row.int(footprint.height)
                }
                for variant in descriptor.variants {
                    try insertVariant.insert { row in
                        row.digest(digest)
                        row.int(variant.scale)
                        row.digest(variant.digest)
                        row.int(variant.width)
                        row.int(variant.height)
                        row.bool(variant.generated ?? false)
                    }
                }
                for (role, rendition) in [("preview", descriptor.preview), ("thumbnail", descriptor.thumbnail)] {
                    guard let rendition else { continue }
                    try insertRendition.insert { row in
                        row.digest(digest)
                        row.text(role)
                        row.digest(rendition.digest)
                        row.int(rendition.width)
                        row.int(rendition.height)
                    }
                }
            }
            var version = PackVersionRecord(
                id: nil, packId: pack.id ?? 0, version: commit.version, manifestDigest: commit.manifestDigest,
                assetCount: commit.assets.count, totalBytes: commit.totalBytes, importedAt: now,
                grid: commit.grid.isHex ? commit.grid.description : nil)
            try version.insert(db)
            // kind and name are the asset's, copied for the listing index (migration v8-catalog-scale).
            let insertMember = try RowInserter(
                db, "INSERT OR IGNORE INTO packVersionAsset (packVersionId, assetDigest, kind, name) VALUES (?, ?, ?, ?)")
            for (descriptor, digest) in commit.assets {
                try insertMember.insert { row in
                    row.int(version.id ?? 0)
                    row.digest(digest)
                    row.text(descriptor.kind.rawValue)
                    row.text(descriptor.name)
                }
            }
            let insertDocument = try RowInserter(
                db, "INSERT INTO packDocument (packVersionId, name, blobDigest, mediaType, size) VALUES (?, ?, ?, ?, ?)")
            for document in commit.documents {
                try insertDocument.insert { row in
                    row.int(version.id ?? 0)
                    row.text(document.name)
                    row.digest(document.digest)
                    row.text(document.mediaType)
                    row.int(document.size)
                }
            }
            try Self.queue(commit.jobs, version: version.id ?? 0, now: now, db)
            pack.currentVersionId = version.id
            try pack.update(db)
            try barrier()
            return .recorded
        }
    }

    /// Deletes a pack and all its versions (assets and blobs stay until garbage collection). False when absent.
    /// `group` names the owner; nil finds the pack in whichever group has one of that name (``packRecord(named:group:_:)``).
    @discardableResult
    public func deletePack(named name: String, group: String?) throws(CatalogError) -> Bool {
        try write { db in
            guard let pack = try Self.packRecord(named: name, group: group, db) else { return false }
            return try pack.delete(db)
        }
    }

    /// Makes a pack public or private. False when absent. `group` as for ``deletePack(named:group:)``.
    @discardableResult
    public func setPublic(_ isPublic: Bool, pack name: String, group: String?) throws(CatalogError) -> Bool {
        try write { db in
            guard var pack = try Self.packRecord(named: name, group: group, db) else { return false }
            pack.isPublic = isPublic
            try pack.update(db)
            return true
        }
    }
}

extension CatalogBackend {
    /// Why a new pack named `name` is refused beside the group's pack `existing`, the same name under ``NameRule``.
    public static func alikePack(_ existing: String, _ name: String, group: String) -> String {
        "group '\(group)' has a pack named '\(existing)', and '\(name)' differs from it only in case, accents or "
            + "invisible form; import it as '\(existing)' to add a version, or choose another name"
    }
}
