import Hummingbird

extension Request {
    /// A whole-number query parameter within `range`; `value` when absent, 400 BAD_REQUEST otherwise.
    func queryNumber(_ key: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = uri.queryParameters[Substring(key)] else { return value }
        guard let parsed = Int(String(text)), range.contains(parsed) else {
            throw APIError.badRequest("\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return parsed
    }
}
