/// An archive format's encoding for names it does not mark as UTF-8.
public enum LegacyNameEncoding: Sendable, Hashable {
    /// IBM code page 437: the zip format's encoding for entries without the UTF-8 flag (general purpose bit 11), as
    /// Windows' built-in compressor and older tools write non-ASCII names.
    case cp437

    /// The name the bytes spell in this encoding (every byte maps to one character, so decoding never fails).
    public func decode(_ bytes: [UInt8]) -> String {
        switch self {
        case .cp437:
            var scalars = String.UnicodeScalarView()
            for byte in bytes {
                scalars.append(byte < 0x80 ? Unicode.Scalar(byte) : Self.cp437High[Int(byte - 0x80)])
            }
            return String(scalars)
        }
    }

    /// CP437 bytes 0x80...0xFF as Unicode scalars.
    private static let cp437High: [Unicode.Scalar] = Array(
        ("ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀"
            + "αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{00A0}").unicodeScalars)
}
