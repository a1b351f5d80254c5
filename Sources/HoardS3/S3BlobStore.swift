import Foundation
import HoardCore
import HoardStore
import NIOCore

/// Blobs as objects in an S3-compatible bucket, laid out as ``FileBlobStore`` lays out its files, so that copying a
/// file store's folder into the bucket (`aws s3 sync DATA/blobs s3://BUCKET/PREFIX`) moves it as it is:
///
///     BUCKET/PREFIX/v1/sha256/ab/abcdef…      one object per blob, named by its full hex digest
///
/// Staging stays local (``S3Configuration/stagingDirectory``): a blob is written and hashed there, and only bytes that
/// hash to their digest are uploaded, so an object under a digest's key only ever holds that digest's bytes:
/// - ``publish(_:)`` looks each blob up (HEAD) and uploads only the absent ones; a publish of many lists the bucket
///   first and uploads those the listing shows absent without a HEAD (``absentByListing(_:)``). Before an upload it
///   hashes the staged bytes again and refuses to send them if they no longer match; the upload is signed with that same SHA-256
///   (`x-amz-content-sha256`), which the service checks against what it receives. Above
///   ``S3Configuration/multipartThreshold`` it uploads in parts, hashing as it goes, and completes the upload only when
///   the whole hash matched (it aborts it otherwise). S3 makes an object visible only once its PUT or its
///   multipart completion succeeded, so readers never see part of a blob.
/// - A blob's age for garbage collection is the `x-amz-meta-touched` time when present, else `Last-Modified`.
///   ``touch(_:)`` (and a publish that finds the blob present) copies the object onto itself with that metadata
///   replaced: S3 cannot change an object's date otherwise. The copy is server-side, but it is a copy, so a blob
///   already refreshed within ``S3Configuration/refreshInterval`` is left alone; gc's grace period must stay well
///   above that interval. Server-side copies stop at 5 GB on AWS: larger blobs cannot be touched there.
/// - ``allDigests()`` lists the prefix page by page (ListObjectsV2); ``delete(_:)`` is one DELETE.
public struct S3BlobStore: BlobStore {
    /// The bucket, prefix and service.
    public let configuration: S3Configuration
    /// The client every request goes through.
    public let client: S3Client
    /// The metadata name holding the last publish or touch, in seconds since 1970.
    static let touchedKey = "touched"

    /// A store over `configuration`. Makes the staging folder; contacts nothing (``validate()`` does).
    public init(configuration: S3Configuration) throws {
        try configuration.validateSizes()
        self.configuration = configuration
        self.client = S3Client(configuration: configuration)
        do {
            try FileManager.default.createDirectory(atPath: configuration.stagingDirectory, withIntermediateDirectories: true)
        } catch {
            throw BlobStoreError(.io, "cannot create the staging folder \(configuration.stagingDirectory); check permissions", causedBy: error)
        }
    }

    /// A store for `s3://BUCKET[/PREFIX]`: ``S3Configuration/init(location:endpoint:region:credentials:stagingDirectory:)``.
    public init(location: String, endpoint: String? = nil, region: String? = nil, credentials: S3Credentials? = nil,
                stagingDirectory: String) throws {
        try self.init(configuration: S3Configuration(location: location, endpoint: endpoint, region: region, credentials: credentials,
                                                     stagingDirectory: stagingDirectory))
    }

    /// The start check: makes the bucket if missing, and fails with a clear ``BlobStoreError`` when the service cannot be
    /// reached (`STORAGE_UNAVAILABLE`) or refuses the credentials (`STORAGE_MISCONFIGURED`, naming the variable to check).
    public func validate() async throws {
        try await client.createBucketIfMissing()
    }

    /// The object key of a blob.
    public func key(of digest: Digest) -> String {
        let hex = digest.hex
        return "\(keyRoot)/\(hex.prefix(2))/\(hex)"
    }

    /// `PREFIX/v1/sha256`, the folder every blob key starts with.
    private var keyRoot: String {
        (configuration.prefix.isEmpty ? "" : configuration.prefix + "/") + "v1/sha256"
    }

    public func makeStagingArea() throws -> StagingArea {
        try StagingArea(directory: "\(configuration.stagingDirectory)/\(UUID().uuidString.lowercased())")
    }

    public func publish(_ blobs: [StagedBlob]) async throws -> PublishSummary {
        var seen = Set<Digest>()
        let unique = blobs.filter { seen.insert($0.digest).inserted }
        let allSmall = unique.allSatisfy { $0.size <= configuration.smallBlob }
        let width = allSmall ? max(configuration.concurrency, configuration.smallBlobConcurrency) : configuration.concurrency
        let absent = try await absentByListing(unique.map(\.digest))
        let uploaded = try await concurrentlyMap(unique, width: width) { blob in
            try await publishOne(blob, listedAbsent: absent.contains(blob.digest))
        }
        var summary = PublishSummary()
        for (blob, isNew) in zip(unique, uploaded) where isNew {
            summary.newBlobs.insert(blob.digest)
            summary.newBytes += blob.size
        }
        return summary
    }

    /// Uploads one blob unless present (then refreshes its date); `listedAbsent` skips the look-up. Returns whether it
    /// was uploaded.
    private func publishOne(_ blob: StagedBlob, listedAbsent: Bool) async throws -> Bool {
        if !listedAbsent, let present = try await client.head(key(of: blob.digest)) {
            try await refresh(blob.digest, modified: modified(of: present), to: Date())
            return false
        }
        if blob.size > configuration.multipartThreshold {
            try await uploadInParts(blob)
        } else {
            let body = try blob.withMappedBytes { bytes in
                guard BlobHasher.digest(of: bytes) == blob.digest else {
                    throw BlobStoreError(.corrupt, "the staged bytes of \(blob.digest) no longer match its digest; nothing was uploaded")
                }
                return ByteBuffer(bytes: bytes)
            }
            try await client.put(key(of: blob.digest), body: body, payloadHash: blob.digest.hex, metadata: touchedMetadata(Date()))
        }
        return true
    }

    /// Which of `digests` a listing of the bucket shows absent, so that a publish uploads them without a HEAD each
    /// (on an empty bucket that was one request in two). The walk goes in key order, each page starting just before the
    /// first digest not yet answered for: where the bucket holds few other keys among them, one page answers for up to
    /// ``S3Configuration/listPageSize`` of them. Only for at least ``S3Configuration/listingMinimum`` digests, and it
    /// stops at a page answering for fewer (a bucket holding many other blobs): a HEAD each is cheaper there.
    ///
    /// A listing only ever spares a HEAD. A blob it shows present is still looked up (and refreshed) as before; one it
    /// shows absent is uploaded, and if it was there after all (a listing that lags a write), the upload stores the
    /// same verified bytes under a new date, which is what a refresh would have done.
    func absentByListing(_ digests: [Digest]) async throws -> Set<Digest> {
        guard digests.count >= configuration.listingMinimum else { return [] }
        // S3 lists in the byte order of the keys' UTF-8.
        let wanted = digests.map { (key: key(of: $0), digest: $0) }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var absent = Set<Digest>()
        var next = 0
        while next < wanted.count {
            let page = try await client.listPage(prefix: keyRoot + "/", startAfter: Self.keyJustBefore(wanted[next].key),
                                                 continuation: nil, maxKeys: configuration.listPageSize)
            let listed = Set(page.keys)
            // A page answers for every key up to its last one; the last page for all the rest.
            let last = page.next == nil ? nil : page.keys.last ?? ""
            let first = next
            while next < wanted.count, last.map({ !$0.utf8.lexicographicallyPrecedes(wanted[next].key.utf8) }) ?? true {
                if !listed.contains(wanted[next].key) { absent.insert(wanted[next].digest) }
                next += 1
            }
            if next - first < configuration.listingMinimum { break }
        }
        return absent
    }

    /// `key` with its last character one lower (a blob key ends in a hex digit): `start-after` it, a listing starts at
    /// `key`.
    static func keyJustBefore(_ key: String) -> String {
        guard let last = key.unicodeScalars.last, last.value > 0, let lower = Unicode.Scalar(last.value - 1) else { return key }
        return String(key.unicodeScalars.dropLast()) + String(lower)
    }

    /// A multipart upload, each part hashed (its own `x-amz-content-sha256`) and the whole hashed along the way; the
    /// upload is completed only when the whole matches the digest, aborted on any failure.
    private func uploadInParts(_ blob: StagedBlob) async throws {
        guard let file = FileHandle(forReadingAtPath: blob.path) else {
            throw BlobStoreError(.io, "the staged file for \(blob.digest) is gone", cause: blob.path)
        }
        defer { try? file.close() }
        let key = key(of: blob.digest)
        let uploadID = try await client.createMultipartUpload(key, metadata: touchedMetadata(Date()))
        do {
            var whole = BlobHasher()
            var etags: [String] = []
            var offset: Int64 = 0
            while offset < blob.size {
                let count = Int(min(Int64(configuration.partSize), blob.size - offset))
                let part: Data
                do {
                    part = try file.read(upToCount: count) ?? Data()
                } catch {
                    throw BlobStoreError(.io, "cannot read the staged file for \(blob.digest)", causedBy: error)
                }
                guard part.count == count else {
                    throw BlobStoreError(.corrupt, "the staged file for \(blob.digest) is shorter than its size; nothing was uploaded")
                }
                whole.update(part)
                let hash = BlobHasher.digest(of: part).hex
                etags.append(try await client.uploadPart(key, uploadID: uploadID, number: etags.count + 1,
                                                         body: ByteBuffer(bytes: part), payloadHash: hash))
                offset += Int64(count)
            }
            guard whole.finalize() == blob.digest else {
                throw BlobStoreError(.corrupt, "the staged bytes of \(blob.digest) no longer match its digest; nothing was uploaded")
            }
            try await client.completeMultipartUpload(key, uploadID: uploadID, etags: etags)
        } catch {
            try? await client.abortMultipartUpload(key, uploadID: uploadID)
            throw error
        }
    }

    public func info(_ digest: Digest) async throws -> BlobInfo? {
        try await client.head(key(of: digest)).map { BlobInfo(size: $0.size, modified: modified(of: $0)) }
    }

    public func read(_ digest: Digest, range: Range<Int64>?) async throws -> [UInt8]? {
        var bytes: [UInt8] = []
        let found = try await client.get(key(of: digest), range: range) { piece in
            bytes.append(contentsOf: piece.readableBytesView)
        }
        return found ? bytes : nil
    }

    public func rehash(_ digest: Digest) async throws -> (digest: Digest, size: Int64)? {
        var hasher = BlobHasher()
        let found = try await client.get(key(of: digest)) { piece in
            piece.withUnsafeReadableBytes { hasher.update($0) }
        }
        return found ? (hasher.finalize(), hasher.count) : nil
    }

    /// Renews the blob's `touched` metadata by copying it onto itself, unless it was renewed within
    /// ``S3Configuration/refreshInterval``; nothing when absent.
    public func touch(_ digest: Digest) async throws {
        guard let head = try await client.head(key(of: digest)) else { return }
        try await refresh(digest, modified: modified(of: head), to: Date())
    }

    /// Sets the blob's `touched` time to `date` when the one it has (`modified`) is older than the refresh interval.
    private func refresh(_ digest: Digest, modified: Date, to date: Date) async throws {
        guard date.timeIntervalSince(modified) >= configuration.refreshInterval else { return }
        try await setTouched(digest, to: date)
    }

    /// Sets the blob's `touched` time to `date`, whatever it was (tests age blobs this way); nothing when absent.
    func setTouched(_ digest: Digest, to date: Date) async throws {
        _ = try await client.replaceMetadata(key(of: digest), with: touchedMetadata(date))
    }

    public func delete(_ digest: Digest) async throws {
        try await client.delete(key(of: digest))
    }

    public func allDigests() async throws -> [Digest] {
        var digests: [Digest] = []
        var continuation: String?
        repeat {
            let page = try await client.listPage(prefix: keyRoot + "/", startAfter: nil, continuation: continuation,
                                                 maxKeys: configuration.listPageSize)
            for key in page.keys {
                let parts = key.dropFirst(keyRoot.count + 1).split(separator: "/")
                if parts.count == 2, parts[1].hasPrefix(parts[0]), let digest = Digest("sha256:" + parts[1]) { digests.append(digest) }
            }
            continuation = page.next
        } while continuation != nil
        return digests
    }

    public func removeStaleStaging(olderThan age: TimeInterval) async throws -> Int {
        StagingArea.removeStale(in: configuration.stagingDirectory, olderThan: age)
    }

    private func modified(of head: S3Client.ObjectHead) -> Date {
        head.metadata[Self.touchedKey].flatMap(TimeInterval.init).map { Date(timeIntervalSince1970: $0) } ?? head.lastModified
    }

    private func touchedMetadata(_ date: Date) -> [String: String] {
        [Self.touchedKey: String(format: "%.3f", date.timeIntervalSince1970)]
    }
}

/// `transform` over `items`, at most `width` at a time, results in the items' order.
func concurrentlyMap<Item: Sendable, Result: Sendable>(
    _ items: [Item], width: Int, _ transform: @escaping @Sendable (Item) async throws -> Result
) async throws -> [Result] {
    try await withThrowingTaskGroup(of: (Int, Result).self) { group in
        var results = [Result?](repeating: nil, count: items.count)
        var next = 0
        while next < min(width, items.count) {
            let index = next
            group.addTask { (index, try await transform(items[index])) }
            next += 1
        }
        while let (index, result) = try await group.next() {
            results[index] = result
            if next < items.count {
                let index = next
                group.addTask { (index, try await transform(items[index])) }
                next += 1
            }
        }
        return results.compactMap { $0 }
    }
}
