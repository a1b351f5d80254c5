import Foundation
import HoardPlugins
import HoardStore
import HoardTestSupport

@testable import HoardCore

/// Real, decodable pictures and packs for the imaging tests, made in memory.
enum TestPictures {
    /// A decodable RGBA PNG (``PNGBytes/decodable(width:height:seed:)``).
    static func png(width: Int, height: Int, seed: Int = 0) -> [UInt8] { PNGBytes.decodable(width: width, height: height, seed: seed) }

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
        let outcome = try ChildProcess.run(["python3", "-c", script, path], input: spec)
        guard outcome.status == 0 else { throw ProblemMessage("python3 could not write \(path): \(outcome.errorText)") }
    }
}
