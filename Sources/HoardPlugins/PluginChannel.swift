import CHoardSystem
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One out-of-process plugin's child process, spoken to in JSON lines over its stdin and stdout: a handshake when it
/// starts, then one request line and one answer line per call, one call at a time.
///
/// A call that takes longer than the manifest's limit kills the process; so does an answer that is not a protocol
/// line. The next call starts a fresh process (restart after a crash). After ``maxFailures`` failures in a row the
/// plugin is disabled until Hoard restarts. The process gets the plugin folder as its working directory, a minimal
/// environment and nothing of the store: it sees only what a request carries.
public final class PluginChannel: @unchecked Sendable {
    /// The plugin's manifest.
    public let manifest: PluginManifest
    /// The plugin's folder.
    public let folder: String
    /// Failures in a row that disable the plugin.
    public static let maxFailures = 5
    /// The longest answer line accepted.
    static let maxLineBytes = 64 << 20

    private let lock = NSLock()
    private var running: Running?
    private var nextID = 0
    private var failures = 0

    /// A started process and the thread that reads its lines.
    private final class Running: @unchecked Sendable {
        let child: ChildProcess
        let lines = DispatchSemaphore(value: 0)
        let state = NSLock()
        var queue: [[UInt8]] = []
        var isClosed = false
        var isOverlong = false

        init(child: ChildProcess) {
            self.child = child
        }

        /// Reads lines from `fd` until it closes; each complete line is queued and signalled.
        func readLines(from fd: Int32) {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    state.withLock { queue.append(line) }
                    lines.signal()
                }
                if pending.count > PluginChannel.maxLineBytes {
                    state.withLock { isOverlong = true }
                    break
                }
            }
            state.withLock { isClosed = true }
            lines.signal()
        }

        /// The next line, waiting at most until `deadline`; nil with the reason otherwise.
        func nextLine(before deadline: DispatchTime) -> Result<[UInt8], PluginError> {
            while true {
                let taken: [UInt8]? = state.withLock { queue.isEmpty ? nil : queue.removeFirst() }
                if let taken { return .success(taken) }
                let (closed, overlong) = state.withLock { (isClosed, isOverlong) }
                if overlong { return .failure(PluginError(.garbage, "the plugin wrote a line over \(PluginChannel.maxLineBytes) bytes")) }
                if closed { return .failure(PluginError(.crashed, "the plugin's process ended")) }
                if lines.wait(timeout: deadline) == .timedOut {
                    return .failure(PluginError(.timeout, "the plugin did not answer in time"))
                }
            }
        }

        /// Kills the process and waits for it; only the first call signals it (after the wait its pid may be reused).
        func terminate() {
            try? child.input?.close()
            child.terminate(SIGKILL)
        }
    }

    /// A channel for the plugin in `folder`; nothing starts until the first call.
    public init(manifest: PluginManifest, folder: String) {
        self.manifest = manifest
        self.folder = folder
    }

    deinit { running?.terminate() }

    /// Sends one request and returns its `result` (JSON `null` gives nil). An `error` answer throws ``PluginAnswerError``
    /// through `answerError`; every protocol failure throws ``PluginError`` and restarts the process on the next call.
    public func call<Params: Encodable, Answer: Decodable>(_ method: String, _ params: Params, as: Answer.Type) throws
        -> PluginReply<Answer>
    {
        try lock.withLock {
            if failures >= Self.maxFailures {
                throw PluginError(.disabled, "plugin \(manifest.id) failed \(failures) times in a row and is disabled until Hoard restarts")
            }
            do {
                let process = try running ?? start()
                let reply = try exchange(process, method, params, as: Answer.self)
                failures = 0
                return reply
            } catch let error as PluginError {
                failures += 1
                running?.terminate()
                running = nil
                throw error
            }
        }
    }

    /// Stops the process, if any.
    public func stop() {
        lock.withLock {
            running?.terminate()
            running = nil
        }
    }

    private struct Request<Params: Encodable>: Encodable {
        var id: Int
        var method: String
        var params: Params
    }

    private struct Response<Answer: Decodable>: Decodable {
        var id: Int
        var result: Answer?
        var error: PluginReply<Answer>.Failure?
    }

    /// The handshake's answer.
    private struct Hello: Codable {
        var `protocol`: Int
        var id: String
        var version: String?
    }

    private func start() throws -> Running {
        let name = manifest.command[0]
        let executable = name.contains("/") && !name.hasPrefix("/") ? folder + "/" + name : name
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LANG": "C.UTF-8"]
        let child: ChildProcess
        do {
            child = try ChildProcess.start(
                [executable] + manifest.command.dropFirst(), environment: environment, directory: folder,
                input: .pipe, output: .pipe, errors: .discard)
        } catch let error as ChildProcess.LaunchError {
            throw PluginError(.handshake, "cannot start plugin \(manifest.id) (\(manifest.command.joined(separator: " ")))",
                              cause: error.reason)
        }
        let running = Running(child: child)
        guard let output = child.output else { preconditionFailure("the plugin's output is a pipe") }
        let reader = Thread {
            running.readLines(from: output.fileDescriptor)
            try? output.close()
        }
        reader.stackSize = 1 << 20
        reader.start()
        self.running = running
        let hello = try exchange(running, "hello", ["protocol": PluginManifest.protocolVersion], as: Hello.self)
        guard case .answer(let answer?) = hello, answer.protocol == PluginManifest.protocolVersion, answer.id == manifest.id else {
            throw PluginError(
                .handshake, "plugin \(manifest.id) did not answer the handshake with protocol \(PluginManifest.protocolVersion) and its id")
        }
        return running
    }

    private func exchange<Params: Encodable, Answer: Decodable>(
        _ running: Running, _ method: String, _ params: Params, as: Answer.Type
    ) throws -> PluginReply<Answer> {
        nextID += 1
        var line = try JSONEncoder().encode(Request(id: nextID, method: method, params: params))
        line.append(0x0A)
        do {
            try running.child.input?.write(contentsOf: line)
        } catch {
            throw PluginError(.crashed, "plugin \(manifest.id) closed its input", cause: "\(error)")
        }
        let deadline = DispatchTime.now() + manifest.timeout
        let answer: [UInt8]
        switch running.nextLine(before: deadline) {
        case .success(let bytes): answer = bytes
        case .failure(let error):
            throw PluginError(error.code, "plugin \(manifest.id), \(method): \(error.message)"
                + (error.code == .timeout ? " (\(manifest.timeout) s); it was stopped" : ""))
        }
        let response: Response<Answer>
        do {
            response = try JSONDecoder().decode(Response<Answer>.self, from: Data(answer))
        } catch {
            throw PluginError(.garbage, "plugin \(manifest.id), \(method): the answer is not a protocol line", cause: "\(error)")
        }
        guard response.id == nextID else {
            throw PluginError(.garbage, "plugin \(manifest.id), \(method): the answer is for request \(response.id), not \(nextID)")
        }
        if let failure = response.error { return .failure(failure) }
        return .answer(response.result)
    }
}
