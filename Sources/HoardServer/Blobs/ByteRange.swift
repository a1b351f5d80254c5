/// A parsed `Range` request header, as RFC 9110 reads it for one resource of known size.
enum ByteRange: Equatable {
    /// No usable range: serve the whole blob (no header, another unit, several ranges, or malformed).
    case whole
    /// One satisfiable range, already clamped to the blob.
    case part(ClosedRange<Int64>)
    /// A well-formed range that starts past the end: 416.
    case unsatisfiable

    /// Parses `bytes=a-b`, `bytes=a-` and `bytes=-n` against a blob of `size` bytes.
    static func parse(_ header: String?, size: Int64) -> ByteRange {
        guard let header, header.hasPrefix("bytes=") else { return .whole }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        func number(_ text: String) -> Int64? {
            guard !text.isEmpty, text.count <= 18, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) else { return nil }
            return Int64(text)
        }
        if first.isEmpty {
            guard let suffix = number(last) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)...(size - 1))
        }
        guard let start = number(first) else { return .whole }
        var end = size - 1
        if !last.isEmpty {
            guard let parsed = number(last) else { return .whole }
            guard parsed >= start else { return .whole }
            end = min(parsed, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .part(start...end)
    }
}
