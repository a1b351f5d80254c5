import HoardArchive
import HoardCore

/// Archive entry validation: a sequence of entry headers (name bytes between NULs; the byte after a name picks
/// folder or file and a declared size) through one EntryGate. An admitted path must be safe to use as a key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntryGate(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    var limits = ImportLimits()
    limits.maxEntries = 64
    var gate = EntryGate(limits: limits, archiveSize: Int64(count) + 1)
    for field in FuzzInput(start, count).fields(64) {
        let flags = field.last ?? 0
        let name = Array(field.dropLast())
        let declared: Int64? = flags & 1 == 0 ? nil : Int64(flags) << (Int(flags) % 40)
        guard let entry = try? gate.admit(rawName: name, declaredSize: declared, isDirectory: flags & 2 != 0) else { return 0 }
        for component in entry.path.components {
            precondition(!component.isEmpty && component != "." && component != "..", "unsafe component in \(entry.path)")
            precondition(!component.utf8.contains(UInt8(ascii: "/")) && !component.utf8.contains(UInt8(ascii: "\\")), "separator in \(entry.path)")
        }
        if (try? gate.count(Int(flags) * 1000)) == nil { return 0 }
        if (try? gate.finishEntry()) == nil { return 0 }
    }
    return 0
}
