/// Names a file's container format from its first bytes, so a refusal can say what the file really is.
public enum ArchiveSniffer {
    /// What the first bytes of an input look like.
    public enum Guess: Sendable, Hashable {
        /// A zip archive (local header, empty archive or spanned marker).
        case zip
        /// A gzip stream (a tar.gz when it holds a tar).
        case gzip
        /// A tar archive (ustar magic at offset 257).
        case tar
        /// Something Hoard does not accept, with its name.
        case unsupported(String)
        /// Nothing recognisable.
        case unknown
    }

    /// The signatures Hoard recognises but refuses, with the names shown to users.
    static let refused: [(magic: [UInt8], offset: Int, name: String)] = [
        ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], 0, "a 7-Zip archive"),
        ([0x52, 0x61, 0x72, 0x21, 0x1A, 0x07], 0, "a RAR archive"),
        ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], 0, "an xz-compressed file"),
        ([0x42, 0x5A, 0x68], 0, "a bzip2-compressed file"),
        ([0x28, 0xB5, 0x2F, 0xFD], 0, "a zstd-compressed file"),
        ([0x04, 0x22, 0x4D, 0x18], 0, "an lz4-compressed file"),
        ([0x5D, 0x00, 0x00], 0, "an lzma-compressed file"),
        ([0x89, 0x50, 0x4E, 0x47], 0, "a PNG image"),
        ([0xFF, 0xD8, 0xFF], 0, "a JPEG image"),
        ([0x25, 0x50, 0x44, 0x46], 0, "a PDF document"),
        ([0x47, 0x44, 0x50, 0x43], 0, "a Godot PCK file"),
        ([0x4D, 0x53, 0x43, 0x46], 0, "a Microsoft cabinet"),
        ([0x78, 0x61, 0x72, 0x21], 0, "a xar archive"),
        ([0x21, 0x3C, 0x61, 0x72, 0x63, 0x68, 0x3E], 0, "an ar archive"),
        ([0x43, 0x44, 0x30, 0x30, 0x31], 0x8001, "an ISO 9660 disc image"),
    ]

    /// Guesses from the first bytes (at least 512 for tar, 0x8006 for ISO images to be named).
    public static func guess(_ head: [UInt8]) -> Guess {
        func has(_ magic: [UInt8], at offset: Int) -> Bool {
            head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
        }
        if has([0x50, 0x4B, 0x03, 0x04], at: 0) || has([0x50, 0x4B, 0x05, 0x06], at: 0) || has([0x50, 0x4B, 0x07, 0x08], at: 0) {
            return .zip
        }
        if has([0x1F, 0x8B], at: 0) { return .gzip }
        if has(Array("ustar".utf8), at: 257) { return .tar }
        if has([0x52, 0x49, 0x46, 0x46], at: 0) {
            return .unsupported(has(Array("WEBP".utf8), at: 8) ? "a WebP image" : "a RIFF file")
        }
        for candidate in refused where has(candidate.magic, at: candidate.offset) {
            return .unsupported(candidate.name)
        }
        return head.isEmpty ? .unsupported("an empty file") : .unknown
    }
}
