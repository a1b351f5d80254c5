import Foundation
import HoardCore

/// Reads the framing of `POST /v1/blobs/batch` incrementally, whatever the chunk boundaries.
///
/// For each requested digest, in order, the server writes one of:
///
///     sha256:<hex> <size>\n<size bytes>\n    the blob
///     sha256:<hex> -\n                       the caller cannot fetch it
///     sha256:<hex> >\n                       too large for a batch: GET it on its own
///
/// Feed every chunk as it arrives with ``feed(_:)``; call ``finish()`` at the end of the body, which throws when
/// the stream stopped inside a record. The parser checks framing only; the caller verifies digests.
public struct BatchFrameParser: Sendable {
    /// One record of a batch response.
    public enum Record: Sendable, Equatable {
        /// The blob's bytes (not yet verified).
        case blob(Digest, Data)
        /// The server will not hand this blob to the caller (absent, or not visible).
        case unavailable(Digest)
        /// Too large for a batch: fetch it with `GET /v1/blobs/{digest}`.
        case tooLarge(Digest)
    }

    private enum State {
        case header
        case body(Digest, Int)
    }

    /// The longest header line accepted: `sha256:` + 64 hex + space + a size.
    static let maxHeader = 7 + 64 + 1 + 20

    private let maxBlobSize: Int
    private var state = State.header
    private var buffer: [UInt8] = []
    private var start = 0

    /// A parser that refuses records larger than `maxBlobSize` bytes.
    public init(maxBlobSize: Int = 64 << 20) {
        self.maxBlobSize = maxBlobSize
    }

    /// Consumes a chunk of the body and returns the records it completed.
    public mutating func feed(_ chunk: some DataProtocol) throws -> [Record] {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: chunk)
        var records: [Record] = []
        while true {
            switch state {
            case .header:
                guard let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                    guard buffer.count - start <= Self.maxHeader else { throw Self.malformed("a header line is longer than \(Self.maxHeader) bytes") }
                    return records
                }
                let line = buffer[start..<newline]
                start = newline + 1
                let record = try parseHeader(line)
                if let record {
                    records.append(record)
                }
            case .body(let digest, let size):
                guard buffer.count - start > size else { return records }
                guard buffer[start + size] == UInt8(ascii: "\n") else {
                    throw Self.malformed("the \(size) bytes of \(digest) are not followed by a newline")
                }
                records.append(.blob(digest, Data(buffer[start..<(start + size)])))
                start += size + 1
                state = .header
            }
        }
    }

    /// Parses `sha256:<hex> <field>`; returns a record, or nil after setting up a body.
    private mutating func parseHeader(_ line: ArraySlice<UInt8>) throws -> Record? {
        guard line.count > 72, line[line.startIndex + 71] == UInt8(ascii: " "),
              let digest = Digest(String(decoding: line.prefix(71), as: UTF8.self))
        else { throw Self.malformed("a header line does not start with 'sha256:<hex> ': '\(String(decoding: line.prefix(100), as: UTF8.self))'") }
        let field = line.dropFirst(72)
        if field.elementsEqual("-".utf8) { return .unavailable(digest) }
        if field.elementsEqual(">".utf8) { return .tooLarge(digest) }
        guard field.count <= 19, field.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let size = Int(String(decoding: field, as: UTF8.self))
        else { throw Self.malformed("the size of \(digest) is not a number: '\(String(decoding: field.prefix(40), as: UTF8.self))'") }
        guard size <= maxBlobSize else { throw Self.malformed("\(digest) claims \(size) bytes, over the limit of \(maxBlobSize)") }
        state = .body(digest, size)
        return nil
    }

    /// Checks the body ended between records; throws when it was cut inside one.
    public func finish() throws {
        switch state {
        case .body(let digest, let size):
            throw HoardClientError(.network, "the batch response ended inside the \(size) bytes of \(digest); the connection was cut")
        case .header:
            guard start == buffer.count else {
                throw HoardClientError(.network, "the batch response ended inside a header line; the connection was cut")
            }
        }
    }

    private static func malformed(_ message: String) -> HoardClientError {
        HoardClientError(.badResponse, "the batch response is malformed: \(message)")
    }
}
