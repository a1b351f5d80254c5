/// A licence, readme or credits file at a pack's root, stored with the pack so that attribution travels with the art.
public struct PackDocument: Sendable, Hashable, Codable {
    /// Its file name at the pack's root (`LICENSE.md`).
    public var name: String
    /// Its blob.
    public var digest: Digest
    /// `text/plain; charset=utf-8`, `text/markdown; charset=utf-8` or `application/pdf`.
    public var mediaType: String
    /// Size of the blob in bytes.
    public var size: Int64

    /// Creates a document.
    public init(name: String, digest: Digest, mediaType: String, size: Int64) {
        self.name = name
        self.digest = digest
        self.mediaType = mediaType
        self.size = size
    }

    /// File names that are pack documents, before their extension, ignoring case.
    public static let stems = ["license", "licence", "copying", "readme", "credits"]

    /// The media type of a pack document named `fileName` (`LICENSE`, `License.txt`, `README.md`, `credits.pdf`, any
    /// case: a stem of ``stems``, then optionally `-`, `_` or `.` and more, with no extension or txt, md, markdown or pdf);
    /// nil when the name is no document's.
    public static func mediaType(forFileName fileName: String) -> String? {
        let lower = fileName.lowercased()
        guard let stem = stems.first(where: { lower.hasPrefix($0) }) else { return nil }
        let rest = lower.dropFirst(stem.count)
        guard rest.isEmpty || rest.first == "." || rest.first == "-" || rest.first == "_" else { return nil }
        let ext = DefaultNamingConvention.splitExtension(fileName)?.ext.lowercased()
        switch ext {
        case nil: return "text/plain; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "md", "markdown": return "text/markdown; charset=utf-8"
        case "pdf": return "application/pdf"
        default: return rest.contains(".") ? nil : "text/plain; charset=utf-8"
        }
    }
}
