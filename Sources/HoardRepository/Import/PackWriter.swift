import Foundation
import HoardCatalog
import HoardCore
import HoardStore

/// The third pass of an import: descriptors and the manifest are encoded, the version is chosen, and the catalog
/// commit is assembled, all in memory (``prepare(packName:group:state:)``); then the documents are staged
/// (``stageDocuments(of:in:)``). Writes only to staging.
struct PackWriter {
    let plan: PackPlanner.Plan

    /// Media type of descriptor blobs.
    static let descriptorMediaType = "application/vnd.hoard.asset+json"
    /// Media type of manifest blobs.
    static let manifestMediaType = "application/vnd.hoard.pack+json"

    /// An import ready to publish: its pictures (already staged), its manifest (not yet staged) and the commit that
    /// records them, which holds the descriptors (their bytes are encoded again when staged, rather than held: one
    /// array per asset).
    struct Prepared {
        var pictures: [StagedBlob]
        var manifest: [UInt8]
        var commit: ImportCommit
    }

    /// Encodes every descriptor and the manifest, and checks the version against `state` (the group's pack of that
    /// name): everything that can refuse the import happens here, before anything is published.
    func prepare(packName: String, group: String, state: PackState?) throws -> Prepared {
        var pictures: [StagedBlob] = []
        var records: [BlobRecord] = []
        var assets: [(descriptor: AssetDescriptor, digest: Digest)] = []
        var entries: [PackManifest.Entry] = []
        var pictureBytes: Int64 = 0
        // Descriptors are encoded and hashed several at once.
        let descriptors = try concurrentMap(plan.assets.count) { [plan] index in
            let planned = plan.assets[index]
            let descriptor = AssetDescriptor(
                kind: planned.kind, name: planned.name, footprint: planned.footprint, variants: planned.variants,
                preview: planned.preview, thumbnail: planned.thumbnail)
            let bytes = try CanonicalJSON.encode(descriptor)
            return (descriptor, bytes.count, BlobHasher.digest(of: bytes))
        }
        for ((planned, asset), (descriptor, size, digest)) in zip(zip(plan.assets, plan.plans), descriptors) {
            for picture in asset.pictures.map(\.picture) {
                pictures.append(picture.blob)
                records.append(BlobRecord(digest: picture.blob.digest, size: picture.blob.size, mediaType: picture.info.mediaType.rawValue))
                pictureBytes += picture.blob.size
            }
            records.append(BlobRecord(digest: digest, size: Int64(size), mediaType: Self.descriptorMediaType))
            assets.append((descriptor, digest))
            entries.append(PackManifest.Entry(digest: digest, kind: planned.kind, name: planned.name))
        }
        for (document, blob) in plan.documents {
            pictures.append(blob)
            records.append(BlobRecord(digest: document.digest, size: document.size, mediaType: document.mediaType))
        }
        let (version, manifestBytes) = try chooseVersion(packName: packName, entries: entries, state: state)
        let manifestDigest = BlobHasher.digest(of: manifestBytes)
        records.append(BlobRecord(digest: manifestDigest, size: Int64(manifestBytes.count), mediaType: Self.manifestMediaType))
        let commit = ImportCommit(
            group: group, pack: packName, version: version, manifestDigest: manifestDigest, blobs: records, assets: assets,
            totalBytes: pictureBytes, documents: plan.documents.map(\.document), grid: plan.packFile.effectiveGrid)
        return Prepared(pictures: pictures, manifest: manifestBytes, commit: commit)
    }

    /// Stages the descriptors and the manifest, several at once: each is its own small file.
    static func stageDocuments(of prepared: Prepared, in area: StagingArea) throws -> [StagedBlob] {
        let (assets, manifest) = (prepared.commit.assets, prepared.manifest)
        return try concurrentMap(assets.count + 1) { index in
            try area.stage(index < assets.count ? CanonicalJSON.encode(assets[index].descriptor) : manifest)
        }
    }

    /// pack.json's version when given (a clash with other content is refused before anything is stored); otherwise the
    /// current version when the content is unchanged, else the next whole number.
    private func chooseVersion(packName: String, entries: [PackManifest.Entry], state: PackState?) throws -> (String, [UInt8]) {
        func manifest(_ version: String) throws -> [UInt8] {
            try CanonicalJSON.encode(PackManifest(
                name: packName, version: version, packFile: plan.packFile, assets: entries, documents: plan.documents.map(\.document)))
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
