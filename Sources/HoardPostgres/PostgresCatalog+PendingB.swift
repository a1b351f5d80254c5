import Foundation
import HoardCatalog
import HoardCore

// Calls not yet written for PostgreSQL (packs, import, listing): each fails with a clear error until it is. Delete a call here when
// PostgresCatalog+<Area>.swift implements it.
extension PostgresCatalog {
    public func packState(named name: String, group: String?) throws(CatalogError) -> PackState? { throw PostgresCatalog.pending("packState") }
    public func record(_ commit: ImportCommit, committingAfter barrier: () throws -> Void) throws(CatalogError) -> RecordOutcome { throw PostgresCatalog.pending("record") }
    public func deletePack(named name: String, group: String?) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("deletePack") }
    public func setPublic(_ isPublic: Bool, pack name: String, group: String?) throws(CatalogError) -> Bool { throw PostgresCatalog.pending("setPublic") }
    public func packs() throws(CatalogError) -> [PackSummary] { throw PostgresCatalog.pending("packs") }
    public func assets(pack: String?, kind: AssetKind?) throws(CatalogError) -> [AssetListing] { throw PostgresCatalog.pending("assets") }
    public func documents(ofPack name: String, group: String?) throws(CatalogError) -> [PackDocument] { throw PostgresCatalog.pending("documents") }
    public func assetPage(_ query: AssetQuery) throws(CatalogError) -> AssetPage { throw PostgresCatalog.pending("assetPage") }
    public func assetFacets(_ query: AssetQuery) throws(CatalogError) -> AssetFacets { throw PostgresCatalog.pending("assetFacets") }
}
