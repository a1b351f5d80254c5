import HummingbirdWebSocket
import NIOCore
import NIOWebSocket

/// Puts a client's WebSocket frames together into messages, within a byte budget *and* a frame budget, and checks
/// what RFC 6455 asks of a message: a continuation only inside a fragmented message, no new message inside one,
/// text that is UTF-8.
///
/// Not swift-websocket's `messages(maxSize:)`: that keeps every frame of a message in an array and checks only their
/// bytes, so a message of millions of empty continuation frames grew the server by gigabytes. Here the bytes go into
/// one buffer as they come (nothing is kept per frame) and a message of more than `maxFrames` frames is refused.
struct LiveMessageAssembler {
    /// What a frame made.
    enum Outcome: Equatable {
        /// More frames are needed.
        case partial
        /// A whole text message.
        case text(String)
        /// A whole binary message (its size).
        case binary(Int)
        /// The connection must be closed with this code: the frame broke the protocol or a budget.
        case close(WebSocketErrorCode, String)
    }

    let maxBytes: Int
    let maxFrames: Int
    private var opcode: WebSocketDataFrame.Opcode?
    private var buffer = ByteBuffer()
    private var frames = 0

    init(maxBytes: Int, maxFrames: Int) {
        self.maxBytes = maxBytes
        self.maxFrames = maxFrames
    }

    mutating func take(_ frame: WebSocketDataFrame) -> Outcome {
        take(frame.opcode, fin: frame.fin, data: frame.data)
    }

    mutating func take(_ kind: WebSocketDataFrame.Opcode, fin: Bool, data: ByteBuffer) -> Outcome {
        switch (kind, opcode) {
        case (.continuation, nil):
            return .close(.protocolError, "a continuation frame without a message to continue")
        case (.text, .some), (.binary, .some):
            return .close(.protocolError, "a new message inside a fragmented one")
        case (.text, nil), (.binary, nil):
            opcode = kind
            frames = 0
            buffer.clear()
        case (.continuation, .some):
            break
        }
        frames += 1
        guard buffer.readableBytes + data.readableBytes <= maxBytes else {
            reset()
            return .close(.messageTooLarge, "a message is at most \(maxBytes) bytes")
        }
        guard frames <= maxFrames else {
            reset()
            return .close(.policyViolation, "a message is at most \(maxFrames) frames")
        }
        var data = data
        buffer.writeBuffer(&data)
        guard fin else { return .partial }
        defer { reset() }
        if opcode == .binary { return .binary(buffer.readableBytes) }
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else {
            return .close(.dataInconsistentWithMessage, "a text message must be UTF-8")
        }
        return .text(text)
    }

    /// Forgets the message being put together; a large buffer is let go rather than kept for the next message.
    private mutating func reset() {
        opcode = nil
        frames = 0
        if buffer.capacity > 64 << 10 { buffer = ByteBuffer() } else { buffer.clear() }
    }
}
