import ArgumentParser
import Foundation
import HoardCore
import HoardRepository

struct PacksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "packs", abstract: "List every pack with its current version.")
        @OptionGroup var data: DataOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let catalog = try await data.open().catalog
            let packs = try catalog.packs()
            if json { return Terminal.out(try JSONOutput.encode(packs)) }
            if packs.isEmpty { return Terminal.out("No packs yet. Import one with: hoard import PACK.zip --data-dir \(data.dataDirectory)") }
            var rows = [["PACK", "VERSION", "GROUP", "ASSETS", "SIZE", "PUBLIC", "DOCUMENTS"]]
            for pack in packs {
                let documents = try catalog.documents(ofPack: pack.name, group: pack.group).map(\.name).joined(separator: ", ")
                rows.append([pack.name, pack.version ?? "-", pack.group, String(pack.assetCount),
                             ByteFormat.string(pack.totalBytes), pack.isPublic ? "yes" : "no", documents.isEmpty ? "-" : documents])
            }
            Terminal.out(Table.render(rows))
    }
}

struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a pack and its versions; `hoard gc` then frees the blobs nothing else uses.")
    @OptionGroup var data: DataOptions
    @Argument(help: "The pack's name.") var name: String
    @Option(help: "The group that owns it (needed when several groups have a pack of that name).") var group: String?

    func run() async throws {
        data.sayWhere()
        // Several groups with a pack of that name: the catalog's error asks for the group (--group).
        guard try await data.open().catalog.deletePack(named: name, group: group) else {
            throw CLIError("no pack named '\(name)'" + (group.map { " in group '\($0)'" } ?? ""))
        }
        Terminal.out("Deleted pack \(name). Run `hoard gc` to free its blobs.")
    }
}

struct AssetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assets", abstract: "List assets of the current versions of packs.")
    @OptionGroup var data: DataOptions
    @Option(help: "Only this pack.") var pack: String?
    @Option(help: "Only this kind (token, object, texture, wall, background, or a plugin's).") var kind: String?
    @Flag(help: "Print JSON (shape: Schemas/asset-listing.schema.json).") var json = false

    func run() async throws {
        let assets = try await data.open().catalog.assets(pack: pack, kind: kind.map { AssetKind(rawValue: $0.lowercased()) })
        if json { return Terminal.out(try JSONOutput.encode(assets)) }
        var rows = [["PACK", "KIND", "NAME", "TILES", "VARIANTS", "DIGEST"]]
        for asset in assets {
            let variants = asset.variants.map { "@\($0.scale)x \($0.width)×\($0.height)" }.joined(separator: ", ")
            rows.append([asset.pack, asset.kind.rawValue, asset.name, asset.footprint.description, variants,
                         String(asset.digest.description.prefix(19)) + "…"])
        }
        Terminal.out(Table.render(rows))
        Terminal.out("\(assets.count) asset\(assets.count == 1 ? "" : "s")")
    }
}

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Re-hash every blob and check every catalog row points at one.",
        discussion: "Exit status 0 when the store is consistent, 1 when a blob is missing, corrupt, unreadable or of the wrong size.")
    @OptionGroup var data: DataOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let bar = ProgressBar(label: "verify")
        let report = try await data.open().verify { done, total in bar.update(done: Int64(done), total: Int64(total), unit: .count) }
        bar.finish()
        if json {
            Terminal.out(try JSONOutput.encode(report))
        } else {
            Terminal.out("Checked \(report.blobsChecked) blobs (\(ByteFormat.string(report.bytesChecked))).")
            let findings = [
                ("missing", report.missing), ("corrupt", report.corrupt), ("wrong size", report.wrongSize),
                ("unreadable", report.unreadable), ("referenced without a blob row", report.dangling),
            ]
            for (label, digests) in findings where !digests.isEmpty {
                Terminal.out("  \(digests.count) \(label):")
                for digest in digests.prefix(20) { Terminal.out("    \(digest)") }
            }
            if report.unreferenced > 0 { Terminal.out("  \(report.unreferenced) unreferenced blobs (run `hoard gc` to remove them)") }
            Terminal.out(report.isHealthy ? "OK: every blob matches its digest." : "PROBLEMS FOUND: see OPERATIONS.md, \"When verify complains\".")
        }
        if !report.isHealthy { throw ExitCode(1) }
    }
}

struct GCCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Remove blobs no pack references.",
        discussion: "Waits for running imports to finish, and keeps unreferenced blobs younger than the grace period.")
    @OptionGroup var data: DataOptions
    @Option(help: "Keep unreferenced blobs younger than this many seconds.") var grace: Double = 3600
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        data.sayWhere()
        let report = try await data.open().collectGarbage(grace: grace)
        if json { return Terminal.out(try JSONOutput.encode(report)) }
        Terminal.out("Removed \(report.deletedBlobs) blobs (\(ByteFormat.string(report.deletedBytes)))"
            + (report.keptYoung > 0 ? "; kept \(report.keptYoung) younger than \(Int(grace)) s" : "") + ".")
    }
}

struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent copy of the catalog and every blob it references to a new folder (safe while serving).")
    @OptionGroup var data: DataOptions
    @Argument(help: "A folder that does not exist yet.") var destination: String

    func run() async throws {
        let report = try await data.open().backup(to: destination)
        Terminal.out("Backed up \(report.blobs) blobs (\(ByteFormat.string(report.bytes))) to \(report.path). Check it with: hoard verify --data-dir \(report.path)")
    }
}

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Restore a backup into a new or empty data directory, then verify it.")
    @OptionGroup var data: DataOptions
    @Argument(help: "The backup folder.") var backup: String

    func run() async throws {
        data.sayWhere()
        let report = try await Hoard.restore(from: backup, into: data.dataDirectory)
        let verified = try await data.open().verify()
        Terminal.out("Restored \(report.blobs) blobs (\(ByteFormat.string(report.bytes))) into \(report.path); verify: "
            + (verified.isHealthy ? "OK" : "PROBLEMS FOUND, run hoard verify"))
        if !verified.isHealthy { throw ExitCode(1) }
    }
}
