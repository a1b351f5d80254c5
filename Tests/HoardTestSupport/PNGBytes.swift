/// PNG files for tests, and the pieces they are made of: big-endian numbers, CRC-32, chunks, headers.
public enum PNGBytes {
    /// The eight bytes every PNG starts with.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A 32-bit number, most significant byte first.
    public static func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// CRC-32 (ISO-HDLC, as PNG uses it).
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// One chunk: length, type, data and the CRC of type and data.
    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    /// The IHDR chunk's data: width, height, bit depth, colour type (6: RGBA), compression, filter, interlace.
    public static func header(
        width: UInt32, height: UInt32, depth: UInt8 = 8, colourType: UInt8 = 6, compression: UInt8 = 0, filter: UInt8 = 0,
        interlace: UInt8 = 0
    ) -> [UInt8] {
        bigEndian(width) + bigEndian(height) + [depth, colourType, compression, filter, interlace]
    }

    /// A PNG whose header says `width` × `height` (RGBA) and whose IDAT is `idat` as given (by default bytes that
    /// make every `seed` different): enough for anything that reads headers, not for a decoder.
    public static func minimal(width: Int, height: Int, seed: Int = 0, idat: [UInt8]? = nil) -> [UInt8] {
        signature + chunk("IHDR", header(width: UInt32(width), height: UInt32(height)))
            + chunk("IDAT", idat ?? Array("seed \(seed) \(width)x\(height)".utf8)) + chunk("IEND", [])
    }

    /// A PNG a decoder reads: RGBA pixels in a gradient seeded by `seed`, deflated in stored blocks (no compressor
    /// needed).
    public static func decodable(width: Int, height: Int, seed: Int = 0) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (width * 4 + 1))
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width {
                raw += [
                    UInt8(truncatingIfNeeded: x * 255 / width + seed), UInt8(truncatingIfNeeded: y * 255 / height),
                    UInt8(truncatingIfNeeded: seed * 37), 255,
                ]
            }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, raw.count - offset)
            zlib.append(offset + count == raw.count ? 1 : 0)
            zlib += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            zlib += raw[offset..<offset + count]
            offset += count
        } while offset < raw.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in raw {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        zlib += bigEndian(b << 16 | a)
        return signature + chunk("IHDR", header(width: UInt32(width), height: UInt32(height))) + chunk("IDAT", zlib) + chunk("IEND", [])
    }
}
