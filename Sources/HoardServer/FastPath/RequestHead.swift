import HoardCore

/// A strict reader of HTTP/1.1 request heads for ``BlobFastPath``, in front of NIO's decoder: enough to answer a
/// blob `GET` or `HEAD`, and to know exactly where any other request ends so it can be handed on whole. It never
/// guesses: whatever it does not understand exactly is `.foreign`, and the fast path then gives the rest of the
/// connection to NIO's decoder, which owns every error.
///
/// What it reads:
/// - the request line `method SP target SP HTTP/1.1 CRLF`, the method a token, the target visible ASCII only;
/// - header lines `name ":" OWS value OWS CRLF`, names made of token characters, values of visible ASCII, space
///   and tab; every line ends in CRLF; at most ``maxFields`` of them, the head at most ``maxLength`` bytes;
/// - the body's length from one `Content-Length` of digits (none: no body).
/// A head is `.foreign` when it has another version, any other byte, a folded line, a body framed otherwise
/// (`Transfer-Encoding`, a repeated or odd `Content-Length`), or asks for more than one response to one request
/// (`CONNECT`, `Upgrade`, `Expect`): the fast path could not tell where the next request starts.
struct RequestHead {
    enum Parse {
        /// More bytes are needed.
        case incomplete
        /// Not a head this reader understands: the connection is handed over whole.
        case foreign
        /// A head of `length` bytes (its body, ``RequestHead/bodyLength`` bytes, follows).
        case request(RequestHead, length: Int)
    }

    static let maxLength = 8 << 10
    private static let blobPrefix = Array("/v1/blobs/".utf8)
    static let maxFields = 64

    enum Method { case get, head, other }

    var method = Method.other
    var isHead: Bool { method == .head }
    /// Bytes of body after the head.
    var bodyLength = 0
    /// The blob when the target is exactly `/v1/blobs/sha256:<64 lowercase hex>` (no query, no escape).
    var blob: Digest?
    var authorization: String?
    var range: String?
    var ifNoneMatch: String?
    var ifRange: String?
    /// The `Connection` header, if any.
    var connection: String?
    /// A header this reader keeps was sent twice: the router decides how the values combine.
    var hasRepeats = false

    /// Reads the head at the start of `bytes`.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Parse {
        var reader = Reader(bytes: bytes)
        var head = RequestHead()
        // Request line.
        guard let line = reader.line() else { return reader.verdict }
        guard let space = line.firstIndex(of: UInt8(ascii: " ")), space > line.startIndex else { return .foreign }
        let method = line[line.startIndex..<space]
        guard method.allSatisfy(isTokenCharacter), !method.elementsEqual("CONNECT".utf8) else { return .foreign }
        if method.elementsEqual("GET".utf8) {
            head.method = .get
        } else if method.elementsEqual("HEAD".utf8) {
            head.method = .head
        }
        let afterMethod = line.index(after: space)
        guard let secondSpace = line[afterMethod...].firstIndex(of: UInt8(ascii: " ")), secondSpace > afterMethod,
            line[afterMethod..<secondSpace].allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            line[line.index(after: secondSpace)...].elementsEqual("HTTP/1.1".utf8)
        else { return .foreign }
        let target = line[afterMethod..<secondSpace]
        if target.starts(with: blobPrefix) { head.blob = Digest(utf8: UnsafeRawBufferPointer(rebasing: target.dropFirst(blobPrefix.count))) }
        // Header lines, up to the empty line.
        var fields = 0
        var hasLength = false
        while true {
            guard let line = reader.line() else { return reader.verdict }
            if line.isEmpty { return .request(head, length: reader.offset) }
            fields += 1
            guard fields <= maxFields, let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                line[line.startIndex..<colon].allSatisfy(isTokenCharacter)
            else { return .foreign }
            var value = line[line.index(after: colon)...]
            guard value.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 }) else { return .foreign }
            value = value.drop { $0 == 0x20 || $0 == 0x09 }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            let name = line[line.startIndex..<colon]
            switch name.count {
            case 5 where equalsIgnoringCase(name, "range"): head.keep(value, in: \.range)
            case 6 where equalsIgnoringCase(name, "expect"): return .foreign
            case 7 where equalsIgnoringCase(name, "upgrade"): return .foreign
            case 8 where equalsIgnoringCase(name, "if-range"): head.keep(value, in: \.ifRange)
            case 10 where equalsIgnoringCase(name, "connection"): head.keep(value, in: \.connection)
            case 13 where equalsIgnoringCase(name, "authorization"): head.keep(value, in: \.authorization)
            case 13 where equalsIgnoringCase(name, "if-none-match"): head.keep(value, in: \.ifNoneMatch)
            case 14 where equalsIgnoringCase(name, "content-length"):
                guard !hasLength, (1...15).contains(value.count), value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return .foreign }
                hasLength = true
                head.bodyLength = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            case 17 where equalsIgnoringCase(name, "transfer-encoding"): return .foreign
            default: break
            }
        }
    }

    private mutating func keep(_ value: Slice<UnsafeRawBufferPointer>, in field: WritableKeyPath<RequestHead, String?>) {
        if self[keyPath: field] != nil { hasRepeats = true }
        self[keyPath: field] = String(decoding: value, as: UTF8.self)
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Whether `bytes` spell `lowercase` in any letter case (`lowercase` holds letters and `-` only).
    static func equalsIgnoringCase<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            zip(bytes, expected).allSatisfy { $0 | 0x20 == $1 | 0x20 }
        }
    }

    /// Splits lines ending in CRLF; a bare CR or LF makes the head foreign.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        /// What to answer when ``line()`` returned nil.
        var verdict = Parse.incomplete

        mutating func line() -> Slice<UnsafeRawBufferPointer>? {
            var index = offset
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\r"):
                    guard index + 1 < bytes.count else { return incomplete() }
                    guard bytes[index + 1] == UInt8(ascii: "\n") else { return foreign() }
                    defer { offset = index + 2 }
                    return bytes[offset..<index]
                case UInt8(ascii: "\n"):
                    return foreign()
                default:
                    index += 1
                }
            }
            return incomplete()
        }

        private mutating func incomplete() -> Slice<UnsafeRawBufferPointer>? {
            verdict = bytes.count >= RequestHead.maxLength ? .foreign : .incomplete
            return nil
        }

        private mutating func foreign() -> Slice<UnsafeRawBufferPointer>? {
            verdict = .foreign
            return nil
        }
    }
}
