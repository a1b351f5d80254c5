import Foundation
import HoardCatalog
import HoardCore
import HoardStore

/// The third pass of an import: descriptors and the manifest become blobs, the version is chosen, and the
/// catalog commit is assembled. Writes only to staging.
struct PackWriter {
    let plan: PackPlanner.Plan
    let area: StagingArea

    /// Media type of descriptor blobs.
    static let descriptorMediaType = "application/vnd.hoard.asset+json"
    /// Media type of manifest blobs.
    static let manifestMediaType = "application/vnd.hoard.pack+json"

    struct Written {
        var blobs: [StagedBlob]
        var commit: ImportCommit
    }

    func write(packName: String, group: String, state: PackState?) throws -> Written {
        if let state, state.group.lowercased() != group.lowercased() {
            throw CatalogError(.conflict, "the pack name '\(packName)' belongs to group '\(state.group)'; rename the pack in pack.json")
        }
        var blobs: [StagedBlob] = []
        var records: [BlobRecord] = []
        var assets: [(descriptor: AssetDescriptor, digest: Digest)] = []
        var entries: [PackManifest.Entry] = []
        var pictureBytes: Int64 = 0
        // Descriptors are encoded and staged several at once: each is its own small file.
        let descriptors = try concurrentMap(plan.assets.count) { index in
            let planned = plan.assets[index]
            let descriptor = AssetDescriptor(
                kind: planned.kind, name: planned.name, footprint: planned.footprint, variants: planned.variants,
                preview: planned.preview, thumbnail: planned.thumbnail)
            return (descriptor, try area.stage(try CanonicalJSON.encode(descriptor)))
        }
        for ((planned, asset), (descriptor, staged)) in zip(zip(plan.assets, plan.plans), descriptors) {
            for picture in asset.pictures.map(\.picture) + asset.renditions {
                blobs.append(picture.blob)
                records.append(BlobRecord(digest: picture.blob.digest, size: picture.blob.size, mediaType: picture.info.mediaType.rawValue))
                pictureBytes += picture.blob.size
            }
            blobs.append(staged)
            records.append(BlobRecord(digest: staged.digest, size: staged.size, mediaType: Self.descriptorMediaType))
            assets.append((descriptor, staged.digest))
            entries.append(PackManifest.Entry(digest: staged.digest, kind: planned.kind, name: planned.name))
        }
        let (version, manifestBytes) = try chooseVersion(packName: packName, entries: entries, state: state)
        let manifest = try area.stage(manifestBytes)
        blobs.append(manifest)
        records.append(BlobRecord(digest: manifest.digest, size: manifest.size, mediaType: Self.manifestMediaType))
        let commit = ImportCommit(
            group: group, pack: packName, version: version, manifestDigest: manifest.digest, blobs: records, assets: assets,
            totalBytes: pictureBytes)
        return Written(blobs: blobs, commit: commit)
    }

    /// pack.json's version when given (a clash with other content is refused before anything is stored); otherwise the
    /// current version when the content is unchanged, else the next whole number.
    private func chooseVersion(packName: String, entries: [PackManifest.Entry], state: PackState?) throws -> (String, [UInt8]) {
        func manifest(_ version: String) throws -> [UInt8] {
            try CanonicalJSON.encode(PackManifest(name: packName, version: version, packFile: plan.packFile, assets: entries))
        }
        if let version = plan.packFile.version {
            let bytes = try manifest(version)
            if let old = state?.manifests[version], old != BlobHasher.digest(of: bytes) {
                throw CatalogError(
                    .conflict, "version \(version) of '\(packName)' was already imported with other content; raise the version in pack.json")
            }
            return (version, bytes)
        }
        guard let state, let current = state.currentVersion else { return ("1", try manifest("1")) }
        let same = try manifest(current)
        if state.currentManifest == BlobHasher.digest(of: same) { return (current, same) }
        var next = (Int(current) ?? state.manifests.count) + 1
        while state.manifests[String(next)] != nil { next += 1 }
        return (String(next), try manifest(String(next)))
    }
}
