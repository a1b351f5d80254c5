import Foundation

/// Where the data directory is when `--data-dir` is not given, and why: one fixed place per user, so a command run from
/// another folder finds the same store.
///
/// In order: `--data-dir`; `$HOARD_DATA_DIR`; a `hoard-data` folder in the current folder (where earlier versions
/// kept it); the platform's per-user data folder — `$XDG_DATA_HOME/hoard`, else `~/.local/share/hoard` on Linux,
/// `~/Library/Application Support/Hoard` on macOS.
struct DataLocation: Equatable {
    /// Why this directory.
    enum Source: Equatable {
        case option, environment, currentFolder, standard
    }

    /// The directory (absolute unless `--data-dir` or `$HOARD_DATA_DIR` gave a relative one).
    var path: String
    /// Why it was chosen.
    var source: Source

    /// The directory in effect for these inputs.
    static func resolve(
        given: String?, environment: [String: String], currentDirectory: String, home: String, isMacOS: Bool = DataLocation.isMacOS,
        exists: (String) -> Bool = { DataLocation.isDirectory($0) }
    ) -> DataLocation {
        if let given, !given.isEmpty { return DataLocation(path: given, source: .option) }
        if let named = environment["HOARD_DATA_DIR"], !named.isEmpty { return DataLocation(path: named, source: .environment) }
        let here = (currentDirectory as NSString).appendingPathComponent("hoard-data")
        if exists(here) { return DataLocation(path: here, source: .currentFolder) }
        if isMacOS { return DataLocation(path: (home as NSString).appendingPathComponent("Library/Application Support/Hoard"), source: .standard) }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return DataLocation(path: (xdg as NSString).appendingPathComponent("hoard"), source: .standard)
        }
        return DataLocation(path: (home as NSString).appendingPathComponent(".local/share/hoard"), source: .standard)
    }

    /// The directory in effect for this process.
    static func current(given: String?) -> DataLocation {
        let environment = ProcessInfo.processInfo.environment
        return resolve(
            given: given, environment: environment, currentDirectory: FileManager.default.currentDirectoryPath,
            home: environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory())
    }

    /// The line a command that writes prints to standard error.
    var line: String {
        switch source {
        case .option: "data directory: \(path)"
        case .environment: "data directory: \(path) (from $HOARD_DATA_DIR)"
        case .currentFolder: "data directory: \(path) (the hoard-data folder found in the current folder)"
        case .standard: "data directory: \(path) (the default; --data-dir or $HOARD_DATA_DIR choose another)"
        }
    }

    static var isMacOS: Bool {
        #if os(macOS)
        true
        #else
        false
        #endif
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
