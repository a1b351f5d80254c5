import Foundation
import HoardCore

/// The live channel's message reading, as the server does it for every client text message (LiveRoutes.handle):
/// JSON → a value with a string "type"; an op's depth is checked before its `sha256:` references are scanned; a
/// grab's entity is a bounded string; the error reply is canonical JSON that reads back the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLiveMessage(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let text = String(decoding: FuzzInput(start, count).bytes, as: UTF8.self)
    guard let message = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), let type = message["type"]?.stringValue else {
        return 0
    }
    switch type {
    case "op":
        if let op = message["op"], op.depth <= 64 {
            for digest in op.referencedDigests { precondition(Digest(digest.description) == digest) }
        }
    case "grab", "release":
        if let entity = message["entity"]?.stringValue { _ = entity.count <= 256 }
    default:
        let reply: JSONValue = .object(["type": .string("error"), "code": .string("BAD_MESSAGE"),
                                        "message": .string("unknown message type '\(type.prefix(40))'")])
        if let bytes = try? CanonicalJSON.encode(reply) {
            precondition((try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) == reply, "the reply does not read back")
        }
    }
    return 0
}
