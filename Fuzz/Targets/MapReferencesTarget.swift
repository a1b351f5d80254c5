import Foundation
import HoardCore

/// The map reference scanner: any JSON document a host sends as a map; every reference found is a well-formed
/// digest that appears in the document, and canonical encoding is stable.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMapReferences(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = FuzzInput(start, count).bytes
    guard let document = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else { return 0 }
    _ = document.depth
    let text = String(decoding: bytes, as: UTF8.self)
    for digest in document.referencedDigests {
        precondition(Digest(digest.description) == digest, "\(digest) does not round-trip")
        precondition(text.contains(digest.hex) || text.contains("\\u"), "\(digest) is not in the document")
    }
    if let canonical = try? CanonicalJSON.encode(document) {
        let again = try? JSONDecoder().decode(JSONValue.self, from: Data(canonical))
        precondition(again.flatMap { try? CanonicalJSON.encode($0) } == canonical, "canonical JSON is not stable")
        precondition(again?.referencedDigests == document.referencedDigests, "references change through canonical JSON")
    }
    return 0
}
