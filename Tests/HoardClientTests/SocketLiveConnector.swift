#if canImport(Glibc)
import Foundation
import Glibc

@testable import HoardClient

/// A minimal RFC 6455 client over a blocking loopback socket (`ws://127.0.0.1` only), so the live channel can be
/// tested against the real server where URLSessionWebSocketTask is unavailable (Linux with a libcurl without
/// WebSocket support). Text frames, fragments, ping/pong and close; no TLS, no extensions.
final class SocketLiveConnector: LiveConnector {
    private let open = Locked([SocketConnection]())
    /// Every URL connected to, in order.
    let urls = Locked([URL]())

    func connect(to url: URL, token: String?) async throws -> any LiveConnection {
        urls.withLock { $0.append(url) }
        guard let port = url.port else { throw HoardClientError(.invalidArgument, "no port in \(url)") }
        let connection = try await SocketConnection.open(port: port, path: url.path + (url.query.map { "?" + $0 } ?? ""), token: token)
        open.withLock { $0.append(connection) }
        return connection
    }

    /// Cuts every connection under the channel's feet, as a lost Wi-Fi would.
    func dropAll() {
        for connection in open.withLock({ list in defer { list = [] }; return list }) { connection.cut() }
    }
}

final class SocketConnection: LiveConnection, @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var buffer: [UInt8]
    private var isClosed = false

    private init(fd: Int32, leftover: [UInt8]) {
        self.fd = fd
        buffer = leftover
    }

    static func open(port: Int, path: String, token: String?) async throws -> SocketConnection {
        try await blocking {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw HoardClientError(.network, "socket() failed") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                _ = Glibc.close(fd)
                throw HoardClientError(.network, "connect() to port \(port) failed")
            }
            var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            if let token { request += "Authorization: Bearer \(token)\r\n" }
            request += "\r\n"
            try writeAll(fd, Array(request.utf8))
            var head: [UInt8] = []
            let end: [UInt8] = Array("\r\n\r\n".utf8)
            var chunk = [UInt8](repeating: 0, count: 4096)
            while !(head.count >= 4 && Array(head.suffix(4)) == end) {
                let count = recv(fd, &chunk, 1, 0)
                guard count > 0 else {
                    _ = Glibc.close(fd)
                    throw HoardClientError(.network, "the handshake was cut")
                }
                head.append(chunk[0])
            }
            let statusLine = String(decoding: head.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
            let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
            guard status == 101 else {
                _ = Glibc.close(fd)
                throw HoardClientError(.server, "the server refused the upgrade", status: status)
            }
            return SocketConnection(fd: fd, leftover: [])
        }
    }

    func receive() async throws -> String? {
        try await Self.blocking { [self] in try readMessage() }
    }

    func send(_ text: String) async throws {
        let frame = Self.frame(opcode: 0x1, payload: Array(text.utf8))
        try await Self.blocking { [self] in try lock.withLock { try Self.writeAll(fd, frame) } }
    }

    func close() {
        let closing = lock.withLock { () -> Bool in
            defer { isClosed = true }
            return !isClosed
        }
        guard closing else { return }
        try? lock.withLock { try Self.writeAll(fd, Self.frame(opcode: 0x8, payload: [0x03, 0xE8])) }
        cut()
    }

    /// Ends the TCP connection without a close frame; a blocked read then fails.
    func cut() {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    deinit { _ = Glibc.close(fd) }

    private func readMessage() throws -> String? {
        var message: [UInt8] = []
        while true {
            let head = try read(2)
            let opcode = head[0] & 0x0F
            let isFinal = head[0] & 0x80 != 0
            var length = Int(head[1] & 0x7F)
            if length == 126 {
                length = try read(2).reduce(0) { $0 << 8 | Int($1) }
            } else if length == 127 {
                length = try read(8).reduce(0) { $0 << 8 | Int($1) }
            }
            let payload = try read(length)
            switch opcode {
            case 0x8: return nil
            case 0x9: try lock.withLock { try Self.writeAll(fd, Self.frame(opcode: 0xA, payload: payload)) }
            case 0xA: break
            default:
                message += payload
                if isFinal { return String(decoding: message, as: UTF8.self) }
            }
        }
    }

    private func read(_ count: Int) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while buffer.count < count {
            let received = recv(fd, &chunk, chunk.count, 0)
            guard received > 0 else { throw HoardClientError(.network, "the live connection dropped") }
            buffer += chunk[0..<received]
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    /// A masked client frame.
    static func frame(opcode: UInt8, payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask: [UInt8] = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw HoardClientError(.network, "the live connection dropped while sending") }
            offset += written
        }
    }

    /// Runs blocking socket work on a thread of its own. Not on a Dispatch queue: on Linux, Swift concurrency runs on
    /// Dispatch's global pool, one thread per core, so a `receive()` parked there for as long as the channel is idle
    /// holds a thread every task in the process needs (on a 2-core machine, two idle channels stall them all).
    static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
#endif
