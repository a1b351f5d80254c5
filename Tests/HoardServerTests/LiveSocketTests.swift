import Foundation
import HTTPTypes
import HoardCatalog
import HoardCore
import HoardRepository
import HoardServer
import HummingbirdTesting
import Testing

#if canImport(Glibc)
import Glibc
private let streamSocket = Int32(SOCK_STREAM.rawValue)
private let noSignal = Int32(MSG_NOSIGNAL)
#elseif canImport(Darwin)
import Darwin
private let streamSocket = SOCK_STREAM
private let noSignal: Int32 = 0
#endif

private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { connect(fd, address, length) }
private func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int { send(fd, bytes, count, flags) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }

/// The server over a real TCP socket: streamed uploads, ranges, large blobs served from disk, and clients that go away.
@Suite(.timeLimit(.minutes(2))) struct LiveSocketTests {
    @Test func packUploadStreamsOverARealSocket() async throws {
        try await Fixture.with(packs: false) { fixture in
            let archive = temporaryFile()
            defer { try? FileManager.default.removeItem(atPath: archive) }
            try Python.makePack(at: archive, name: "big-beacon", padding: 3 << 20)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: archive)))
            #expect(bytes.count > 3 << 20, "bigger than the 1 MiB spool buffer, so the spool flushes several times")
            try await fixture.run(.live) { client in
                try await client.execute(uri: "/v1/packs?name=big-beacon", method: .post, headers: auth(fixture.red), body: buffer(bytes)) { response in
                    #expect(response.status == .created, "\(response.text)")
                    let report = try response.decode(ImportReport.self)
                    #expect(report.pack == "big-beacon")
                    #expect(report.assets == 1)
                    #expect(report.bytes > 3 << 20)
                }
                try await client.execute(uri: "/v1/packs", method: .post, headers: auth(fixture.red), body: buffer(bytes)) { response throws in
                    #expect(response.status == .ok)
                    #expect(try response.decode(ImportReport.self).outcome == .unchanged)
                }
                try await client.execute(uri: "/v1/packs/big-beacon", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                }
            }
            #expect(fixture.leftovers().isEmpty)
        }
    }

    @Test func rangeRequestsWorkOverARealSocket() async throws {
        try await Fixture.with { fixture in
            let (digest, bytes) = try await fixture.picture(in: Fixture.dungeon)
            let size = bytes.count
            try await fixture.run(.live) { client in
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.range: "bytes=100-1099"])) { response in
                    #expect(response.status == .partialContent)
                    #expect(response.headers[.contentRange] == "bytes 100-1099/\(size)")
                    #expect(response.headers[.contentLength] == "1000")
                    #expect(response.bytes == Array(bytes[100...1099]))
                }
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.range: "bytes=-100"])) { response in
                    #expect(response.status == .partialContent)
                    #expect(response.bytes == Array(bytes.suffix(100)))
                }
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.range: "bytes=\(size)-"])) { response in
                    response.expectError(.rangeNotSatisfiable, "RANGE_NOT_SATISFIABLE")
                    #expect(response.headers[.contentRange] == "bytes */\(size)")
                }
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .head, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentLength] == String(size))
                    #expect(response.body.readableBytes == 0)
                }
                try await client.execute(uri: "/v1/blobs/\(digest)", method: .get, headers: auth(fixture.red, [.ifNoneMatch: "\"\(digest)\""])) { response in
                    #expect(response.status == .notModified)
                }
            }
        }
    }

    @Test func largeBlobRoundTripsThroughDiskStreamingWithAndWithoutRange() async throws {
        try await Fixture.with { fixture in
            let bytes = randomBytes(6 << 20)
            let name = digest(of: bytes)
            #expect(bytes.count > fixture.configuration.cacheMaxBlob)
            try await fixture.run(.live) { client in
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) { response in
                    #expect(response.status == .created, "\(response.text)")
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentLength] == String(bytes.count))
                    #expect(response.body.readableBytes == bytes.count)
                    #expect(digest(of: response.bytes) == name, "the whole blob comes back intact")
                }
                let ranges: [(String, ClosedRange<Int>)] = [
                    ("bytes=262000-800000", 262_000...800_000), ("bytes=-100", (bytes.count - 100)...(bytes.count - 1)),
                    ("bytes=\(bytes.count - 1)-", (bytes.count - 1)...(bytes.count - 1)), ("bytes=0-0", 0...0),
                    ("bytes=4194300-", 4_194_300...(bytes.count - 1)),
                ]
                for (header, range) in ranges {
                    try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red, [.range: header])) { response in
                        #expect(response.status == .partialContent, "\(header)")
                        #expect(response.headers[.contentRange] == "bytes \(range.lowerBound)-\(range.upperBound)/\(bytes.count)", "\(header)")
                        #expect(response.bytes == Array(bytes[range]), "\(header): wrong bytes")
                    }
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .head, headers: auth(fixture.red)) { response in
                    #expect(response.headers[.contentLength] == String(bytes.count))
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .put, headers: auth(fixture.red), body: buffer(bytes)) { response in
                    #expect(response.status == .created)
                }
            }
        }
    }

    @Test func clientDisconnectingMidBlobUploadLeavesNothingAndTheServerKeepsServing() async throws {
        try await Fixture.with { fixture in
            let bytes = randomBytes(6 << 20)
            let name = digest(of: bytes)
            try await fixture.run(.live) { client in
                let socket = try await RawSocket.connect(port: try #require(client.port))
                let head = "PUT /v1/blobs/\(name) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(fixture.red)\r\n"
                try await socket.send(Array((head + "Content-Length: \(bytes.count)\r\n\r\n").utf8))
                try await socket.send(Array(bytes.prefix(2 << 20)))
                #expect(await Fixture.eventually { !fixture.leftovers().isEmpty }, "the upload never reached staging")
                socket.close()
                #expect(await Fixture.eventually { fixture.leftovers().isEmpty }, "staging files left behind: \(fixture.leftovers())")
                try await client.execute(uri: "/healthz", method: .get) { response in
                    #expect(response.status == .ok)
                }
                try await client.execute(uri: "/v1/blobs/\(name)", method: .get, headers: auth(fixture.red)) { response in
                    #expect(response.status == .notFound)
                }
            }
            #expect(try await fixture.blobExists(name) == false)
        }
    }

    @Test func clientDisconnectingMidPackUploadImportsNothing() async throws {
        try await Fixture.with(packs: false) { fixture in
            // The whole, valid archive is sent, but the declared length is longer: a server that took the early end of
            // the connection for the end of the body would import it.
            let archive = Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon))))
            try await fixture.run(.live) { client in
                let socket = try await RawSocket.connect(port: try #require(client.port))
                let head = "POST /v1/packs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(fixture.red)\r\n"
                try await socket.send(Array((head + "Content-Length: \(archive.count + 5000)\r\n\r\n").utf8))
                try await socket.send(archive)
                #expect(await Fixture.eventually { !fixture.leftovers().isEmpty }, "the upload never reached the spool")
                socket.close()
                #expect(await Fixture.eventually { fixture.leftovers().isEmpty }, "spool files left behind: \(fixture.leftovers())")
                try await client.execute(uri: "/v1/packs", method: .get, headers: auth(fixture.admin)) { response throws in
                    #expect(response.status == .ok)
                    #expect(try response.decode(PackList.self).packs.isEmpty)
                }
            }
            #expect(try fixture.hoard.catalog.packs().isEmpty)
            #expect(try fixture.hoard.catalog.blobs().isEmpty)
        }
    }

    @Test func chunkedUploadsWithoutALengthAreStillCutOffAtTheLimit() async throws {
        try await Fixture.with(packs: false, { $0.maxBlobUpload = 1000; $0.maxPackUpload = 10_000 }) { fixture in
            let blob = randomBytes(3000)
            let archive = Array(try Data(contentsOf: URL(fileURLWithPath: Fixture.packPath(Fixture.dungeon))))
            try await fixture.run(.live) { client in
                let port = try #require(client.port)
                for (head, body) in [
                    ("PUT /v1/blobs/\(digest(of: blob))", blob), ("POST /v1/packs", archive),
                ] {
                    let socket = try await RawSocket.connect(port: port)
                    defer { socket.close() }
                    var request = Array("\(head) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(fixture.red)\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                    for start in stride(from: 0, to: body.count, by: 500) {
                        let chunk = body[start..<min(start + 500, body.count)]
                        request += Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)
                    }
                    request += Array("0\r\n\r\n".utf8)
                    try? await socket.send(request)
                    let answer = try await socket.receiveHead()
                    #expect(answer.hasPrefix("HTTP/1.1 413"), "\(head): \(answer)")
                }
                try await client.execute(uri: "/healthz", method: .get) { response in
                    #expect(response.status == .ok)
                }
            }
            #expect(try await fixture.blobExists(digest(of: blob)) == false)
            #expect(try fixture.hoard.catalog.packs().isEmpty)
            #expect(await Fixture.eventually { fixture.leftovers().isEmpty })
        }
    }
}

/// A blocking IPv4 TCP socket for requests HummingbirdTesting's client cannot send (cut short, chunked). Blocking
/// calls run on a thread of their own so they never hold a Swift concurrency thread the server needs.
final class RawSocket: Sendable {
    struct Failure: Error, CustomStringConvertible { var description: String }
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    static func connect(port: Int, receiveBuffer: Int32? = nil) async throws -> RawSocket {
        try await offload {
            let fd = socket(AF_INET, streamSocket, 0)
            guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
            if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard result == 0 else {
                _ = systemClose(fd)
                throw Failure(description: "connect to port \(port): errno \(errno)")
            }
            return RawSocket(fd: fd)
        }
    }

    func send(_ bytes: [UInt8]) async throws {
        let fd = self.fd
        try await Self.offload {
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count, noSignal) }
                guard n > 0 else { throw Failure(description: "send failed after \(sent) bytes: errno \(errno)") }
                sent += n
            }
        }
    }

    /// Reads until the end of the response head (or the connection closes) and returns it.
    func receiveHead() async throws -> String {
        let fd = self.fd
        return try await Self.offload {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { break }
                received += chunk[0..<n]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// Reads until the end of the response head; returns the head and the bytes read after it.
    func receiveHeadAndRest() async throws -> (String, [UInt8]) {
        let fd = self.fd
        return try await Self.offload {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            let end: [UInt8] = Array("\r\n\r\n".utf8)
            while true {
                if let at = (0..<max(0, received.count - 3)).first(where: { Array(received[$0..<($0 + 4)]) == end }) {
                    return (String(decoding: received[..<(at + 4)], as: UTF8.self), Array(received[(at + 4)...]))
                }
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return (String(decoding: received, as: UTF8.self), []) }
                received += chunk[0..<n]
            }
        }
    }

    /// Reads until the server closes the connection and returns every byte.
    func receiveAll() async throws -> [UInt8] {
        let fd = self.fd
        return try await Self.offload {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { break }
                received += chunk[0..<n]
            }
            return received
        }
    }

    func close() { _ = systemClose(fd) }

    /// On a thread of its own: on Linux, `DispatchQueue.global()` is the pool Swift concurrency runs on.
    static func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
