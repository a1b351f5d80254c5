import Foundation
import HoardCatalog
import HoardCore

/// A stand-in digest for test bytes: 32 bytes derived from `bytes` with FNV-1a (the catalog never rehashes).
func fakeDigest(_ bytes: [UInt8]) -> Digest {
    var out: [UInt8] = []
    for lane in 0..<4 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 &+ UInt64(lane) &* 0x1000_0000_01B3
        for byte in bytes + [UInt8(lane)] {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        out += (0..<8).map { UInt8(truncatingIfNeeded: hash >> (8 * $0)) }
    }
    guard let digest = Digest(bytes: out) else { preconditionFailure("32 bytes make a digest") }
    return digest
}

func fakeDigest(_ label: String) -> Digest { fakeDigest(Array(label.utf8)) }

/// One picture of an asset, as a test describes it.
struct PictureSpec {
    var scale: Int
    var width: Int
    var height: Int
    var size: Int64
    var mediaType: MediaType = .png
    /// What the picture shows; equal labels make equal blobs, so packs can share pictures.
    var label: String
}

/// One asset of a test pack.
struct AssetSpec {
    var kind: AssetKind
    var name: String
    var footprint: Footprint = .single
    var pictures: [PictureSpec]

    /// The descriptor the import would write for this asset.
    var descriptor: AssetDescriptor {
        AssetDescriptor(kind: kind, name: name, footprint: footprint, variants: pictures.map { picture in
            AssetDescriptor.Variant(
                scale: picture.scale, digest: fakeDigest("picture:" + picture.label), width: picture.width, height: picture.height,
                size: picture.size, mediaType: picture.mediaType)
        })
    }
}

/// An import commit built in code: picture blobs, descriptor blobs and a manifest blob, like a real import.
struct CommitFixture {
    var commit: ImportCommit
    /// Every blob the commit references.
    var blobDigests: Set<Digest> { Set(commit.blobs.map(\.digest)) }
    /// The descriptor digests, in asset order.
    var assetDigests: [Digest] { commit.assets.map(\.digest) }

    init(group: String = "dragons", pack: String = "goblins", version: String = "1", assets: [AssetSpec], manifestSalt: String = "") {
        var blobs: [Digest: BlobRecord] = [:]
        var described: [(descriptor: AssetDescriptor, digest: Digest)] = []
        var total: Int64 = 0
        for asset in assets {
            for picture in asset.pictures {
                let digest = fakeDigest("picture:" + picture.label)
                blobs[digest] = BlobRecord(digest: digest, size: picture.size, mediaType: picture.mediaType.rawValue)
                total += picture.size
            }
            let bytes = (try? CanonicalJSON.encode(asset.descriptor)) ?? []
            let digest = fakeDigest(bytes)
            blobs[digest] = BlobRecord(digest: digest, size: Int64(bytes.count), mediaType: "application/vnd.hoard.asset+json")
            described.append((asset.descriptor, digest))
        }
        let manifestKey = "manifest:\(pack):\(version):\(manifestSalt):" + described.map(\.digest.description).joined()
        let manifest = fakeDigest(manifestKey)
        blobs[manifest] = BlobRecord(digest: manifest, size: 512, mediaType: "application/vnd.hoard.pack+json")
        commit = ImportCommit(
            group: group, pack: pack, version: version, manifestDigest: manifest,
            blobs: blobs.values.sorted { $0.digest < $1.digest }, assets: described, totalBytes: total)
    }
}

/// A small pack: a 2×2 token with two variants (PNG and WebP) and a floor texture.
func goblinAssets(labelPrefix: String = "goblins") -> [AssetSpec] {
    [
        AssetSpec(kind: .token, name: "ogre", footprint: Footprint(width: 2, height: 2) ?? .single, pictures: [
            PictureSpec(scale: 1, width: 512, height: 512, size: 40_000, label: "\(labelPrefix)/ogre@1x"),
            PictureSpec(scale: 2, width: 1024, height: 1024, size: 90_000, mediaType: .webp, label: "\(labelPrefix)/ogre@2x"),
        ]),
        AssetSpec(kind: .texture, name: "stone-floor", pictures: [
            PictureSpec(scale: 1, width: 256, height: 256, size: 12_000, label: "\(labelPrefix)/stone"),
        ]),
    ]
}

/// A fresh, empty folder under the system's temporary directory.
func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "hoard-catalog-test-" + UUID().uuidString.lowercased()
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
