import ArgumentParser
import Foundation
import HoardCatalog
import HoardPostgres
import HoardRepository

/// `hoard migrate-catalog --to postgres://…`: an embedded deployment's SQLite catalog copied into a new PostgreSQL
/// database, verified (``CatalogCopy``).
struct MigrateCatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-catalog",
        abstract: "Copy the SQLite catalog into a new PostgreSQL database, verified, in one transaction.",
        discussion: """
            Stop the server first. The source is --data-dir's catalog.sqlite (or --catalog PATH); the target must hold \
            no rows. Every table is compared (row count and SHA-256) before the copy commits; any difference writes \
            nothing. Blobs stay where they are. Then start servers with --catalog URL (OPERATIONS.md, "Moving to PostgreSQL").
            """)
    @OptionGroup var data: DataOptions
    @Option(
        name: .customLong("to"),
        help: ArgumentHelp("The new catalog: postgres://USER[:PASSWORD]@HOST:PORT/DB, a database without rows.", valueName: "URL"))
    var target: String
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let path = try sourcePath()
        let database: PostgresCatalogDatabase
        do {
            database = try PostgresCatalogDatabase(url: target)
        } catch {
            throw CLIError("--to: \(error)")
        }
        let source: SQLiteCatalog
        do {
            source = try SQLiteCatalog(path: path)
        } catch {
            throw CLIError("cannot open the SQLite catalog to copy: \(error)")
        }
        Terminal.err("Copying \(path) into \(database.displayURL)")
        let bar = ProgressBar(label: "copy")
        let report: CatalogCopyReport
        do {
            report = try CatalogCopy(to: database).run(from: source) { step in
                switch step {
                case .copying(let table, let rows, let total):
                    bar.update(done: Int64(rows), total: Int64(total), unit: .count, note: table)
                case .copied(let table, let rows):
                    bar.finish()
                    Terminal.err("copied \(table): \(rows) row\(rows == 1 ? "" : "s")")
                case .verified(let table, let rows):
                    Terminal.err("verified \(table): \(rows) row\(rows == 1 ? "" : "s")")
                }
            }
        } catch {
            bar.finish()
            throw CLIError("cannot migrate the catalog: \(error)")
        }
        if json { return Terminal.out(try JSONOutput.encode(report)) }
        let copied = report.tables.filter { !$0.filledByTriggers }.count
        Terminal.out("Copied \(report.rows) rows of \(copied) tables into \(report.target) in \(String(format: "%.1f", report.seconds)) s; "
            + "every table matches. Start the servers with --catalog \(report.target)")
    }

    /// The SQLite file to copy: `--catalog PATH`, else the data directory's; refuses a PostgreSQL source and a
    /// catalog that does not exist (opening it would make an empty one).
    func sourcePath() throws -> String {
        let path: String
        switch data.catalog {
        case nil, "":
            guard FileManager.default.fileExists(atPath: data.dataDirectory) else {
                throw CLIError("there is no data directory at \(data.dataDirectory): give the one to copy with --data-dir DIR")
            }
            path = try DataDirectory(path: data.dataDirectory).catalogPath
        case let location? where location.contains("://"):
            let named = location.hasPrefix("postgres") ? "a PostgreSQL database" : "'\(location)'"
            throw CLIError("migrate-catalog copies a SQLite catalog, and --catalog (or HOARD_CATALOG) names \(named): "
                + "give the SQLite catalog with --data-dir DIR or --catalog PATH")
        case let location?:
            path = location
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError("there is no catalog at \(path): give the data directory to copy with --data-dir DIR, or the file with --catalog PATH")
        }
        return path
    }
}
