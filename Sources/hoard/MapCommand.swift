import ArgumentParser
import Foundation
import HoardClient
import HoardCore

/// The server a command talks to (its argument) and how it speaks to it as a member: what `hoard session` and
/// `hoard map` share.
struct MemberConnection: ParsableArguments {
    @Argument(help: ArgumentHelp("The server, e.g. http://nas.local:8080.", valueName: "URL")) var url: String
    @OptionGroup var access: ServerAccess

    /// A client of the server with the member's token.
    func client() throws -> HoardClient { try access.client(url) }
}

struct MapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "List, export, import and delete the maps your group has saved on a Hoard server.",
        discussion: """
            Saved maps are the group's (POST /v1/maps): what the web page's Sessions view lists and starts sessions \
            from. A map is named by its name or its digest (sha256:…). An exported map is the map document itself, \
            which 'hoard map import' and 'hoard session create --map' read back.
            """,
        subcommands: [
            ListMapsCommand.self, ExportMapCommand.self, ImportMapCommand.self, DeleteMapCommand.self, SightBenchCommand.self,
        ]
    )

    /// The map document in the file at `path`.
    static func document(at path: String) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CLIError("cannot read the map \(path) as JSON: \(error)")
        }
    }

    /// A file's name without its folder and extension: the default name of what is made from it.
    static func stem(of path: String) -> String { ((path as NSString).lastPathComponent as NSString).deletingPathExtension }

    /// The saved map `given` names: its name as the server finds names, or its digest.
    static func named(_ given: String, by client: HoardClient) async throws -> SavedMap {
        if given.hasPrefix("sha256:") {
            guard let found = try await client.savedMaps().first(where: { $0.digest.description == given }) else {
                throw CLIError("no saved map has the digest \(given); 'hoard map list' shows them")
            }
            return try await client.savedMap(named: found.name)
        }
        do {
            return try await client.savedMap(named: given)
        } catch let error as HoardClientError where error.status == 404 {
            throw CLIError("no saved map named '\(given)'; 'hoard map list' shows them")
        }
    }
}

struct ListMapsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the group's saved maps, newest first.")

    @OptionGroup var server: MemberConnection
    @Flag(help: "Print JSON instead of text.") var json = false

    func run() async throws {
        let maps = try await server.client().savedMaps().sorted { ($0.savedAt ?? .distantPast) > ($1.savedAt ?? .distantPast) }
        if json { return Terminal.out(try JSONOutput.encode(maps)) }
        guard !maps.isEmpty else {
            Terminal.out("No saved maps yet. Save one with 'hoard map import URL FILE.json' or from the web page's table.")
            return
        }
        let dates = ISO8601DateFormatter()
        for map in maps { Terminal.out("\(map.name)\t\(map.savedAt.map(dates.string(from:)) ?? "")\t\(map.digest)") }
    }
}

struct ExportMapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write a saved map's document (JSON) to a file, or to standard output.")

    @OptionGroup var server: MemberConnection
    @Argument(help: ArgumentHelp("The map's name or digest.", valueName: "NAME|ID")) var map: String
    @Argument(help: ArgumentHelp("Where to write it (default: standard output).", valueName: "FILE")) var file: String?

    func run() async throws {
        let saved = try await MapCommand.named(map, by: try server.client())
        guard let document = saved.map else { throw CLIError("the server sent the map '\(saved.name)' without its document") }
        let bytes = Data((try JSONOutput.encode(document) + "\n").utf8)
        guard let file else {
            FileHandle.standardOutput.write(bytes)
            return
        }
        try bytes.write(to: URL(fileURLWithPath: file))
        Terminal.err("Wrote the map '\(saved.name)' (\(saved.digest)) to \(file)")
    }
}

struct ImportMapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Save a map document (JSON) as one of the group's maps.",
        discussion: "The pictures it names must be on the server already (a pack's, or uploaded). A name in use is refused.")

    @OptionGroup var server: MemberConnection
    @Argument(help: ArgumentHelp("The map document.", valueName: "FILE.json")) var file: String
    @Option(help: ArgumentHelp("The name to save it under (default: the file's name).", valueName: "N")) var name: String?

    func run() async throws {
        let saved = try await server.client().saveMap(named: name ?? MapCommand.stem(of: file), map: try MapCommand.document(at: file))
        Terminal.out("Saved the map '\(saved.name)' (\(saved.digest))")
    }
}

struct DeleteMapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete one of the group's saved maps (sessions started from it keep their table).")

    @OptionGroup var server: MemberConnection
    @Argument(help: ArgumentHelp("The map's name or digest.", valueName: "NAME|ID")) var map: String

    func run() async throws {
        let client = try server.client()
        let saved = try await MapCommand.named(map, by: client)
        try await client.deleteSavedMap(named: saved.name)
        Terminal.out("Deleted the map '\(saved.name)'")
    }
}
