import CHoardSystem
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program Hoard started: the one way Hoard (its plugins) and its tests (their fixtures) start programs.
///
/// It is `posix_spawn` behind `hoard_spawn`, not Foundation's `Process`, whose `run()` was seen to crash inside its
/// own `memcpy` while tests launched programs from several threads. The child gets exactly the standard streams asked
/// for and no other descriptor of this process. A child must be waited for (``wait()``, ``terminate(_:)`` or
/// ``run(_:input:environment:directory:)``); the descriptors this value holds close when it is released.
public final class ChildProcess: @unchecked Sendable {
    /// What a child's standard stream is connected to.
    public enum Stream: Sendable {
        /// A pipe to this process: ``input``, ``output`` or ``errors``.
        case pipe
        /// /dev/null.
        case discard
        /// This process's own stream.
        case inherit
    }

    /// What ``run(_:input:environment:directory:)`` returns: how the child ended and all it wrote.
    public struct Outcome: Sendable {
        /// The exit status; 128 + the signal's number for a child killed by a signal.
        public var status: Int32
        /// Its standard output.
        public var output: Data
        /// Its standard errors.
        public var errors: Data
        /// The output as UTF-8 text.
        public var outputText: String { String(decoding: output, as: UTF8.self) }
        /// The errors as UTF-8 text.
        public var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    /// Why a program could not be started.
    public struct LaunchError: Error, CustomStringConvertible {
        /// What was to be started.
        public var command: [String]
        /// The system's reason.
        public var reason: String
        public var description: String { "cannot start \(command.joined(separator: " ")): \(reason)" }
    }

    /// The child's process id.
    public let pid: pid_t
    /// The write end of its standard input, for ``Stream/pipe``.
    public let input: FileHandle?
    /// The read end of its standard output, for ``Stream/pipe``.
    public let output: FileHandle?
    /// The read end of its standard errors, for ``Stream/pipe``.
    public let errors: FileHandle?
    private let state = NSLock()
    private var exitStatus: Int32?

    private init(pid: pid_t, input: FileHandle?, output: FileHandle?, errors: FileHandle?) {
        self.pid = pid
        self.input = input
        self.output = output
        self.errors = errors
    }

    /// Starts `command` (its first element is a path, or a name looked up on `environment`'s `PATH`) in `directory`
    /// (nil: this process's) with `environment` (nil: this process's).
    public static func start(
        _ command: [String], environment: [String: String]? = nil, directory: String? = nil,
        input: Stream = .discard, output: Stream = .inherit, errors: Stream = .inherit
    ) throws -> ChildProcess {
        guard let name = command.first, !name.isEmpty else { throw LaunchError(command: command, reason: "no program named") }
        let variables = environment ?? ProcessInfo.processInfo.environment
        guard let executable = locate(name, path: variables["PATH"] ?? "/usr/local/bin:/usr/bin:/bin") else {
            throw LaunchError(command: command, reason: "\(name) was not found on PATH")
        }
        var made: [Int32] = []
        /// A pipe when `stream` asks for one; on failure every pipe made so far is closed.
        func pipeEnds(for stream: Stream) throws -> (read: Int32, write: Int32)? {
            guard stream == .pipe else { return nil }
            var pair: [Int32] = [-1, -1]
            guard pipe(&pair) == 0 else {
                let reason = String(cString: strerror(errno))
                made.forEach { close($0) }
                throw LaunchError(command: command, reason: reason)
            }
            // Both ends close on exec; the child gets only the copy `hoard_spawn` makes its standard stream.
            for fd in pair { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            made += pair
            return (pair[0], pair[1])
        }
        func descriptor(_ stream: Stream) -> Int32 { stream == .discard ? HOARD_SPAWN_NULL : HOARD_SPAWN_INHERIT }
        // Writing to a child that has ended must fail with EPIPE, not kill this process with SIGPIPE.
        if input == .pipe { _ = ignoreBrokenPipes }
        let stdin = try pipeEnds(for: input)
        let stdout = try pipeEnds(for: output)
        let stderr = try pipeEnds(for: errors)
        let pid = withCStrings(command) { argv in
            withCStrings(variables.map { "\($0.key)=\($0.value)" }) { envp in
                hoard_spawn(
                    executable, argv, envp, directory, stdin?.read ?? descriptor(input),
                    stdout?.write ?? descriptor(output), stderr?.write ?? descriptor(errors))
            }
        }
        let spawnError = errno
        for fd in [stdin?.read, stdout?.write, stderr?.write].compactMap({ $0 }) { close(fd) }
        guard pid > 0 else {
            for fd in [stdin?.write, stdout?.read, stderr?.read].compactMap({ $0 }) { close(fd) }
            throw LaunchError(command: command, reason: String(cString: strerror(spawnError)))
        }
        func handle(_ fd: Int32?) -> FileHandle? { fd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) } }
        return ChildProcess(pid: pid_t(pid), input: handle(stdin?.write), output: handle(stdout?.read), errors: handle(stderr?.read))
    }

    /// Runs `command` to its end: writes `input` to its standard input (then closes it), collects its output and
    /// errors (read while it runs, so neither pipe can fill and stall it) and returns them with its status.
    public static func run(
        _ command: [String], input: Data? = nil, environment: [String: String]? = nil, directory: String? = nil
    ) throws -> Outcome {
        let child = try start(command, environment: environment, directory: directory, input: .pipe, output: .pipe, errors: .pipe)
        let collected = CollectedErrors()
        let reader = Thread { collected.set(child.errors?.readDataToEndOfFile() ?? Data()) }
        reader.start()
        if let input, let handle = child.input {
            // A child that exits without reading all its input: the write fails (SIGPIPE is ignored, see `start`).
            try? handle.write(contentsOf: input)
        }
        try? child.input?.close()
        let output = child.output?.readDataToEndOfFile() ?? Data()
        let status = child.wait()
        return Outcome(status: status, output: output, errors: collected.wait())
    }

    /// Waits for the child to end and returns its exit status (128 + the signal's number when a signal ended it).
    @discardableResult
    public func wait() -> Int32 {
        state.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            let ended = Self.exitStatus(of: status)
            exitStatus = ended
            return ended
        }
    }

    /// The child's exit status when it has ended (it is then waited for), nil while it runs; never blocks.
    public func endedStatus() -> Int32? {
        state.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            var waited: pid_t
            repeat { waited = waitpid(pid, &status, WNOHANG) } while waited < 0 && errno == EINTR
            guard waited == pid else { return nil }
            exitStatus = Self.exitStatus(of: status)
            return exitStatus
        }
    }

    /// A `waitpid` status as an exit status: the child's own, or 128 + the signal's number when a signal ended it.
    private static func exitStatus(of status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Sends `signal` (SIGTERM by default) unless the child was already waited for, then waits for it.
    @discardableResult
    public func terminate(_ signal: Int32 = SIGTERM) -> Int32 {
        // Until it is waited for, an ended child keeps its pid, so the signal cannot reach another process.
        if state.withLock({ exitStatus == nil }) { _ = kill(pid, signal) }
        return wait()
    }

    /// Signals the child without waiting.
    public func send(_ signal: Int32) {
        if state.withLock({ exitStatus == nil }) { _ = kill(pid, signal) }
    }

    /// SIGPIPE ignored for the whole process, once: a write to a pipe whose reader is gone then fails with EPIPE.
    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// `name` itself when it holds a slash, else the first executable file of that name in `path`'s folders.
    static func locate(_ name: String, path: String) -> String? {
        if name.contains("/") { return name }
        return path.split(separator: ":").lazy.map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// The standard errors a reader thread collects while the caller reads the output.
    private final class CollectedErrors: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data = Data()

        func set(_ data: Data) {
            self.data = data
            done.signal()
        }

        func wait() -> Data {
            done.wait()
            return data
        }
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings, valid during the call.
func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress else { preconditionFailure("the array holds at least its terminator") }
        return body(base)
    }
}
