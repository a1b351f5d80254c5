/// A small, strict reader of plain XML, the kind XStream writes (MapTool's token files): elements, attributes, text,
/// CDATA, comments and processing instructions. It reads no DTD and expands no entity but the five XML predefines
/// and character references, so nothing in a file can make it fetch, include or multiply text.
///
/// It streams: each element's start and end and each run of text go to the caller with the path of element names
/// from the root, and nothing is kept but that path.
public enum XMLScanner {
    /// What the scanner found, in document order.
    public enum Event {
        /// An element starts; `path` ends with its name.
        case start(path: [String])
        /// Text (character data, CDATA, references already replaced) directly inside the element `path` names.
        case text(path: [String], String)
        /// An element ends; `path` still ends with its name.
        case end(path: [String])
    }

    /// Why a document was refused.
    public struct Failure: Error, Sendable, Hashable {
        /// What is wrong, in words for the file's author.
        public var message: String
        /// Byte offset where it was found.
        public var offset: Int
    }

    /// Elements nested deeper than this are refused.
    public static let maxDepth = 256

    /// Reads `bytes` (UTF-8) whole, calling `visit` for each event. Throws at the first thing that is not
    /// well-formed, a `<!DOCTYPE` (and so any entity declaration), or an entity other than `&lt;` `&gt;` `&amp;`
    /// `&quot;` `&apos;`.
    public static func scan(_ bytes: [UInt8], _ visit: (Event) throws(Failure) -> Void) throws(Failure) {
        var cursor = Cursor(bytes: bytes)
        var path: [String] = []
        var sawRoot = false
        var text: [UInt8] = []
        func flush() throws(Failure) {
            guard !text.isEmpty else { return }
            defer { text.removeAll(keepingCapacity: true) }
            if path.isEmpty {
                guard text.allSatisfy(Cursor.isSpace) else { throw cursor.failure("text outside the root element") }
                return
            }
            try visit(.text(path: path, try cursor.string(text)))
        }
        while let byte = cursor.peek() {
            if byte == UInt8(ascii: "&") {
                try cursor.reference(into: &text)
                continue
            }
            guard byte == UInt8(ascii: "<") else {
                text.append(byte)
                cursor.offset += 1
                continue
            }
            if cursor.skip("<!--") {
                try cursor.skipPast("-->", what: "a comment")
            } else if cursor.skip("<![CDATA[") {
                guard !path.isEmpty else { throw cursor.failure("CDATA outside the root element") }
                text += try cursor.bytesUntil("]]>", what: "a CDATA section")
            } else if cursor.skip("<?") {
                try cursor.skipPast("?>", what: "a processing instruction")
            } else if cursor.peek(1) == UInt8(ascii: "!") {
                throw cursor.failure("a document type declaration (DTD) or entity declaration; token files hold none")
            } else if cursor.skip("</") {
                try flush()
                let name = try cursor.name()
                cursor.skipSpace()
                guard cursor.skip(">") else { throw cursor.failure("an end tag that does not close with '>'") }
                guard path.last == name else {
                    throw cursor.failure("</\(name)> closes \(path.last.map { "<\($0)>" } ?? "nothing")")
                }
                try visit(.end(path: path))
                path.removeLast()
            } else {
                try flush()
                cursor.offset += 1
                let name = try cursor.name()
                guard !(path.isEmpty && sawRoot) else { throw cursor.failure("a second root element <\(name)>") }
                guard path.count < maxDepth else { throw cursor.failure("elements nested more than \(maxDepth) deep") }
                let isEmpty = try cursor.attributes()
                sawRoot = true
                path.append(name)
                try visit(.start(path: path))
                if isEmpty {
                    try visit(.end(path: path))
                    path.removeLast()
                }
            }
        }
        try flush()
        guard path.isEmpty else { throw cursor.failure("the document ends inside <\(path.last ?? "")>") }
        guard sawRoot else { throw cursor.failure("no root element") }
    }

    /// Position in the document, and the reading of its small parts.
    private struct Cursor {
        let bytes: [UInt8]
        var offset = 0

        func peek(_ ahead: Int = 0) -> UInt8? {
            offset + ahead < bytes.count ? bytes[offset + ahead] : nil
        }

        func failure(_ message: String) -> Failure {
            Failure(message: message, offset: offset)
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        static func isNameByte(_ byte: UInt8) -> Bool {
            !isSpace(byte) && !"<>/=&'\"!?".utf8.contains(byte)
        }

        /// Steps over `literal` when the document continues with it.
        mutating func skip(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard offset + count <= bytes.count else { return false }
            let matches = literal.withUTF8Buffer { literal in
                literal.indices.allSatisfy { bytes[offset + $0] == literal[$0] }
            }
            if matches { offset += count }
            return matches
        }

        mutating func skipSpace() {
            while let byte = peek(), Self.isSpace(byte) { offset += 1 }
        }

        /// The bytes up to `terminator`, which is stepped over.
        mutating func bytesUntil(_ terminator: StaticString, what: String) throws(Failure) -> ArraySlice<UInt8> {
            let start = offset
            while offset < bytes.count {
                let here = offset
                if skip(terminator) { return bytes[start..<here] }
                offset += 1
            }
            throw failure("\(what) that never ends")
        }

        mutating func skipPast(_ terminator: StaticString, what: String) throws(Failure) {
            _ = try bytesUntil(terminator, what: what)
        }

        func string(_ bytes: some Collection<UInt8>) throws(Failure) -> String {
            guard let string = String(validating: bytes, as: UTF8.self) else { throw failure("bytes that are not UTF-8") }
            return string
        }

        mutating func name() throws(Failure) -> String {
            let start = offset
            while let byte = peek(), Self.isNameByte(byte) { offset += 1 }
            guard offset > start else { throw failure("a tag without a name") }
            return try string(bytes[start..<offset])
        }

        /// Reads the attributes of a start tag up to its `>` or `/>`; true for `/>`. Values are checked, not kept.
        mutating func attributes() throws(Failure) -> Bool {
            while true {
                skipSpace()
                if skip("/>") { return true }
                if skip(">") { return false }
                _ = try name()
                skipSpace()
                guard skip("=") else { throw failure("an attribute without '='") }
                skipSpace()
                guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                    throw failure("an attribute value without quotes")
                }
                offset += 1
                var value: [UInt8] = []
                while let byte = peek(), byte != quote {
                    guard byte != UInt8(ascii: "<") else { throw failure("'<' inside an attribute value") }
                    if byte == UInt8(ascii: "&") {
                        try reference(into: &value)
                    } else {
                        offset += 1
                    }
                }
                guard peek() == quote else { throw failure("an attribute value that never ends") }
                offset += 1
            }
        }

        /// Replaces `&…;` at the cursor: one of the five predefined entities or a character reference.
        mutating func reference(into text: inout [UInt8]) throws(Failure) {
            offset += 1
            let start = offset
            while let byte = peek(), byte != UInt8(ascii: ";"), offset - start < 12 { offset += 1 }
            guard peek() == UInt8(ascii: ";") else { throw failure("an '&' that starts no reference (write &amp;)") }
            let name = try string(bytes[start..<offset])
            offset += 1
            let scalar: Unicode.Scalar?
            switch name {
            case "lt": scalar = "<"
            case "gt": scalar = ">"
            case "amp": scalar = "&"
            case "quot": scalar = "\""
            case "apos": scalar = "'"
            default:
                if name.hasPrefix("#x") {
                    scalar = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if name.hasPrefix("#") {
                    scalar = UInt32(name.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
                } else {
                    throw failure("the entity &\(name); (only &lt; &gt; &amp; &quot; &apos; and character references are read)")
                }
            }
            guard let scalar, scalar.value != 0 else { throw failure("the character reference &\(name); names no character") }
            text += Array(String(Character(scalar)).utf8)
        }
    }
}
