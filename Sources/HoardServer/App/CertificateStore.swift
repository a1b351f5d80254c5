import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import ServiceLifecycle
import UnixSignals

/// The server's TLS certificate and key, read from PEM files and read again when they change (``reload(force:)``):
/// every new connection takes the context current at its start, so a renewed certificate serves without a restart
/// while connections already open keep theirs.
public final class CertificateStore: Sendable {
    /// The certificate chain's PEM file (leaf first, as ACME clients write `fullchain.pem`).
    public let certificatePath: String
    /// The private key's PEM file.
    public let keyPath: String

    private struct Loaded {
        var context: NIOSSLContext
        var stamp: [FileStamp]
        var leaf: String
    }

    /// What tells a changed file: ACME clients write new files and move links, so the inode changes too.
    private struct FileStamp: Equatable {
        var inode: UInt64
        var size: Int64
        var modified: Int64

        init(_ path: String) throws {
            var info = stat()
            guard stat(path, &info) == 0 else {
                throw CertificateError("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            #if os(Linux)
            modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            #else
            modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
            #endif
        }
    }

    private let loaded: NIOLockedValueBox<Loaded>

    /// Reads both files; throws ``CertificateError`` saying which one is wrong.
    public init(certificatePath: String, keyPath: String) throws {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        loaded = NIOLockedValueBox(try Self.load(certificatePath: certificatePath, keyPath: keyPath))
    }

    /// The leaf certificate now served (serial number and common name).
    public var leaf: String { loaded.withLockedValue { $0.leaf } }

    /// A handler for a new connection, with the context current now.
    func serverHandler() -> NIOSSLServerHandler {
        NIOSSLServerHandler(context: loaded.withLockedValue { $0.context })
    }

    /// Reads the files again if they changed since they were read (always with `force`); true when the served
    /// certificate is now theirs. A pair that does not load leaves the current one served and throws.
    @discardableResult
    public func reload(force: Bool = false) throws -> Bool {
        let stamp = try [FileStamp(certificatePath), FileStamp(keyPath)]
        guard force || loaded.withLockedValue({ $0.stamp != stamp }) else { return false }
        let fresh = try Self.load(certificatePath: certificatePath, keyPath: keyPath)
        loaded.withLockedValue { $0 = fresh }
        return true
    }

    private static func load(certificatePath: String, keyPath: String) throws -> Loaded {
        let stamp = try [FileStamp(certificatePath), FileStamp(keyPath)]
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw CertificateError("\(certificatePath) is not a PEM certificate chain (\(error))")
        }
        guard let first = chain.first else { throw CertificateError("\(certificatePath) holds no certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw CertificateError("\(keyPath) is not a PEM private key (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.applicationProtocols = ["http/1.1"]
        do {
            return Loaded(context: try NIOSSLContext(configuration: configuration), stamp: stamp, leaf: first.description)
        } catch {
            throw CertificateError("\(keyPath) does not go with \(certificatePath), or they cannot be used (\(error))")
        }
    }
}

/// A certificate or key that cannot be served, and which file is to blame.
public struct CertificateError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Reloads a ``CertificateStore`` on SIGHUP (what an ACME client's deploy hook sends) and when its files change
/// (checked every `interval`), logging each reload and each failed one.
struct CertificateReloadService: Service {
    let store: CertificateStore
    /// How often the files are checked; nil for SIGHUP only.
    let interval: Duration?
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await _ in signals { reload(force: true, reason: "SIGHUP") }
                }
                if let interval {
                    group.addTask {
                        while (try? await Task.sleep(for: interval)) != nil { reload(force: false, reason: "its files changed") }
                    }
                }
            }
        }
    }

    private func reload(force: Bool, reason: String) {
        do {
            if try store.reload(force: force) {
                logger.info("TLS certificate reloaded", metadata: ["reason": "\(reason)", "certificate": "\(store.leaf)"])
            }
        } catch {
            logger.error("TLS certificate not reloaded; the previous one is still served", metadata: [
                "reason": "\(reason)", "error": "\(error)",
            ])
        }
    }
}
