import HoardRepository
import Synchronization

/// Where the server's imports are, for the page's progress bar: an upload that names an id (`POST /v1/packs?progress=`)
/// is listed here from its first byte until its answer, and `GET /v1/imports/{id}` reads it. In memory only; an id
/// is the client's own random word, readable by members of the uploader's group. Each group has its own ids and its
/// own ``perGroup`` slots: one group's uploads can neither take another's id nor fill its board.
final class ImportBoard: Sendable {
    /// One import in flight.
    struct Entry: Sendable, Encodable {
        /// `receiving` while the archive arrives, then the importer's phase (`reading`, `publishing`, `committing`).
        var phase: String
        /// Archive bytes received, then read by the importer.
        var bytesDone: Int64
        /// The archive's size (0 while unknown).
        var bytesTotal: Int64
        /// Archive entries read so far.
        var entries: Int
    }

    private struct Slot {
        var id: String
        var groupId: Int64
        var entry: Entry
        var isCancelled = false
    }

    /// Slots by ``key(_:groupId:)``.
    private let slots = Mutex<[String: Slot]>([:])
    /// Most imports of one group followed at once; beyond it the group's uploads still run but are not listed.
    static let perGroup = 256
    /// Most imports followed at once on the server (each is an upload in flight, which connection limits bound
    /// first): a bound on memory, not a shared pool.
    static let capacity = 16_384

    /// Where a group's import `id` is kept: ids are per group.
    static func key(_ id: String, groupId: Int64) -> String { "\(groupId) \(id)" }

    /// Whether `id` can name an import: 8 to 64 letters, digits and dashes.
    static func isValid(_ id: String) -> Bool {
        (8...64).contains(id.utf8.count) && id.utf8.allSatisfy { $0 == 0x2D || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// Starts following `id` for a member of `groupId`; gives the key the other calls take, nil when the group uses
    /// the id already or has ``perGroup`` imports followed.
    func start(_ id: String, groupId: Int64, size: Int64) -> String? {
        slots.withLock { slots in
            let key = Self.key(id, groupId: groupId)
            guard slots[key] == nil, slots.count < Self.capacity, slots.values.count(where: { $0.groupId == groupId }) < Self.perGroup
            else { return nil }
            slots[key] = Slot(id: id, groupId: groupId, entry: Entry(phase: "receiving", bytesDone: 0, bytesTotal: size, entries: 0))
            return key
        }
    }

    /// Bytes received so far (`id`: the key ``start(_:groupId:size:)`` gave, as for the calls below).
    func received(_ id: String, bytes: Int64) {
        slots.withLock { $0[id]?.entry.bytesDone = bytes }
    }

    /// The importer's progress.
    func update(_ id: String, _ progress: ImportProgress) {
        slots.withLock {
            $0[id]?.entry = Entry(phase: progress.phase.rawValue, bytesDone: progress.bytesRead, bytesTotal: progress.totalBytes, entries: progress.entries)
        }
    }

    /// Stops following `id`.
    func finish(_ id: String) {
        _ = slots.withLock { $0.removeValue(forKey: id) }
    }

    /// Asks the import to stop (its importer stops at its next entry, or before publishing); false when no import of
    /// the caller's group (or, for an operator, any import) is in flight under `id`.
    func cancel(_ id: String, groupId: Int64, isAdmin: Bool) -> Bool {
        slots.withLock { slots in
            guard let key = Self.find(id, groupId: groupId, isAdmin: isAdmin, in: slots) else { return false }
            slots[key]?.isCancelled = true
            return true
        }
    }

    /// The key of the group's import `id` (an operator's: any group's, its own first).
    private static func find(_ id: String, groupId: Int64, isAdmin: Bool, in slots: [String: Slot]) -> String? {
        let own = key(id, groupId: groupId)
        if slots[own] != nil { return own }
        guard isAdmin else { return nil }
        return slots.first { $0.value.id == id }?.key
    }

    /// Whether the import under `id` was asked to stop.
    func isCancelled(_ id: String) -> Bool {
        slots.withLock { $0[id]?.isCancelled == true }
    }

    /// The import's progress, when it is in flight and the caller's group started it (or the caller is an admin).
    func entry(_ id: String, groupId: Int64, isAdmin: Bool) -> Entry? {
        slots.withLock { slots in
            Self.find(id, groupId: groupId, isAdmin: isAdmin, in: slots).flatMap { slots[$0]?.entry }
        }
    }
}
