import Foundation
import HoardCatalog
import HoardCore
import HoardRepository
import Hummingbird
import NIOCore

/// `/v1/assets`: search assets of visible packs, read one asset's descriptor.
struct AssetRoutes: Sendable {
    let hoard: Hoard
    let access: AccessIndex
    let reader: BlobReader

    /// Media type of descriptor blobs.
    static let descriptorMediaType = "application/vnd.hoard.asset+json"

    func register(on endpoints: Endpoints) {
        endpoints.on(.get, "/v1/assets") { request, context in try list(request, context) }
        endpoints.on(.get, "/v1/assets/{digest}") { _, context in try await descriptor(context) }
    }

    struct Page: Encodable {
        var assets: [AssetListing]
        var total: Int
        var nextOffset: Int?
        var nextCursor: String?
        /// With `facets=true`: what each kind and footprint would give with the other filters kept.
        var facets: AssetFacets?
    }

    /// GET ?pack=&kind=&footprint=&grid=&q=&cursor=|offset=&limit=&facets=: assets of the current versions of visible packs,
    /// by pack, kind and name; one indexed query per pack the page touches (``Catalog/assetPage(_:)``), a footprint
    /// or a search text gathers the matches once. `facets=true` adds the counts by kind and footprint.
    func list(_ request: Request, _ context: HoardRequestContext) throws -> Response {
        let query = request.uri.queryParameters
        func number(_ key: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
            guard let text = query[Substring(key)] else { return value }
            guard let parsed = Int(String(text)), range.contains(parsed) else {
                throw APIError.badRequest("\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return parsed
        }
        let offset = try number("offset", default: 0, range: 0...Int(Int32.max))
        let limit = try number("limit", default: 100, range: 1...1000)
        var cursor: AssetCursor?
        if let token = query["cursor"] {
            guard query["offset"] == nil else { throw APIError.badRequest("give cursor or offset, not both") }
            guard let parsed = AssetCursor(token: String(token)) else {
                throw APIError.badRequest("cursor is not one this server gave (take nextCursor from the previous page)")
            }
            cursor = parsed
        }
        var footprint: Footprint?
        if let text = query["footprint"] {
            let sides = text.split(separator: "x", omittingEmptySubsequences: false).map { Int(String($0)) }
            guard sides.count == 2, let width = sides[0], let height = sides[1], let parsed = Footprint(width: width, height: height) else {
                throw APIError.badRequest("footprint must be WIDTHxHEIGHT in tiles, each from 1 to \(Footprint.maxTiles) (for example 2x2)")
            }
            footprint = parsed
        }
        var grid: PackGrid.Kind?
        if let text = query["grid"] {
            guard let parsed = PackGrid.Kind(rawValue: String(text)) else { throw APIError.badRequest("grid must be square or hex") }
            grid = parsed
        }
        let facetsFlag = query["facets"].map(String.init) ?? "false"
        guard facetsFlag == "true" || facetsFlag == "false" else { throw APIError.badRequest("facets must be true or false") }
        let assetQuery = AssetQuery(
            pack: query["pack"].map(String.init), kind: query["kind"].map { AssetKind(rawValue: String($0)) },
            // Names hold no control characters (the importer refuses them); a NUL would break the full-text query.
            text: query["q"].map { String(String.UnicodeScalarView($0.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })) },
            footprint: footprint, visibility: PackVisibility(context.principal), after: cursor, offset: offset,
            limit: limit, grid: grid)
        let page = try hoard.catalog.assetPage(assetQuery)
        let next = page.next == nil || cursor != nil ? nil : offset + page.assets.count
        let facets = facetsFlag == "true" ? try hoard.catalog.assetFacets(assetQuery) : nil
        return try JSONBody.response(Page(assets: page.assets, total: page.total, nextOffset: next, nextCursor: page.next?.token, facets: facets))
    }

    /// GET {digest}: the asset's descriptor, exactly the bytes its digest names.
    func descriptor(_ context: HoardRequestContext) async throws -> Response {
        let digest = try BlobRoutes.digest(context)
        guard let entry = access.readable(digest, by: context.principal), entry.mediaType == Self.descriptorMediaType else {
            throw APIError.notFound("no asset \(digest)")
        }
        let bytes = try await reader.buffer(digest, size: entry.size, logger: context.logger)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .eTag: "\"\(digest)\"", .cacheControl: "public, max-age=31536000, immutable"],
            body: .init(byteBuffer: bytes))
    }
}
