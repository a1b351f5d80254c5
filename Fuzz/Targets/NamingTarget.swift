import HoardCore

/// Filename conventions: an entry path (validated the way archives are) and an optional pack.json, separated by a
/// NUL byte, go through the default naming convention. A naming it returns must satisfy the convention's contract.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNaming(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let fields = FuzzInput(start, count).fields(2)
    guard case .success(let path) = EntryPathPolicy().validate(fields[0]) else { return 0 }
    var packFile = PackFile()
    if fields.count > 1, case .success(let parsed) = PackFile.parse(fields[1]) { packFile = parsed }
    let registry = PluginRegistry.builtIn()
    let context = ConventionContext(packFile: packFile, kinds: registry.kinds)
    for convention in registry.conventions {
        guard let naming = try? convention.interpret(path, context: context) else { continue }
        precondition(AssetNaming.allowedScales.contains(naming.scale), "scale \(naming.scale) for \(path)")
        guard let definition = context.definition(of: naming.kind) else { preconditionFailure("unregistered kind for \(path)") }
        // Each kind caps its footprints: 32 tiles a side for what is placed, the largest grid for map art.
        let sides = 1...definition.maxFootprintSide
        precondition(sides.contains(naming.footprint.width) && sides.contains(naming.footprint.height), "footprint for \(path)")
        precondition(!naming.name.isEmpty, "empty name for \(path)")
    }
    return 0
}
