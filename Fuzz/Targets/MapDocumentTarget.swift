import Foundation
import HoardCore

/// The map door, as the server runs it for every map it keeps (SessionRoutes.storedForm, SessionHub.load): JSON → a
/// value of bounded depth → `MapCheck.admitted`. What it admits is read by a table without trapping, gives every view
/// and art audience, and, stored again as the table holds it (a fold), passes the door again: a restart loads it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMapDocument(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let map = try? JSONValue(parsing: Data(FuzzInput(start, count).bytes), maxDepth: 64) else { return 0 }
    guard case .success(let stored) = MapCheck.admitted(map) else { return 0 }
    precondition(MapCheck.problem(in: stored) == nil, "an admitted map fails the door")
    var table = Table(map: stored)
    for viewer in [Table.Actor.host, .participant("p1")] {
        _ = table.view(for: viewer)
        _ = table.viewKey(for: viewer)
    }
    _ = table.artAudiences()
    _ = try? table.apply(.fog(.enabled(true)), by: .host)
    _ = try? table.apply(.fog(.reveal([TileRect(x: 0, y: 0, w: 1, h: 1)])), by: .host)
    _ = table.view(for: .participant("p1"))
    guard case .success = MapCheck.admitted(table.map) else { preconditionFailure("a table's own map fails the door") }
    return 0
}
