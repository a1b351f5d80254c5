import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird
import NIOCore

/// `/v1/blobs`: immutable bytes by digest, what a caller lacks, uploads verified against their digest, and batches.
struct BlobRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let reader: BlobReader
    let limits: RateLimiter
    let configuration: ServerConfiguration

    /// Media type of a batch response.
    static let batchMediaType = "application/vnd.hoard.blob-batch"
    /// Bytes of frames a batch response gathers before writing them.
    static let batchWriteSize = 256 << 10

    func register(on endpoints: Endpoints) {
        endpoints.on(.get, "/v1/blobs/{digest}") { request, context in try await get(request, context, isHead: false) }
        endpoints.on(.head, "/v1/blobs/{digest}") { request, context in try await get(request, context, isHead: true) }
        endpoints.on(.put, "/v1/blobs/{digest}") { request, context in try await put(request, context) }
        endpoints.on(.post, "/v1/blobs/missing") { request, context in try await missing(request, context) }
        endpoints.on(.post, "/v1/blobs/batch") { request, context in try await batch(request, context) }
    }

    static func digest(_ context: HoardRequestContext) throws -> Digest {
        let text = context.parameter("digest")
        guard let digest = Digest(text) else { throw APIError.invalidDigest(text) }
        return digest
    }

    /// GET and HEAD: strong ETag = digest, immutable caching, single ranges (suffix included), If-None-Match.
    /// ``BlobFastPath`` answers the same requests for hot blobs before they reach the router, with the same plan.
    func get(_ request: Request, _ context: HoardRequestContext, isHead: Bool) async throws -> Response {
        let digest = try Self.digest(context)
        guard let entry = access.readable(digest, by: context.principal) else { throw APIError.notFound("no blob \(digest)") }
        let plan = try BlobResponsePlan.make(digest, entry, request: request.headers, isHead: isHead)
        guard plan.hasBody else { return Response(status: plan.status, headers: plan.headers) }
        let body = try await reader.body(digest, size: entry.size, range: plan.part, context: context)
        reader.metrics.bytesServed.increment(by: plan.part.map { Int64($0.count) } ?? entry.size)
        return Response(status: plan.status, headers: plan.headers, body: body)
    }

    struct DigestList: Decodable {
        var digests: [String]
    }

    private func parse(_ list: DigestList, max: Int) throws -> [Digest] {
        guard list.digests.count <= max else {
            throw APIError.tooLarge("at most \(max) digests per request, not \(list.digests.count); split the request")
        }
        return try list.digests.map { text in
            guard let digest = Digest(text) else { throw APIError.invalidDigest(text) }
            return digest
        }
    }

    /// POST missing: which of these the caller cannot fetch here (absent, or not visible to it).
    func missing(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let list = try await request.decode(as: DigestList.self, context: context)
        let digests = try parse(list, max: configuration.maxMissingCount)
        let readable = access.readable(digests, by: context.principal)
        let missing = zip(digests, readable).filter { $0.1 == nil }.map(\.0.description)
        return try JSONBody.response(["missing": missing])
    }

    /// PUT: streams the body into staging while hashing it; stores it only when it hashes to the URL's digest.
    func put(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let principal = try context.requireMember()
        let digest = try Self.digest(context)
        try limits.admit(principal)
        let limit = configuration.maxBlobUpload
        if let declared = request.headers[.contentLength].flatMap(Int64.init), declared > limit {
            throw APIError.tooLarge("the blob is \(declared) bytes; the limit is \(limit)")
        }
        let body = BlobSource.stream(keepingPrefix: 64 << 10) { sink in
            var size: Int64 = 0
            for try await buffer in request.body {
                size += Int64(buffer.readableBytes)
                guard size <= limit else { throw APIError.tooLarge("the blob is over the limit of \(limit) bytes") }
                try buffer.withUnsafeReadableBytes { try sink.write($0) }
            }
        }
        let size = try await hoard.write(body) { incoming in
            guard incoming.digest == digest else { throw APIError.digestMismatch(expected: digest, actual: incoming.digest) }
            let alreadyVisible = access.readable(digest, by: principal) != nil
            if !alreadyVisible { try hoard.catalog.requireQuota(group: principal.group, adding: incoming.size, for: "this blob") }
        } record: { incoming in
            let isWhole = incoming.size <= Int64(incoming.prefix.count)
            let mediaType = (try? ImageHeader.read(incoming.prefix, isComplete: isWhole).mediaType.rawValue) ?? "application/octet-stream"
            try hoard.catalog.recordUpload(BlobRecord(digest: digest, size: incoming.size, mediaType: mediaType), groupId: principal.groupId)
            return incoming.size
        }
        try await access.catchUp()
        context.logger.info("blob uploaded", metadata: ["digest": "\(digest)", "size": "\(size)", "group": "\(principal.group)"])
        struct Stored: Encodable {
            var digest: Digest
            var size: Int64
        }
        // 201 whether or not the bytes were stored before: a 200 for bytes already there would tell the sender that
        // someone (perhaps another group) holds them.
        return try JSONBody.response(Stored(digest: digest, size: size), status: .created)
    }

    /// POST batch: many small blobs in one streamed response. Framing (Schemas/openapi.yaml, DESIGN.md): for each
    /// requested digest in order, a line `sha256:<hex> <size>\n` followed by exactly `size` bytes and `\n`;
    /// `sha256:<hex> -\n` when the caller cannot fetch it; `sha256:<hex> >\n` when it is too large for a batch
    /// (over the cache's largest blob): GET it on its own.
    func batch(_ request: Request, _ context: HoardRequestContext) async throws -> Response {
        let list = try await request.decode(as: DigestList.self, context: context)
        let digests = try parse(list, max: configuration.maxBatchCount)
        let principal = context.principal
        let access = self.access
        let reader = self.reader
        let logger = context.logger
        let body = ResponseBody { writer in
            // Frames are gathered into writes of about 256 KiB: one write (and one wake-up of the client) per small
            // blob cost more than the blob itself.
            // Blobs are fetched 32 at a time: those not in the cache are read together (BlobReader.buffers).
            var pending = ByteBuffer()
            for group in stride(from: 0, to: digests.count, by: 32).map({ digests[$0..<min($0 + 32, digests.count)] }) {
                let entries = Array(zip(group, access.readable(Array(group), by: principal)))
                let servable = entries.compactMap { digest, entry in
                    entry.flatMap { $0.size <= Int64(reader.cache.maxEntry) ? (digest, $0.size) : nil }
                }
                var loaded = try await reader.buffers(servable, logger: logger)[...]
                for (digest, entry) in entries {
                    guard let entry else {
                        pending.writeString("\(digest) -\n")
                        continue
                    }
                    guard entry.size <= Int64(reader.cache.maxEntry), var bytes = loaded.popFirst() else {
                        pending.writeString("\(digest) >\n")
                        continue
                    }
                    pending.writeString("\(digest) \(entry.size)\n")
                    pending.writeBuffer(&bytes)
                    pending.writeString("\n")
                    reader.metrics.bytesServed.increment(by: entry.size)
                }
                if pending.readableBytes >= Self.batchWriteSize {
                    try await writer.write(pending)
                    pending = ByteBuffer()
                }
            }
            if pending.readableBytes > 0 { try await writer.write(pending) }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: Self.batchMediaType], body: body)
    }
}
