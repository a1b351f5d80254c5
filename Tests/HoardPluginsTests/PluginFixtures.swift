import Foundation
import HoardCore
import HoardRepository
import HoardPlugins

/// Plugin folders, packs and Hoards for the out-of-process plugin tests.
struct PluginFixtures {
    /// The repository root, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// A scratch folder holding `plugins/`, packs and a data directory; removed by ``remove()``.
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hoard-plugins-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: directory + "/plugins", withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// Links an example plugin of the repository's `Plugins/` into the plugins directory.
    func install(example name: String) throws {
        try FileManager.default.createSymbolicLink(atPath: directory + "/plugins/" + name, withDestinationPath: Self.root + "/Plugins/" + name)
    }

    /// Writes a misbehaving naming plugin: `mode` is hang, crash, crash-once, garbage, outside, huge or ok.
    func install(hostile mode: String, timeout: Double = 10) throws {
        let folder = directory + "/plugins/" + mode
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let manifest = #"{"id": "\#(mode)", "version": "0.0.1", "protocol": 1, "hooks": ["naming"], "command": ["python3", "plugin.py"], "timeoutSeconds": \#(timeout)}"#
        try manifest.write(toFile: folder + "/plugin.json", atomically: true, encoding: .utf8)
        let script = """
            import json, os, sys, time
            mode = "\(mode)"
            answers = {"outside": {"kind": "token", "name": "../../etc/passwd"},
                       "huge": {"kind": "token", "name": "ogre", "footprint": {"width": 10000, "height": 10000}},
                       "ok": {"kind": "token", "name": "renamed ogre", "footprint": {"width": 1, "height": 1}}}
            for line in sys.stdin:
                request = json.loads(line)
                if request["method"] == "hello":
                    result = {"protocol": 1, "id": mode, "version": "0.0.1"}
                elif mode == "hang":
                    time.sleep(3600)
                elif mode == "crash" or (mode == "crash-once" and not os.path.exists("crashed")):
                    open("crashed", "w").close()
                    os._exit(3)
                elif mode == "garbage":
                    sys.stdout.write("this is not JSON\\n")
                    sys.stdout.flush()
                    continue
                else:
                    result = answers.get(mode, answers["ok"])
                sys.stdout.write(json.dumps({"id": request["id"], "result": result}) + "\\n")
                sys.stdout.flush()
            """
        try script.write(toFile: folder + "/plugin.py", atomically: true, encoding: .utf8)
    }

    /// Writes a stored zip of `entries` with Python (PNG entries given as `png:W:H` are made real and decodable).
    func zip(_ name: String, _ entries: [(String, String)]) throws -> String {
        let path = directory + "/" + name
        let script = """
            import json, struct, sys, zipfile, zlib
            def png(w, h):
                def chunk(k, b): return struct.pack(">I", len(b)) + k + b + struct.pack(">I", zlib.crc32(k + b))
                raw = b"".join(b"\\x01" + bytes((x * 7 + y) & 0xFF for x in range(w * 4)) for y in range(h))
                return (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                        + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
                for name, spec in json.load(sys.stdin):
                    data = png(*map(int, spec.split(":")[1:])) if spec.startswith("png:") else spec.encode()
                    z.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data)
            """
        let spec = try JSONSerialization.data(withJSONObject: entries.map { [$0.0, $0.1] })
        let outcome = try ChildProcess.run(["python3", "-c", script, path], input: spec)
        guard outcome.status == 0 else { throw ProblemMessage("python3 could not write \(path): \(outcome.errorText)") }
        return path
    }

    /// A Hoard with the built-in plugins and every plugin in the plugins directory.
    func hoard() throws -> (Hoard, [PluginError]) {
        var registry = PluginRegistry.builtIn()
        let loaded = registry.registerPlugins(in: directory + "/plugins")
        return (try Hoard(dataDirectory: directory + "/data", registry: registry), loaded.errors)
    }
}
