import Foundation
import HoardCore

/// What a cache keeps of a session's map once every blob the map needs is in it, so that the next join of the same
/// map (a warm join) asks the server for neither the map nor its manifest, and reads neither until the app does:
/// a warm join of 10,000 references is then two small requests and one `stat` per blob.
///
/// `ROOT/sessions/<map hex>`:
///
///     hoard-session-snapshot 2\n
///     resolution <pixels per tile, or "default" for the @1x variants>\n
///     assets <count>\n
///     manifest <digest> <byte count>\n
///     blobs <count>\n
///     <count × 32 bytes: the raw digest of every distinct blob the manifest needs>
///     <the manifest's JSON, byte for byte as the server sent it>
///
/// The map itself is a blob of the cache (its digest names it). A snapshot whose manifest does not hash to the digest
/// in its header, or whose map is missing or damaged, is ignored: the join then fetches the session whole.
struct SessionSnapshot: Sendable {
    /// The map it is the snapshot of.
    var mapDigest: Digest
    /// The map's bytes (verified against ``mapDigest``).
    var map: Data
    /// Assets in the manifest.
    var assets: Int
    /// The resolution synced, in pixels per tile (nil: the @1x variants).
    var pixelsPerTile: Double?
    /// Every distinct blob the manifest needs at that resolution.
    var blobs: [Digest]
    /// The manifest's JSON.
    var manifest: Data

    static let magic = "hoard-session-snapshot 2"

    /// The file's bytes.
    func encoded() -> Data {
        let resolution = pixelsPerTile.map { "\($0)" } ?? "default"
        let header = "\(Self.magic)\nresolution \(resolution)\nassets \(assets)\n"
            + "manifest \(BlobHasher.digest(of: manifest)) \(manifest.count)\nblobs \(blobs.count)\n"
        var data = Data(header.utf8)
        data.reserveCapacity(data.count + blobs.count * 32 + manifest.count)
        for digest in blobs { data.append(contentsOf: digest.bytes) }
        data.append(manifest)
        return data
    }

    /// Reads a snapshot file's bytes; nil when they are not one, or their manifest does not hash to its recorded digest.
    init?(decoding data: Data, mapDigest: Digest, map: Data) {
        var offset = data.startIndex
        func line() -> [Substring]? {
            guard let end = data[offset...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            defer { offset = end + 1 }
            return String(decoding: data[offset..<end], as: UTF8.self).split(separator: " ")
        }
        guard line()?.joined(separator: " ") == Self.magic,
              let resolutionLine = line(), resolutionLine.count == 2, resolutionLine[0] == "resolution",
              resolutionLine[1] == "default" || Double(resolutionLine[1]) != nil,
              let assetsLine = line(), assetsLine.count == 2, assetsLine[0] == "assets", let assets = Int(assetsLine[1]),
              let manifestLine = line(), manifestLine.count == 3, manifestLine[0] == "manifest",
              let manifestDigest = Digest(String(manifestLine[1])), let manifestSize = Int(manifestLine[2]),
              let blobsLine = line(), blobsLine.count == 2, blobsLine[0] == "blobs", let count = Int(blobsLine[1]),
              count >= 0, manifestSize >= 0, data.endIndex - offset == count * 32 + manifestSize
        else { return nil }
        let start = offset - data.startIndex
        let blobs = data.withUnsafeBytes { raw in
            (0..<count).compactMap { Digest(raw: UnsafeRawBufferPointer(rebasing: raw[(start + $0 * 32)..<(start + $0 * 32 + 32)])) }
        }
        let manifest = data[(offset + count * 32)...]
        guard BlobHasher.digest(of: manifest) == manifestDigest else { return nil }
        self.init(
            mapDigest: mapDigest, map: map, pixelsPerTile: Double(resolutionLine[1]), assets: assets, blobs: blobs, manifest: Data(manifest))
    }

    init(mapDigest: Digest, map: Data, pixelsPerTile: Double?, assets: Int, blobs: [Digest], manifest: Data) {
        self.mapDigest = mapDigest
        self.map = map
        self.pixelsPerTile = pixelsPerTile
        self.assets = assets
        self.blobs = blobs
        self.manifest = manifest
    }

    /// The summary of a sync at `pixelsPerTile` that found every blob cached, when the snapshot is of that resolution
    /// and the cache holds them all (they become what it keeps); nil otherwise.
    func summaryIfCached(in cache: BlobCacheDirectory, pixelsPerTile: Double?, started: ContinuousClock.Instant) -> SyncSummary? {
        guard self.pixelsPerTile == pixelsPerTile, blobs.allSatisfy(cache.contains) else { return nil }
        cache.keep([mapDigest: Set(blobs)], replacing: true)
        cache.markUsed(blobs)
        cache.trim()
        return SyncSummary(
            assets: assets, blobs: blobs.count, blobsCached: blobs.count, blobsFetched: 0, bytesFetched: 0, firstRenderSeconds: 0,
            firstRenderBytes: 0, totalSeconds: (ContinuousClock.now - started).seconds, requests: 0)
    }
}

extension BlobCacheDirectory {
    /// Where the snapshot of a map is kept.
    func snapshotPath(of mapDigest: Digest) -> String {
        root.path + "/sessions/" + mapDigest.hex
    }

    /// The snapshot of a map, when this cache holds one that is whole (its map included).
    func snapshot(of mapDigest: Digest) -> SessionSnapshot? {
        guard let bytes = FileManager.default.contents(atPath: snapshotPath(of: mapDigest)),
              let map = try? read(mapDigest), BlobHasher.digest(of: map) == mapDigest
        else { return nil }
        return SessionSnapshot(decoding: bytes, mapDigest: mapDigest, map: map)
    }

    /// Keeps a snapshot (and its map as a blob), replacing any earlier one of the same map atomically.
    func save(_ snapshot: SessionSnapshot) throws {
        try insert(snapshot.map, as: snapshot.mapDigest)
        let folder = root.appendingPathComponent("sessions")
        let temporary = root.appendingPathComponent("tmp").appendingPathComponent("session.\(UUID().uuidString.lowercased())")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try snapshot.encoded().write(to: temporary)
            guard rename(temporary.path, snapshotPath(of: snapshot.mapDigest)) == 0 else { throw CocoaError(.fileWriteUnknown) }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw HoardClientError(.io, "cannot keep the session's manifest in \(folder.path); check free space and permissions", cause: error)
        }
    }
}
