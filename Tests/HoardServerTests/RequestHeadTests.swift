import HoardCore
import Testing

@testable import HoardServer

/// ``RequestHead`` reads only the bodiless GET and HEAD heads it understands exactly; anything else is foreign.
@Suite struct RequestHeadTests {
    static let digest = "sha256:" + String(repeating: "ab", count: 32)

    static func parse(_ text: String) -> RequestHead.Parse {
        Array(text.utf8).withUnsafeBytes { RequestHead.parse($0) }
    }

    static func request(_ text: String) -> (RequestHead, Int)? {
        if case .request(let head, let length) = parse(text) { return (head, length) }
        return nil
    }

    static func isForeign(_ text: String) -> Bool {
        if case .foreign = parse(text) { return true }
        return false
    }

    static func isIncomplete(_ text: String) -> Bool {
        if case .incomplete = parse(text) { return true }
        return false
    }

    @Test func readsTheHeadersTheFastPathNeeds() throws {
        let text = "HEAD /v1/blobs/\(Self.digest) HTTP/1.1\r\nHost: x\r\nauthorization:Bearer t \r\nRange: bytes=1-2\r\n"
            + "If-None-Match: \"a\"\r\nIf-Range: \"b\"\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\nGET / HTTP/1.1\r\n"
        let (head, length) = try #require(Self.request(text))
        #expect(length == text.utf8.count - "GET / HTTP/1.1\r\n".utf8.count)
        #expect(head.method == .head && head.blob == Digest(Self.digest) && head.bodyLength == 0)
        #expect(head.authorization == "Bearer t" && head.range == "bytes=1-2")
        #expect(head.ifNoneMatch == "\"a\"" && head.ifRange == "\"b\"" && head.connection == "keep-alive")
        #expect(!head.hasRepeats)
    }

    @Test func otherTargetsAreRequestsWithoutABlob() throws {
        for target in ["/v1/packs", "/v1/blobs/\(Self.digest)?x=1", "/v1/blobs/sha256%3A\(Self.digest.dropFirst(7))",
                       "/v1/blobs/" + Self.digest.uppercased()] {
            let (head, _) = try #require(Self.request("GET \(target) HTTP/1.1\r\n\r\n"), "\(target)")
            #expect(head.blob == nil, "\(target)")
        }
        let (repeated, _) = try #require(Self.request("GET / HTTP/1.1\r\nRange: a\r\nrange: b\r\n\r\n"))
        #expect(repeated.hasRepeats)
    }

    @Test func bodiesAreMeasuredByTheirContentLength() throws {
        let head = "POST /v1/packs HTTP/1.1\r\nContent-Length: 12\r\n\r\n"
        let (post, length) = try #require(Self.request(head + "hello"))
        #expect(post.method == .other && post.bodyLength == 12 && length == head.utf8.count)
        let (get, _) = try #require(Self.request("GET / HTTP/1.1\r\ncontent-length: 0\r\n\r\n"))
        #expect(get.method == .get && get.bodyLength == 0)
    }

    @Test func partialHeadsWaitForMoreBytes() {
        let whole = "GET /v1/blobs/\(Self.digest) HTTP/1.1\r\nHost: x\r\n\r\n"
        for end in [0, 1, 20, whole.utf8.count - 3, whole.utf8.count - 1] {
            #expect(Self.isIncomplete(String(whole.utf8.prefix(end))!), "\(end) bytes")
        }
    }

    @Test func everythingElseIsForeign() {
        let heads = [
            "CONNECT example.com:443 HTTP/1.1\r\n\r\n",
            "G(T / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.0\r\n\r\n",
            "GET / HTTP/2.0\r\n\r\n",
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            "GET  / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1 \r\n\r\n",
            "GET /\u{7F} HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\nHost: x\n\n",
            "GET / HTTP/1.1\r\nHost: x\rY\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\nHo st: x\r\n\r\n",
            "GET / HTTP/1.1\r\n: x\r\n\r\n",
            "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: caf\u{E9}\r\n\r\n",
            "PUT / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            "PUT / HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello",
            "PUT / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\nhello",
            "PUT / HTTP/1.1\r\nContent-Length:\r\n\r\n",
            "PUT / HTTP/1.1\r\nContent-Length: 1234567890123456\r\n\r\n",
            "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            "GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: RequestHead.maxFields + 1) + "\r\n",
            "GET / HTTP/1.1\r\nX: " + String(repeating: "y", count: RequestHead.maxLength),
        ]
        for head in heads { #expect(Self.isForeign(head), "\(head.debugDescription)") }
    }
}
