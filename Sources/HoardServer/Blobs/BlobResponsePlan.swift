import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore

/// What a blob `GET` or `HEAD` answers, decided from the request's headers alone: status, headers and which bytes.
/// One decision shared by the router's handler and ``BlobFastPath``, so both answer a request the same way.
struct BlobResponsePlan {
    /// 200, 206 or 304.
    var status: HTTPResponse.Status
    /// Every header of the response, `Content-Length` included when no body follows.
    var headers: HTTPFields
    /// The bytes to send: nil for the whole blob.
    var part: ClosedRange<Int64>?
    /// Whether bytes follow the head (not for HEAD, 304 or an empty blob).
    var hasBody: Bool

    /// Header value of `Cache-Control` on every blob: blobs never change.
    static let cacheControl = "public, max-age=31536000, immutable"

    /// The plan for `digest`, described by `entry`, asked for with `request` headers. Throws
    /// ``APIError/rangeNotSatisfiable(size:)`` for a range that starts past the end.
    static func make(_ digest: Digest, _ entry: BlobAccess, request: HTTPFields, isHead: Bool) throws -> BlobResponsePlan {
        let etag = "\"\(digest)\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: cacheControl, .acceptRanges: "bytes", .contentType: entry.mediaType]
        if let match = request[.ifNoneMatch], matches(match, etag: etag) {
            return BlobResponsePlan(status: .notModified, headers: headers, part: nil, hasBody: false)
        }
        var range = ByteRange.whole
        if request[.ifRange] == nil || request[.ifRange] == etag {
            range = ByteRange.parse(request[.range], size: entry.size)
        }
        var status = HTTPResponse.Status.ok
        var part: ClosedRange<Int64>?
        switch range {
        case .whole: break
        case .unsatisfiable: throw APIError.rangeNotSatisfiable(size: entry.size)
        case .part(let wanted):
            status = .partialContent
            part = wanted
            headers[.contentRange] = "bytes \(wanted.lowerBound)-\(wanted.upperBound)/\(entry.size)"
        }
        let length = part.map { Int64($0.count) } ?? entry.size
        let hasBody = !isHead && length > 0
        if !hasBody { headers[.contentLength] = String(length) }
        return BlobResponsePlan(status: status, headers: headers, part: part, hasBody: hasBody)
    }

    /// Whether an `If-None-Match` value names `etag` (or `*`); weak tags compare equal, as RFC 9110 asks.
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
