import Foundation
import GRDB
import HoardCore

/// The catalog: every group, pack, version, asset, variant and blob Hoard knows, in SQLite.
///
/// One value owns the database writer and migrates the schema when it is created. Every method is one
/// transaction. Rows only ever point at blobs that are already durable in the blob store (the import commits
/// the catalog last), so a crash leaves at worst unreferenced blobs, never a row without its bytes.
public struct SQLiteCatalog: CatalogBackend {
    private let writer: any DatabaseWriter

    /// Opens (creating and migrating if needed) the catalog file at `path`, in WAL mode.
    public init(path: String) throws(CatalogError) {
        // A folder that cannot be written is refused up front: SQLite alone would open the catalog read-only when a
        // crashed process left its WAL files behind, and every write would then fail later, one by one.
        let folder = (path as NSString).deletingLastPathComponent
        if access(folder.isEmpty ? "." : folder, W_OK) != 0 {
            throw CatalogError(.database, "cannot open the catalog at \(path); check that the data directory exists and is writable",
                               causedBy: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EACCES))
        }
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            // WAL with synchronous=NORMAL: a commit survives a crash of the process and the database stays consistent
            // after a power cut (the last commits may be lost). Blob bytes are synced before any row names them, so a
            // lost commit leaves only unreferenced blobs, which gc removes.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            try self.init(writer: try DatabasePool(path: path, configuration: configuration))
        } catch let error as CatalogError {
            throw error
        } catch {
            throw CatalogError(.database, Self.isBusy(error)
                ? "the catalog at \(path) stayed busy for 10 s (another process is writing to it); retry when it is done"
                : "cannot open the catalog at \(path); check that the data directory exists and is writable", causedBy: error)
        }
    }

    /// Whether SQLite gave up waiting for another connection's lock (the busy timeout passed).
    static func isBusy(_ error: any Error) -> Bool {
        (error as? DatabaseError)?.resultCode == .SQLITE_BUSY
    }

    /// An empty catalog in memory, with the real schema (for tests).
    public static func inMemory() throws(CatalogError) -> SQLiteCatalog {
        do {
            return try SQLiteCatalog(writer: try DatabaseQueue())
        } catch let error as CatalogError {
            throw error
        } catch {
            throw CatalogError(.database, "cannot create an in-memory catalog", causedBy: error)
        }
    }

    init(writer: any DatabaseWriter) throws(CatalogError) {
        self.writer = writer
        do {
            try Self.migrator.migrate(writer)
        } catch {
            throw CatalogError(.database, "cannot migrate the catalog; is it from a newer Hoard?", causedBy: error)
        }
    }

    /// Runs a read, mapping failures to ``CatalogError``.
    func read<T>(_ body: (Database) throws -> T) throws(CatalogError) -> T {
        do {
            return try writer.read(body)
        } catch let error as CatalogError {
            throw error
        } catch {
            throw CatalogError(.database, "the catalog could not be read", causedBy: error)
        }
    }

    /// Runs one write transaction, mapping failures to ``CatalogError``.
    func write<T>(_ body: (Database) throws -> T) throws(CatalogError) -> T {
        do {
            return try writer.write(body)
        } catch let error as CatalogError {
            throw error
        } catch {
            throw CatalogError(.database, Self.isBusy(error)
                ? "the catalog stayed busy for 10 s (another process is writing to it); nothing was written, retry"
                : "the catalog could not be written; check free space and permissions", causedBy: error)
        }
    }

    /// One writer at a time: SQLite's.
    public var hasOneWriter: Bool { true }

    /// The group with this name, created if it does not exist.
    @discardableResult
    public func ensureGroup(named name: String) throws(CatalogError) -> GroupRecord {
        try write { db in try Self.ensureGroup(named: name, db) }
    }

    /// Every group, by name.
    public func groups() throws(CatalogError) -> [GroupRecord] {
        try read { db in try GroupRecord.order(GroupRecord.Columns.name).fetchAll(db) }
    }

    static func ensureGroup(named name: String, _ db: Database) throws -> GroupRecord {
        if let group = try existingGroup(named: name, db) { return group }
        let name = try GroupName.canonical(name)
        if let group = try existingGroup(named: name, db) { return group }
        var group = GroupRecord(id: nil, name: name, createdAt: Date(), quotaBytes: nil)
        try group.insert(db)
        return group
    }

    /// The group `name` names: the one of exactly that name (ASCII case aside, as the column compares), else the
    /// one whose ``GroupName/key(_:)`` is the same; nil when there is none. Throws `conflict` when an old catalog
    /// holds several groups of that key and none of exactly that name.
    static func existingGroup(named name: String, _ db: Database) throws -> GroupRecord? {
        if let group = try GroupRecord.filter(GroupRecord.Columns.name == name).fetchOne(db) { return group }
        let key = GroupName.key(name)
        let alike = try GroupRecord.order(Column("id")).fetchAll(db).filter { GroupName.key($0.name) == key }
        guard alike.count <= 1 else {
            let names = alike.map { "'\($0.name)'" }.joined(separator: ", ")
            throw CatalogError(.conflict, "'\(name)' could be any of the groups \(names); give one of them exactly")
        }
        return alike.first
    }

    /// A pack by its name within `group` (a group name as ``existingGroup(named:_:)`` finds it); with no group, the one
    /// pack of that name in any group. Pack names are unique within a group only, so without a group several packs
    /// may answer: that throws `conflict`, naming no group (the caller may not see them).
    ///
    /// A name is found as ``NameRule`` compares names: exactly (ASCII case aside, as the column compares), else the
    /// one pack whose ``NameRule/key(_:)`` is the same ("émoi" finds "Émoi"). An old catalog may hold several packs of
    /// one key in a group: each is found by its exact name, and a name that could be several is `conflict`.
    static func packRecord(named name: String, group: String?, _ db: Database) throws -> PackRecord? {
        var owner: Int64?
        if let group {
            guard let id = try existingGroup(named: group, db)?.id else { return nil }
            owner = id
        }
        let name = name.precomposedStringWithCanonicalMapping
        var request = PackRecord.filter(PackRecord.Columns.name == name)
        if let owner { request = request.filter(PackRecord.Columns.groupId == owner) }
        var packs = try request.limit(2).fetchAll(db)
        if packs.isEmpty {
            var all = PackRecord.all()
            if let owner { all = all.filter(PackRecord.Columns.groupId == owner) }
            let key = NameRule.key(name)
            packs = try all.order(Column("id")).fetchAll(db).filter { NameRule.key($0.name) == key }
        }
        guard packs.count < 2 else {
            guard owner != nil else { throw CatalogError(.conflict, "several groups have a pack named '\(name)'; name the group") }
            let names = packs.map { "'\($0.name)'" }.joined(separator: ", ")
            throw CatalogError(.conflict, "'\(name)' could be any of the packs \(names); give one of them exactly")
        }
        return packs.first
    }

    /// What the catalog knows of a group's pack before an import: its versions (`group` as for
    /// ``packRecord(named:group:_:)``).
    public func packState(named name: String, group: String?) throws(CatalogError) -> PackState? {
        try read { db in
            guard let pack = try Self.packRecord(named: name, group: group, db), let packId = pack.id else { return nil }
            let group = try GroupRecord.fetchOne(db, key: pack.groupId)
            let versions = try PackVersionRecord.filter(PackVersionRecord.Columns.packId == packId).order(Column("id")).fetchAll(db)
            let current = versions.first { $0.id == pack.currentVersionId }
            return PackState(
                name: pack.name, group: group?.name ?? "?", versions: versions.map(\.version),
                manifests: Dictionary(versions.map { ($0.version, $0.manifestDigest) }, uniquingKeysWith: { a, _ in a }),
                currentVersion: current?.version, currentManifest: current?.manifestDigest)
        }
    }
}

/// A pack's owner and versions, as an import needs them.
public struct PackState: Sendable, Hashable {
    /// The pack's name as stored.
    public var name: String
    /// The owning group's name.
    public var group: String
    /// Every imported version, oldest first.
    public var versions: [String]
    /// Each version's manifest.
    public var manifests: [String: Digest]
    /// The current version.
    public var currentVersion: String?
    /// The current version's manifest.
    public var currentManifest: Digest?

    /// A pack's state (for every backend).
    public init(
        name: String, group: String, versions: [String], manifests: [String: Digest], currentVersion: String?, currentManifest: Digest?
    ) {
        self.name = name
        self.group = group
        self.versions = versions
        self.manifests = manifests
        self.currentVersion = currentVersion
        self.currentManifest = currentManifest
    }
}

/// An error of the catalog: a code, a message that says what to do, and the cause.
public typealias CatalogError = CodedError<CatalogFailure>

/// What failed in the catalog (``CatalogError``'s codes).
public enum CatalogFailure: String, Sendable, Hashable {
    /// The database failed or is unreadable.
    case database = "STORAGE_FAILURE"
    /// The database cannot be reached (a PostgreSQL server down, or the connection broke): nothing was written.
    case unavailable = "CATALOG_UNAVAILABLE"
    /// The write contradicts what is recorded (another group's pack, a version with other content).
    case conflict = "PACK_CONFLICT"
    /// A named thing does not exist.
    case notFound = "NOT_FOUND"
    /// A name or value the catalog does not take (an empty group name).
    case invalid = "BAD_REQUEST"
}

extension SQLiteCatalog {
    /// Writes a consistent copy of the whole catalog to a new SQLite file at `path` (SQLite's online backup: the
    /// catalog stays usable meanwhile).
    public func backup(to path: String) throws(CatalogError) {
        do {
            let destination = try DatabaseQueue(path: path)
            try writer.backup(to: destination)
            try destination.close()
        } catch {
            throw CatalogError(.database, "cannot write a catalog backup to \(path); check the folder and free space", causedBy: error)
        }
    }
}
