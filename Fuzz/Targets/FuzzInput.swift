/// The bytes libFuzzer hands a target, and a way to split them into a few independent fields.
struct FuzzInput {
    var bytes: [UInt8]

    init(_ start: UnsafeRawPointer?, _ count: Int) {
        bytes = count > 0 && start != nil ? Array(UnsafeRawBufferPointer(start: start, count: count)) : []
    }

    /// The input cut at each 0x00 byte (at most `limit` parts), so one input can carry a path and a pack.json.
    func fields(_ limit: Int) -> [[UInt8]] {
        bytes.split(separator: 0, maxSplits: limit - 1, omittingEmptySubsequences: false).map(Array.init)
    }
}
