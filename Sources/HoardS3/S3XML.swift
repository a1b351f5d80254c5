import Foundation
import NIOCore

/// The `<Code>` and `<Message>` of an S3 error body, when there is one.
struct S3ErrorBody {
    var code: String?
    var message: String?

    init(_ body: ByteBuffer) {
        let xml = String(buffer: body)
        guard xml.contains("<Error>") else { return }
        code = XMLText.values(of: "Code", in: xml).first
        message = XMLText.values(of: "Message", in: xml).first
    }
}

/// Just enough XML for S3's answers: the text of every `<tag>…</tag>`, entities decoded (S3 sends no nesting inside
/// the elements read here, no CDATA and no attributes on them).
enum XMLText {
    static func values(of tag: String, in xml: String) -> [String] {
        var values: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(tag)>"), let close = rest.range(of: "</\(tag)>", range: open.upperBound..<rest.endIndex) {
            values.append(unescaped(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        return values
    }

    static func unescaped(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
