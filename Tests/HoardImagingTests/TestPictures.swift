import Foundation
import HoardStore

@testable import HoardCore

/// Real, decodable pictures and packs for the imaging tests, made in memory.
enum TestPictures {
    /// An RGBA PNG whose pixels are a gradient seeded by `seed`, deflated with stored blocks (no compressor needed).
    static func png(width: Int, height: Int, seed: Int = 0) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (width * 4 + 1))
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width {
                raw += [UInt8(truncatingIfNeeded: x * 255 / width + seed), UInt8(truncatingIfNeeded: y * 255 / height), UInt8(truncatingIfNeeded: seed * 37), 255]
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
        zlib += be32(b << 16 | a)
        let header = be32(UInt32(width)) + be32(UInt32(height)) + [8, 6, 0, 0, 0]
        return ImageHeader.pngSignature + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    /// A PNG chunk with its CRC.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        be32(UInt32(data.count)) + Array(type.utf8) + data + be32(ImageHeader.crc32(Array(type.utf8) + data))
    }

    static func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// A fresh folder under the temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "hoard-imaging-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes a stored zip with Python's zipfile.
    static func zip(at path: String, _ entries: [(String, [UInt8])]) throws {
        let spec = try JSONSerialization.data(withJSONObject: entries.map { ["name": $0.0, "data": Data($0.1).base64EncodedString()] })
        let script = """
            import base64, json, sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
                for e in json.load(sys.stdin):
                    z.writestr(zipfile.ZipInfo(e["name"], (2024, 1, 1, 0, 0, 0)), base64.b64decode(e["data"]))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let input = Pipe()
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(spec)
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ProblemMessage("python3 could not write \(path)") }
    }
}
