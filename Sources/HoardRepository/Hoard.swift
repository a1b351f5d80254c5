import Foundation
import HoardCatalog
import HoardCore
import HoardStore

/// One Hoard on disk: its data directory, blob store, catalog and plugins, with the operations the CLI and the
/// server share (import, verify, garbage collection), and the one door for writes (``write(_:check:record:)``).
public struct Hoard: Sendable {
    /// The data directory.
    public let directory: DataDirectory
    /// The blob store.
    public let store: any BlobStore
    /// The catalog.
    public let catalog: Catalog
    /// The plugins.
    public let registry: PluginRegistry

    /// Opens (creating if needed) the Hoard in `dataDirectory`.
    public init(dataDirectory: String, registry: PluginRegistry = .builtIn()) throws {
        let directory = try DataDirectory(path: dataDirectory)
        self.init(
            directory: directory, store: try FileBlobStore(root: directory.blobsPath), catalog: try SQLiteCatalog(path: directory.catalogPath),
            registry: registry)
    }

    /// A Hoard over a data directory (its lock and spooled uploads) and the store and catalog it keeps.
    public init(directory: DataDirectory, store: any BlobStore, catalog: Catalog, registry: PluginRegistry = .builtIn()) {
        self.directory = directory
        self.store = store
        self.catalog = catalog
        self.registry = registry
    }

    /// The importer over this Hoard's store, catalog and plugins.
    public var importer: Importer { Importer(hoard: self) }

    /// Imports one archive while holding the data directory's shared lock (garbage collection waits).
    public func importPack(
        at path: String, options: Importer.Options = .init(), progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportReport {
        try await importing(path) { try await importer.importPack(at: path, options: options, progress: progress) }
    }

    /// Imports one archive, a pack or a bundle of packs (``Importer/importArchive(at:options:progress:)``, with
    /// `acceptsBundles` set), while holding the data directory's shared lock.
    public func importArchive(
        at path: String, options: Importer.Options = .init(), progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportOutcome {
        var options = options
        options.acceptsBundles = true
        return try await importing(path) { [options] in try await importer.importArchive(at: path, options: options, progress: progress) }
    }

    /// Runs an import of the archive at `path` holding the data directory's shared lock (garbage collection waits).
    private func importing<T: Sendable>(_ path: String, _ body: @Sendable () async throws -> T) async throws(ImportError) -> T {
        do {
            return try await directory.withLock(exclusive: false) { try await body() }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError(
                archive: (path as NSString).lastPathComponent,
                problems: [Problem(.storageFailure, "the data directory could not be locked: \(error)")])
        }
    }

    /// Re-hashes every blob and checks every catalog row against the store.
    public func verify(progress: (@Sendable (Int, Int) -> Void)? = nil) async throws -> VerifyReport {
        try await StoreAuditor(store: store, catalog: catalog).verify(progress: progress)
    }

    /// Removes blobs nothing references, holding the data directory's exclusive lock so no import is half-way, and
    /// the catalog's collection lock so no other replica collects at the same time.
    /// Blobs on disk but not in the catalog, staging folders and spooled uploads are removed only once older than `grace`.
    public func collectGarbage(grace: TimeInterval = 3600) async throws -> GarbageReport {
        try await directory.withLock(exclusive: true) {
            let held = try catalog.collectionLock()
            defer { held?.release() }
            var report = try await StoreAuditor(store: store, catalog: catalog).collectGarbage(grace: grace)
            report.staleUploads = directory.removeStaleUploads(olderThan: grace)
            return report
        }
    }
}
