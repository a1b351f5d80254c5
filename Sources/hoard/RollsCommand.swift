import ArgumentParser
import Foundation
import HoardClient
import HoardCore

/// `hoard rolls verify SESSION`: recomputes every roll of a session from its revealed seed.
struct RollsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rolls", abstract: "Audit the dice a server rolled.", subcommands: [VerifyRollsCommand.self, BenchRollsCommand.self])
}

/// `hoard rolls bench`: how many formulas one core parses and rolls a second (Benchmarks/dice.sh).
struct BenchRollsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Parse and roll a formula COUNT times on one core; print the rate.", shouldDisplay: false)

    @Option(help: "The formula.") var formula = "4d6kh3"
    @Option(help: "How many times.") var count = 1_000_000

    func run() throws {
        let seed = DiceSeed.random()
        let clock = ContinuousClock()
        var checksum = 0
        let elapsed = try clock.measure {
            for index in 0..<count { checksum &+= try DiceFormula(formula).roll(seed: seed, index: UInt64(index)).total }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        Terminal.out("\(count) × \(formula) parsed and rolled in \(String(format: "%.3f", seconds)) s: "
            + "\(Int(Double(count) / seconds)) a second on one core (mean total \(String(format: "%.3f", Double(checksum) / Double(count))))")
    }
}

struct VerifyRollsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Recompute every roll of a session from its revealed seed; exit 1 on any mismatch.",
        discussion: """
            The seed must hash to the commitment the session published before its first roll, and every rolled event \
            must be exactly what its formula rolls as its index under that seed. With --server the dice are fetched \
            with a member's token (also after the session ended); without, they are read from the data directory.
            """
    )

    @Argument(help: ArgumentHelp("The session's id.", valueName: "SESSION"))
    var session: String

    @Option(help: ArgumentHelp("The server, e.g. http://nas.local:8080 (default: the data directory's catalog).", valueName: "URL"))
    var server: String?

    @OptionGroup var access: ServerAccess

    @OptionGroup var data: DataOptions

    func run() async throws {
        let dice: SessionDice
        if let server {
            let client = try access.client(server)
            do {
                dice = try await client.dice(session: session)
            } catch {
                throw CLIError("cannot read the dice of session \(session): \(error)")
            }
        } else {
            let catalog = try await data.open().catalog
            guard let seal = try catalog.diceSeal(session: session) else { throw CLIError("no session \(session) has dice in \(data.dataDirectory)") }
            let rolls = try catalog.diceRolls(session: session).map { try JSONValue(parsing: Data($0.utf8)) }
            dice = SessionDice(
                session: session, commitment: seal.seed.commitment, seed: seal.isRevealed ? seal.seed.description : nil, rolls: rolls)
        }
        let mismatches = dice.audit()
        Terminal.out("session \(session): \(dice.rolls.count) roll(s), commitment \(dice.commitment)")
        guard mismatches.isEmpty else {
            for mismatch in mismatches { Terminal.err("MISMATCH \(mismatch)") }
            throw ExitCode(1)
        }
        Terminal.out("every roll matches the seed \(dice.seed ?? "")")
    }
}
